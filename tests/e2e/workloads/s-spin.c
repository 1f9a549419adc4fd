/*
 * s-spin: two siblings under one parent, spin4 doing four times the work of
 * spin1, so that their self times stand in a ratio of about 4:
 *
 *   main -> run -> spin1, spin4
 *
 * Both spend their time in burn(), one uninstrumented (hence invisible:
 * its time is its caller's self time) and not inlined function, so that
 * the two run the very same machine code: two copies of a loop can differ
 * in speed by 2x on one machine from their alignment alone.  The loop is a
 * serial xorshift chain that -O2 can neither vectorise nor fold.
 *
 * SPIN_ITERS makes spin1 take some 20-50 ms at -O0 and at -O2 (calibrated
 * on a 2-core test machine); the whole run stays under half a second.
 * An argument overrides the count (for calibration).
 *
 *   t-spin N P   each burns its work in P pieces, each followed by a call
 *                of tick(), which does nothing but run the hooks: in cpu
 *                mode they drain the thread's sample ring, which a stretch
 *                of over 0.2 s without a hook overflows.  Adds the paths
 *                main;run;spin1;tick and main;run;spin4;tick, P calls each.
 */
#include <stdlib.h>
#include "workload.h"

#if defined(__clang__) && !defined(__OPTIMIZE__)
#define SPIN_ITERS 4000000L	/* clang -O0 keeps x in memory: 4x slower */
#else
#define SPIN_ITERS 12000000L
#endif

volatile long sink;

__attribute__((noinline, no_instrument_function)) static void burn(long n)
{
	unsigned long x = (unsigned long)sink | 1;

	for (long i = 0; i < n; i++) {	/* xorshift64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = (long)x;
}

static long pieces = 1;

NOINLINE void tick(void)
{
	sink++;
}

/* Work n in the pieces asked for (P = 1: one call of burn, no tick). */
__attribute__((no_instrument_function)) static void burn_pieces(long n)
{
	if (pieces == 1) {
		burn(n);
		return;
	}
	for (long i = 0; i < pieces; i++) {
		burn(n / pieces);
		tick();
	}
}

NOINLINE void spin1(long n)
{
	burn_pieces(n);
}

NOINLINE void spin4(long n)
{
	burn_pieces(4 * n);
}

NOINLINE void run(long n)
{
	spin1(n);
	spin4(n);
}

int main(int argc, char **argv)
{
	/* strtol, not atol: glibc's inline atol would get hooks of its own. */
	if (argc > 2 && strtol(argv[2], NULL, 10) > 0)
		pieces = strtol(argv[2], NULL, 10);
	run(argc > 1 ? strtol(argv[1], NULL, 10) : SPIN_ITERS);
	return 0;
}
