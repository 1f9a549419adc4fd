/*
 * s-sled-tail.c - tail calls between sledded functions, mutual recursion
 * by tail calls, and recursion a million deep (t0535).
 *
 *   ./t-sled-tail [N [DEEP]]     (defaults 50 and 1000000)
 *
 * main() calls chain(i) N times: chain() -> tail_a() which ends in a
 * tail call of tail_b(), which ends in one of leaf_c().  At -O2 both
 * compilers make those calls jumps (the test checks with objdump); at -O0
 * they stay calls.  Then is_even(N): is_even() and is_odd() call each
 * other by tail calls N deep.  Then, in a thread with a 1 GB stack (so
 * that -O0 frames fit without raising ulimit -s), deep(DEEP) recurses
 * DEEP levels by real calls, and is_even(DEEP) DEEP levels by tail calls.
 * Prints the results and its counts.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define SLED_COUNT_MAIN
#include "s-sled-count.h"

volatile long sink;

NOINLINE long leaf_c(long x)
{
	COUNT("leaf_c");
	return x * 2 + sink;
}

NOINLINE long tail_b(long x)
{
	COUNT("tail_b");
	sink += x;
	return leaf_c(x + 1);
}

NOINLINE long tail_a(long x)
{
	COUNT("tail_a");
	sink += x;
	return tail_b(x + 1);
}

NOINLINE long chain(long x)
{
	COUNT("chain");
	long r = tail_a(x);
	sink++;
	return r;
}

NOINLINE int is_odd(long n);

NOINLINE int is_even(long n)
{
	COUNT("is_even");
	if (n == 0)
		return 1;
	return is_odd(n - 1);
}

NOINLINE int is_odd(long n)
{
	COUNT("is_odd");
	if (n == 0)
		return 0;
	return is_even(n - 1);
}

NOINLINE long deep(long n)
{
	COUNT("deep");
	if (n == 0)
		return 0;
	long r = deep(n - 1) + 1;
	sink += r;
	return r;
}

NOINLINE void *big_stack_thread(void *arg)
{
	long n = (long)arg;

	COUNT("big_stack_thread");
	printf("deep(%ld) = %ld\n", n, deep(n));
	printf("is_even(%ld) = %d\n", n, is_even(n));
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 50;
	long d = argc > 2 ? strtol(argv[2], NULL, 10) : 1000000;
	long sum = 0;
	pthread_attr_t attr;
	pthread_t t;

	COUNT("main");
	for (long i = 0; i < n; i++)
		sum += chain(i);
	printf("chain sum %ld\n", sum);
	printf("is_even(%ld) = %d\n", n, is_even(n));
	pthread_attr_init(&attr);
	if (pthread_attr_setstacksize(&attr, (size_t)1 << 30) ||
	    pthread_create(&t, &attr, big_stack_thread, (void *)d) || pthread_join(t, NULL))
		return 2;
	sled_count_print();
	return 0;
}
