/*
 * s-resetcpu.c - CPU time before and after callprof_reset(): burn_before()
 * spins about as long as burn_after(), with a reset between them.  In a
 * sampled profile burn_before's samples must be gone and burn_after's there.
 *
 *   t-resetcpu
 */
#include <stdio.h>

#include "../../../include/callprof.h"

static volatile double sink;

__attribute__((noinline)) void burn_before(void)
{
	for (long i = 0; i < 40000000; i++)
		sink += (double)i * 0.5;
}

__attribute__((noinline)) void burn_after(void)
{
	for (long i = 0; i < 40000000; i++)
		sink += (double)i * 0.5;
}

int main(void)
{
	burn_before();
	callprof_reset();
	burn_after();
	printf("%s\n", sink > 0 ? "ok" : "?");
	return 0;
}
