/*
 * s-vdso: a hot loop over the clocks the vDSO serves (clock_gettime of
 * CLOCK_MONOTONIC and gettimeofday): most of the CPU time is the vDSO's
 * code, which has no file.  t0452 expects it named.
 *
 *   t-vdso [MS]   loop for about MS milliseconds of the process's CPU time
 *                 (default 300), by CPU time so that a loaded machine
 *                 changes nothing but how long it takes
 */
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include "workload.h"

volatile long sink;

NOINLINE void read_clocks(long n)
{
	struct timespec ts;
	struct timeval tv;

	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		gettimeofday(&tv, NULL);
		sink += ts.tv_nsec + tv.tv_usec;
	}
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 300;
	struct timespec t0, t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		read_clocks(20000);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
	return 0;
}
