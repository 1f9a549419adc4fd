/*
 * s-callsites.c - one function called from three lines of one caller, and
 * a recursion from two call sites.  The program counts the calls of each
 * site itself and prints the counts, for the test to compare.  Keep the
 * line numbers in tests/e2e/t0270-call-sites.sh in step.
 *
 *	t-callsites [N [THREADS]]: fib(N) (default 10); THREADS more threads
 *	(one after the other) each call work() too
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int sink;
static long from_a, from_b;

__attribute__((noinline)) void leaf(int n)
{
	sink += n;
}

__attribute__((noinline)) long fib(int n)
{
	long a, b;

	if (n < 2)
		return n;
	from_a++;
	a = fib(n - 1); /* line 29: site A */
	from_b++;
	b = fib(n - 2); /* line 31: site B */
	return a + b;
}

__attribute__((noinline)) void work(void)
{
	leaf(1); /* line 37: once */
	for (int i = 0; i < 2; i++)
		leaf(2); /* line 39: twice */
	for (int i = 0; i < 3; i++)
		leaf(3); /* line 41: three times */
}

static void *thread(void *arg)
{
	work();
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	int threads = argc > 2 ? atoi(argv[2]) : 0;
	long r;

	for (int i = 0; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread, NULL) || pthread_join(t, NULL))
			return 1;
	}
	work();
	r = fib(n); /* line 63 */
	printf("fib(%d) = %ld, from A %ld, from B %ld, sink %d\n", n, r, from_a, from_b, sink);
	return 0;
}
