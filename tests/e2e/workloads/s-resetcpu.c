/*
 * s-resetcpu.c - CPU time before and after callprof_reset(): burn_before()
 * spins as long as burn_after(), 100 ms of the thread's CPU time each (some
 * 400 samples at the default rate, whatever the machine's speed), with a
 * reset between them.  In a sampled profile burn_before's samples must be
 * gone and burn_after's there.
 *
 *   t-resetcpu
 */
#include <stdio.h>
#include <time.h>
#include "../../../include/callprof.h"

static volatile double sink;

static inline __attribute__((always_inline, no_instrument_function)) long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* 100 ms of this thread's CPU time, inlined: the samples are its caller's own. */
static inline __attribute__((always_inline, no_instrument_function)) void burn(void)
{
	long long end = cpu_ns() + 100000000;

	for (long i = 1;; i++) {
		sink += (double)i * 0.5;
		if (!(i & 0xffff) && cpu_ns() >= end)
			break;
	}
}

__attribute__((noinline)) void burn_before(void)
{
	burn();
}

__attribute__((noinline)) void burn_after(void)
{
	burn();
}

int main(void)
{
	burn_before();
	callprof_reset();
	burn_after();
	printf("%s\n", sink > 0 ? "ok" : "?");
	return 0;
}
