/*
 * x86.c - x86-64 instruction lengths and flow (x86.h).
 *
 * Each opcode has a class letter, from the opcode maps of the Intel SDM
 * volume 2 appendix A (64-bit mode):
 *   m ModRM         b ModRM + imm8     z ModRM + imm16/32  g ModRM + imm as /reg (F6, F7)
 *   n nothing       i imm8             Z imm16/32          w imm16         e imm16 + imm8
 *   v imm16/32/64 (B8+r, by REX.W)     o moffs (A0-A3)     r rel8          R rel32
 *   p a prefix      3 0F 38 escape     4 0F 3A escape      x not known
 */
#include <string.h>

#include "util/x86.h"

static const char map1[257] =
	/*      0123456789abcdef */
	/* 0 */ "mmmmiZxxmmmmiZxx"
	/* 1 */ "mmmmiZxxmmmmiZxx"
	/* 2 */ "mmmmiZpxmmmmiZpx"
	/* 3 */ "mmmmiZpxmmmmiZpx"
	/* 4 */ "pppppppppppppppp"
	/* 5 */ "nnnnnnnnnnnnnnnn"
	/* 6 */ "xxxmppppZzibnnnn"
	/* 7 */ "rrrrrrrrrrrrrrrr"
	/* 8 */ "bzxbmmmmmmmmmmmm"
	/* 9 */ "nnnnnnnnnnxnnnnn"
	/* a */ "oooonnnniZnnnnnn"
	/* b */ "iiiiiiiivvvvvvvv"
	/* c */ "bbwnxxbzenwnnixn"
	/* d */ "mmmmxxxnmmmmmmmm"
	/* e */ "rrrriiiiRRxrnnnn"
	/* f */ "pnppnnggnnnnnnmm";

static const char map0f[257] =
	/*      0123456789abcdef */
	/* 0 */ "mmmmxnnnnnxnxmnx"
	/* 1 */ "mmmmmmmmmmmmmmmm"
	/* 2 */ "mmmmxxxxmmmmmmmm"
	/* 3 */ "nnnnnnnn3x4xxxxx"
	/* 4 */ "mmmmmmmmmmmmmmmm"
	/* 5 */ "mmmmmmmmmmmmmmmm"
	/* 6 */ "mmmmmmmmmmmmmmmm"
	/* 7 */ "bbbbmmmnmmxxmmmm"
	/* 8 */ "RRRRRRRRRRRRRRRR"
	/* 9 */ "mmmmmmmmmmmmmmmm"
	/* a */ "nnnmbmxxnnnmbmmm"
	/* b */ "mmmmmmmmmmbmmmmm"
	/* c */ "mmbmbbbmnnnnnnnn"
	/* d */ "mmmmmmmmmmmmmmmm"
	/* e */ "mmmmmmmmmmmmmmmm"
	/* f */ "mmmmmmmmmmmmmmmm";

/* Bytes of the ModRM byte at p and what follows it (SIB, displacement); 0 past end. */
static unsigned modrm_len(const unsigned char *p, const unsigned char *end, int32_t *disp)
{
	unsigned mod, rm, n = 1;

	if (p >= end)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod != 3 && rm == 4) {
		if (p + 1 >= end)
			return 0;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		n += 4;
	if (p + n > end)
		return 0;
	if (disp && mod == 0 && rm == 5)
		memcpy(disp, p + 1, 4);
	return n;
}

unsigned cp_x86__decode(const unsigned char *code, size_t len, uint64_t addr,
			struct cp_x86_insn *i)
{
	const unsigned char *p = code, *end = code + len, *modrm = NULL;
	int opsize16 = 0, addr32 = 0, rexw = 0, map = 1;
	unsigned op, n = 0, imm = 0;
	int32_t disp = 0;
	char c;

