/*
 * x86.h - the length of an x86-64 instruction and what it does to the flow
 * of control: enough to follow straight-line code to its next call, jump
 * or return (callprof attach reads where a thread interrupted by a signal
 * stands in a function's prologue or epilogue, engine/attach-ptrace.c).
 *
 * Not a disassembler: operands are not decoded, only measured.  The
 * one-byte and 0F opcode maps of 64-bit mode with their ModRM, SIB,
 * displacement and immediate bytes, and the legacy and REX prefixes;
 * VEX/EVEX/XOP-encoded instructions, 3DNow! and the opcodes that are
 * invalid in 64-bit mode are not known (length 0): a walk stops there.
 */
#ifndef CP_UTIL_X86_H
#define CP_UTIL_X86_H

#include <stddef.h>
#include <stdint.h>

/* What an instruction does to the flow of control. */
enum cp_x86_flow {
	CP_X86_NEXT,	 /* goes on to the next instruction */
	CP_X86_CALL,	 /* call: rel32 (target set), or through memory (slot set, RIP-relative) */
	CP_X86_JMP,	 /* unconditional jump: as CP_X86_CALL */
	CP_X86_JCC,	 /* conditional jump or loop: either way */
	CP_X86_RET,	 /* return */
	CP_X86_SYSCALL,	 /* syscall, sysenter, int N */
	CP_X86_STOP,	 /* traps or halts: int3, ud2, hlt, iret */
};

struct cp_x86_insn {
	unsigned len;	      /* bytes */
	enum cp_x86_flow flow;
	int has_target;	      /* target is a relative branch's destination */
	int has_slot;	      /* slot is an indirect call's or jmp's RIP-relative memory operand */
	uint64_t target;      /* at address addr: the destination of a relative branch */
	uint64_t slot;	      /* where an indirect call or jmp reads its destination */
};

/*
 * Decode the instruction at code (len bytes readable, at address addr):
 * its length into i->len (and the rest of *i), or 0 when it is not one
 * known here or runs past len.
 */
unsigned cp_x86__decode(const unsigned char *code, size_t len, uint64_t addr,
			struct cp_x86_insn *i);

#endif /* CP_UTIL_X86_H */
