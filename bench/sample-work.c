/*
 * sample-work.c - the workload of bench/sample: CPU-bound work that is not
 * instrumented, timing itself so that the cost sampling adds to the
 * program can be told apart from what `callprof record` spends around it.
 *
 *   sample-work loop|calls [N]
 *
 * loop: a dependent floating-point chain in one function (shallow stack);
 * calls: naive recursive fib (deep, changing stacks: more to copy and
 * unwind per sample).  Prints "cpu_ms wall_ms" of its own run on stdout:
 * getrusage(RUSAGE_SELF) user + system time, and CLOCK_MONOTONIC from
 * main's start to its end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

__attribute__((noinline)) static double chain(long n)
{
	double x = 1.0;

	for (long i = 0; i < n; i++)
		x = x * 1.0000001 + 0.5;
	return x;
}

__attribute__((noinline)) static long fib(int n)
{
	long r;

	if (n < 2)
		return n;
	r = fib(n - 1) + fib(n - 2);
	__asm__("" : "+r"(r)); /* no tail recursion: every call stays a call */
	return r;
}

static double ms(const struct timeval *tv)
{
	return tv->tv_sec * 1e3 + tv->tv_usec / 1e3;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int calls = argc > 1 && !strcmp(argv[1], "calls");
	long n = argc > 2 ? atol(argv[2]) : calls ? 40 : 300000000;
	double r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = calls ? (double)fib((int)n) : chain(n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "result %g\n", r);
	printf("%.1f %.1f\n", ms(&ru.ru_utime) + ms(&ru.ru_stime),
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	return 0;
}
