/*
 * s-change: one program whose argument N changes its call paths, for
 * `callprof diff` (N = 1 and 2 give these calls):
 *
 *   main -> steady -> leaf      1, 1 both times
 *   main -> work               N  (1 -> 2)
 *   main -> work -> leaf       3N (3 -> 6)
 *   main -> old -> leaf        only when N is 1 (gone)
 *   main -> fresh -> leaf      only when N is more (new)
 *   main -> busy               once; N times the work
 *
 * busy spends its time in burn(), uninstrumented and not inlined, so that
 * its self time grows with N and nothing else does noticeably: with N = 3
 * it does three times the work.  BUSY_ITERS makes N = 1 take some 10-30 ms
 * (as s-spin's SPIN_ITERS).
 */
#include <stdlib.h>
#include "workload.h"

#if defined(__clang__) && !defined(__OPTIMIZE__)
#define BUSY_ITERS 2000000L	/* clang -O0 keeps x in memory: 4x slower */
#else
#define BUSY_ITERS 6000000L
#endif

volatile long sink;

NOINSTR __attribute__((noinline)) static void burn(long n)
{
	unsigned long x = (unsigned long)sink | 1;

	for (long i = 0; i < n; i++) {	/* xorshift64: serial, cannot be folded */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = (long)x;
}

NOINLINE void leaf(int i)
{
	sink += i;
}

NOINLINE void steady(void)
{
	leaf(0);
}

NOINLINE void work(void)
{
	for (int i = 0; i < 3; i++)
		leaf(i);
}

NOINLINE void old(void)
{
	leaf(1);
}

NOINLINE void fresh(void)
{
	leaf(2);
}

NOINLINE void busy(long n)
{
	burn(n * BUSY_ITERS);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1;	/* atol is an inline function clang -O2 would instrument */

	steady();
	for (long i = 0; i < n; i++)
		work();
	if (n == 1)
		old();
	else
		fresh();
	busy(n);
	return 0;
}
