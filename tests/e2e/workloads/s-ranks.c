/*
 * s-ranks.c - one rank of a pretend parallel job, for callprof merge: rank
 * R (argv[1]) calls compute R + 1 times, and only rank 0 calls root_only.
 */
#include <stdlib.h>

#include "workload.h"

volatile long sink;

NOINLINE void exchange(int r)
{
	sink += r;
}

NOINLINE void compute(int r)
{
	for (int i = 0; i < 1000; i++)
		sink += i;
	exchange(r);
}

NOINLINE void reduce(void)
{
	sink++;
}

NOINLINE void root_only(void)
{
	reduce();
}

int main(int argc, char **argv)
{
	int rank = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 0;

	for (int i = 0; i <= rank; i++)
		compute(rank);
	if (rank == 0)
		root_only();
	reduce();
	return 0;
}
