/*
 * fib.c - the benchmark workload: naive recursive fib(n), n from argv[1]
 * (default 32).  Nearly all of its time is calls, so the cost a profiler
 * adds per call shows plainly: fib(n) makes 2*F(n+1)-1 calls (F(1) = F(2)
 * = 1), about 7 million for n = 32 and 30 million for n = 35.  fib is
 * noinline so every call is a real call with its enter/exit hooks, and the
 * result is printed so nothing is optimised away.  bench/run builds it with
 * and without -finstrument-functions.
 *
 * Without the instrumentation, -O2 (gcc's tail recursion pass, LLVM's
 * TailRecursionElimination) would turn fib(n - 2) into a loop with an
 * accumulator and the plain build would make half the calls; the empty asm
 * takes the sum out of tail position so both builds make the same calls.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long fib(int n)
{
	long r;

	if (n < 2)
		return n;
	r = fib(n - 1) + fib(n - 2);
	__asm__("" : "+r"(r));
	return r;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 32;

	printf("%ld\n", fib(n));
	return 0;
}