	memset(i, 0, sizeof(*i));
	/* Legacy prefixes, then at most one REX, which must come last. */
	for (;; p++) {
		if (p >= end || p - code > 14)
			return 0;
		if (*p == 0x66)
			opsize16 = 1;
		else if (*p == 0x67)
			addr32 = 1;
		else if (!(*p == 0xf0 || *p == 0xf2 || *p == 0xf3 || *p == 0x2e || *p == 0x36 ||
			   *p == 0x3e || *p == 0x26 || *p == 0x64 || *p == 0x65))
			break;
	}
	if ((*p & 0xf0) == 0x40) {
		rexw = (*p & 8) != 0;
		if (++p >= end)
			return 0;
	}
	op = *p++;
	c = map1[op];
	if (op == 0x0f) {
		if (p >= end)
			return 0;
		op = *p++;
		map = 2;
		c = map0f[op];
		if (c == '3' || c == '4') {
			if (p >= end)
				return 0;
			p++; /* the third opcode byte */
			c = c == '3' ? 'm' : 'b';
			map = 3;
		}
	}
	switch (c) {
	case 'n':
		break;
	case 'i':
	case 'r':
		imm = 1;
		break;
	case 'w':
		imm = 2;
		break;
	case 'e':
		imm = 3;
		break;
	case 'Z':
		imm = opsize16 ? 2 : 4;
		break;
	case 'R':
		imm = 4;
		break;
	case 'v':
		imm = rexw ? 8 : opsize16 ? 2 : 4;
		break;
	case 'o':
		imm = addr32 ? 4 : 8;
		break;
	case 'm':
	case 'b':
	case 'z':
	case 'g':
		n = modrm_len(p, end, &disp);
		if (!n)
			return 0;
		modrm = p;
		if (c == 'b')
			imm = 1;
		else if (c == 'z')
			imm = opsize16 ? 2 : 4;
		else if (c == 'g' && ((p[0] >> 3) & 7) < 2)
			imm = op == 0xf6 ? 1 : opsize16 ? 2 : 4;
		p += n;
		break;
	default:
		return 0; /* not known, or a prefix where an opcode must be */
	}
	if (p + imm > end)
		return 0;
	i->len = (unsigned)(p + imm - code);
	/* What it does to the flow. */
	if (map == 1) {
		if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3))
			i->flow = CP_X86_JCC;
		else if (op == 0xe8)
			i->flow = CP_X86_CALL;
		else if (op == 0xe9 || op == 0xeb)
			i->flow = CP_X86_JMP;
		else if (op == 0xc2 || op == 0xc3 || op == 0xca || op == 0xcb)
			i->flow = CP_X86_RET;
		else if (op == 0xcc || op == 0xf4 || op == 0xcf || op == 0xf1)
			i->flow = CP_X86_STOP;
		else if (op == 0xcd)
			i->flow = CP_X86_SYSCALL;
		else if (op == 0xff) {
			unsigned reg = (*modrm >> 3) & 7;

			if (reg == 2 || reg == 3)
				i->flow = CP_X86_CALL;
			else if (reg == 4 || reg == 5)
				i->flow = CP_X86_JMP;
			/* call/jmp *disp32(%rip) */
			if ((reg == 2 || reg == 4) && (*modrm & 0xc7) == 0x05) {
				i->has_slot = 1;
				i->slot = addr + i->len + (int64_t)disp;
			}
		}
		if (op == 0xe8 || op == 0xe9 || op == 0xeb || i->flow == CP_X86_JCC) {
			int64_t rel;

			if (imm == 1)
				rel = (int8_t)code[i->len - 1];
			else {
				int32_t r32;

				memcpy(&r32, code + i->len - 4, 4);
				rel = r32;
			}
			i->has_target = 1;
			i->target = addr + i->len + (uint64_t)rel;
		}
	} else if (map == 2) {
		if (op >= 0x80 && op <= 0x8f) {
			int32_t r32;

			memcpy(&r32, code + i->len - 4, 4);
			i->flow = CP_X86_JCC;
			i->has_target = 1;
			i->target = addr + i->len + (uint64_t)(int64_t)r32;
		} else if (op == 0x05 || op == 0x34) {
			i->flow = CP_X86_SYSCALL;
		} else if (op == 0x07 || op == 0x35 || op == 0x0b || op == 0xb9 || op == 0xff) {
			i->flow = CP_X86_STOP;
		}
	}
	return i->len;
}
