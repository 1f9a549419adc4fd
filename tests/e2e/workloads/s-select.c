/*
 * s-select: a call tree for record-time selection (t0370).
 *
 *   main -> setup -> leaf (x5)                       outside every phase
 *   main -> phase (x2) -> helper (x10 per phase) -> leaf (x2 per helper)
 *                      -> noisy -> leaf (x3)  [and noisy spins]
 *   main -> deep(8) -> deep(7) -> ... -> deep(1)     a chain nine calls deep
 *   main -> fib(N)                                   the budget's target
 *
 * "fib N" as the only argument runs just main -> fib(N) (for --budget);
 * "noisy N" runs the program with noisy spinning N times instead of 2
 * million; "noisy Nms" with each call of noisy spinning for N ms of its
 * thread's CPU time (for a number of CPU-time samples that does not depend
 * on the machine's speed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

volatile long sink;
static long noisy_spins = 2000000;
static long long noisy_ns; /* spin for this much CPU time instead */

/* No hooks: the trees are those of the program's own calls. */
NOINSTR static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

NOINLINE void leaf(int i)
{
	sink += i;
}

/* Spins a while: its self time is what excluding it moves to the caller. */
NOINLINE void noisy(void)
{
	long long end = noisy_ns ? cpu_ns() + noisy_ns : 0;

	for (int i = 0; i < 3; i++)
		leaf(i);
	for (long i = 0; end || i < noisy_spins; i++) {
		sink += i;
		if (end && !(i & 0xffff) && cpu_ns() >= end)
			break;
	}
}

NOINLINE void helper(int n)
{
	leaf(n);
	leaf(n + 1);
}

NOINLINE void phase(int p)
{
	for (int i = 0; i < 10; i++)
		helper(p * 100 + i);
	noisy();
}

NOINLINE void setup(void)
{
	for (int i = 0; i < 5; i++)
		leaf(i);
}

NOINLINE void deep(int n)
{
	if (n > 0)
		deep(n - 1);
	sink += n;
}

NOINLINE long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "fib")) {
		sink += fib(atoi(argv[2]));
		return 0;
	}
	/* strtol, not atol: glibc's inline atol would get hooks of its own. */
	if (argc == 3 && !strcmp(argv[1], "noisy")) {
		char *unit;

		noisy_spins = strtol(argv[2], &unit, 10);
		if (!strcmp(unit, "ms"))
			noisy_ns = noisy_spins * 1000000LL;
	}
	setup();
	phase(1);
	phase(2);
	deep(8);
	sink += fib(10);
	printf("done\n");
	return 0;
}
