/*
 * accuracy-work.c - the work of bench/accuracy: functions that do a known
 * amount of work, mixed with many tiny calls.  Compiled twice into one
 * program (accuracy-main.c drives it): with -finstrument-functions, the
 * functions callprof records; and without, with -DACCURACY_PLAIN, the same
 * functions named plain_*, whose time is the truth.  Both copies are the
 * same machine code but for the hooks.  The model is in
 * docs/internals/accuracy.md.
 *
 * The work is inlined into its caller and never instrumented.  Two kinds,
 * because an out-of-order core hides the hooks' cost behind one and not
 * the other:
 *
 *   alu()    six interleaved rotate/xor/add chains: throughput-bound, it
 *            keeps the ALUs busy, so the hooks' instructions add their time
 *   chain()  one multiply-xorshift chain: latency-bound, the core runs the
 *            hooks in the shadow of the multiplies and they cost little
 *
 *   work_a  A_CHUNKS chunks of B_ITERS alu steps, no calls: the control.
 *           Its raw self time is already right; it checks that the truth
 *           and the profile measure the same thing, and that compensation
 *           leaves it alone.
 *   work_b  B_CHUNKS chunks of B_ITERS alu steps, each followed by a call
 *           of tiny(): hook overhead is a large part of its raw self time
 *   work_c  the same with chunks half as long (C_ITERS): a larger part
 *   work_d  D_CHUNKS chunks of D_ITERS chain steps + tiny()
 *   mixed   the parent: small_calls calls of small(), with one work
 *           function (`which`: 0 for work_a ... 3 for work_d) called half
 *           way; its self time is almost all overhead (not checked)
 *
 * tiny() and small() are noinline and each do one store, to different
 * counters so that gcc's identical code folding cannot merge them.  The
 * tiny() call in the chunk loops is skipped when `with_calls` is 0, a
 * run-time flag, so the same machine code measures a work function with and
 * without its calls.
 */
#include <stdint.h>

#include "accuracy.h"

#ifdef ACCURACY_PLAIN
#define W(name) plain_##name
#else
#define W(name) name
#endif

#define NOINLINE __attribute__((noinline))
#define NOINSTR __attribute__((no_instrument_function))

static struct accuracy_sizes sz;	/* this run's sizes */
static int with_calls = 1;		/* 0: the chunk loops skip tiny() */
static unsigned long tiny_calls;	/* tiny() ran this often */
static unsigned long small_calls;	/* small() ran this often */

NOINSTR void W(accuracy_setup)(const struct accuracy_sizes *s)
{
	sz = *s;
}

NOINSTR void W(accuracy_with_calls)(int on)
{
	with_calls = on;
}

NOINSTR unsigned long W(accuracy_tiny_calls)(void)
{
	return tiny_calls;
}

NOINSTR unsigned long W(accuracy_small_calls)(void)
{
	return small_calls;
}

/*
 * N steps of six independent rotate/xor/add chains, about 1 ns each: the
 * chains ask for more than the ALUs give, so this is throughput-bound.  The
 * steps are unrolled (N is a constant at each use), so no loop branch can
 * mispredict, and the state lives in the caller across chunks, so the
 * chains never drain: a chunk boundary is no pause the hooks could hide in.
 */
struct alu_state {
	uint64_t v[6];	/* the six chains */
};

static inline NOINSTR __attribute__((always_inline)) void alu(struct alu_state *s, int n)
{
	uint64_t a = s->v[0], b = s->v[1], c = s->v[2], d = s->v[3], e = s->v[4], f = s->v[5];

#pragma GCC unroll 64
	for (int i = 0; i < n; i++) {
		a = (a << 7 | a >> 57) ^ b;
		b += c;
		c = (c << 13 | c >> 51) ^ d;
		d += e;
		e = (e << 29 | e >> 35) ^ f;
		f += a;
		/* keep the chains apart: no vectorising, no reassociation */
		__asm__("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
	}
	*s = (struct alu_state){ { a, b, c, d, e, f } };
}

static inline NOINSTR __attribute__((always_inline)) struct alu_state alu_start(uint64_t x)
{
	return (struct alu_state){ { x, x + 1, x + 2, x + 3, x + 4, x + 5 } };
}

static inline NOINSTR __attribute__((always_inline)) uint64_t alu_end(struct alu_state *s)
{
	return s->v[0] ^ s->v[1] ^ s->v[2] ^ s->v[3] ^ s->v[4] ^ s->v[5];
}

/* N dependent multiply-xorshift steps, about 1.8 ns each. */
static inline NOINSTR __attribute__((always_inline)) uint64_t chain(uint64_t x, long n)
{
	for (long i = 0; i < n; i++) {
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ull;
	}
	return x;
}

NOINLINE void W(tiny)(void)
{
	tiny_calls++;
}

NOINLINE void W(small)(void)
{
	small_calls++;
}

NOINLINE uint64_t W(work_a)(uint64_t x)
{
	struct alu_state s = alu_start(x);
	long n = sz.a_chunks;

	for (long c = 0; c < n; c++)
		alu(&s, B_ITERS);
	return alu_end(&s);
}

NOINLINE uint64_t W(work_b)(uint64_t x)
{
	struct alu_state s = alu_start(x);
	long n = sz.b_chunks;

	for (long c = 0; c < n; c++) {
		alu(&s, B_ITERS);
		if (with_calls)
			W(tiny)();
	}
	return alu_end(&s);
}

NOINLINE uint64_t W(work_c)(uint64_t x)
{
	struct alu_state s = alu_start(x);
	long n = sz.c_chunks;

	for (long c = 0; c < n; c++) {
		alu(&s, C_ITERS);
		if (with_calls)
			W(tiny)();
	}
	return alu_end(&s);
}

NOINLINE uint64_t W(work_d)(uint64_t x)
{
	long n = sz.d_chunks;

	for (long c = 0; c < n; c++) {
		x = chain(x, D_ITERS);
		if (with_calls)
			W(tiny)();
	}
	return x;
}

NOINLINE uint64_t W(mixed)(uint64_t x, int which)
{
	long n = sz.small_calls;

	for (long i = 0; i < n; i++) {
		if (i == n / 2) {
			switch (which) {
			case 0:
				x = W(work_a)(x);
				break;
			case 1:
				x = W(work_b)(x);
				break;
			case 2:
				x = W(work_c)(x);
				break;
			default:
				x = W(work_d)(x);
				break;
			}
		}
		W(small)();
	}
	return x;
}
