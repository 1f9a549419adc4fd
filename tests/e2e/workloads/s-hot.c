/*
 * s-hot: a tight loop over a one-line function, the shape that makes the
 * hooks most of a run: main -> work -> bump (N calls, default 12 million;
 * an argument overrides N; a second is the exit status).  The overhead
 * verdict of record names bump.  Built with -DBUMP_INLINE, bump is a static
 * inline function that an optimizing compiler inlines into work.
 */
#include <stdlib.h>
#include "workload.h"

volatile long sink;

#ifdef BUMP_INLINE
static inline void bump(long i)
#else
NOINLINE void bump(long i)
#endif
{
	sink += i;
}

NOINLINE void work(long n)
{
	for (long i = 0; i < n; i++)
		bump(i);
}

int main(int argc, char **argv)
{
	work(argc > 1 ? atol(argv[1]) : 12000000L);
	return argc > 2 ? atoi(argv[2]) : 0;
}
