/*
 * cbpf.c - classic BPF, as seccomp accepts it (cbpf.h).
 */
#include <string.h>

#include "runtime/cbpf.h"

uint32_t cp_cbpf__run(const struct sock_filter *insns, uint32_t len,
		      const struct seccomp_data *d, uint32_t unknown, int *depends)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 }, words[sizeof(*d) / 4];

	memcpy(words, d, sizeof(words));
	for (uint32_t pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &insns[pc];
		uint32_t k = i->k, src = BPF_SRC(i->code) == BPF_X ? x : k, skip = 0;

		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (k >= sizeof(*d) || (k & 3))
				return SECCOMP_RET_KILL_PROCESS;
			if (unknown & (1u << (k / 4)))
				*depends = 1;
			a = words[k / 4];
			continue;
		case BPF_LD | BPF_W | BPF_LEN:
			a = sizeof(*d);
			continue;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = sizeof(*d);
			continue;
		case BPF_LD | BPF_IMM:
			a = k;
			continue;
		case BPF_LDX | BPF_IMM:
			x = k;
			continue;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return SECCOMP_RET_KILL_PROCESS;
			if (i->code == (BPF_LD | BPF_MEM))
				a = mem[k];
			else if (i->code == (BPF_LDX | BPF_MEM))
				x = mem[k];
			else
				mem[k] = i->code == BPF_ST ? a : x;
			continue;
		case BPF_MISC | BPF_TAX:
			x = a;
			continue;
		case BPF_MISC | BPF_TXA:
			a = x;
			continue;
		case BPF_RET | BPF_K:
			return k;
		case BPF_RET | BPF_A:
			return a;
		case BPF_JMP | BPF_JA:
			skip = k;
			break;
		default:
			break;
		}
		if (BPF_CLASS(i->code) == BPF_ALU) {
			switch (BPF_OP(i->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV: if (!src) return 0; a /= src; break;
			case BPF_MOD: if (!src) return 0; a %= src; break;
			case BPF_OR: a |= src; break;
			case BPF_AND: a &= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			continue;
		}
		if (BPF_CLASS(i->code) != BPF_JMP)
			return SECCOMP_RET_KILL_PROCESS;
		if (BPF_OP(i->code) != BPF_JA) {
			int cond;

			switch (BPF_OP(i->code)) {
			case BPF_JEQ: cond = a == src; break;
			case BPF_JGT: cond = a > src; break;
			case BPF_JGE: cond = a >= src; break;
			case BPF_JSET: cond = (a & src) != 0; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			skip = cond ? i->jt : i->jf;
		}
		if (skip >= len - pc - 1)
			return SECCOMP_RET_KILL_PROCESS;
		pc += skip;
	}
	return SECCOMP_RET_KILL_PROCESS; /* fell off the end: the kernel refuses that */
}
