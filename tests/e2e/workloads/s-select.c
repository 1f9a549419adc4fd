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
 * million (for enough CPU-time samples).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

volatile long sink;
static long noisy_spins = 2000000;

NOINLINE void leaf(int i)
{
	sink += i;
}

/* Spins a while: its self time is what excluding it moves to the caller. */
NOINLINE void noisy(void)
{
	for (int i = 0; i < 3; i++)
		leaf(i);
	for (long i = 0; i < noisy_spins; i++)
		sink += i;
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
	if (argc == 3 && !strcmp(argv[1], "noisy"))
		noisy_spins = strtol(argv[2], NULL, 10);
	setup();
	phase(1);
	phase(2);
	deep(8);
	sink += fib(10);
	printf("done\n");
	return 0;
}
