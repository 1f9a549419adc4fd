/*
 * s-inline.c - a function inlined into its caller (always, even at -O0):
 * its hooks get the caller's return address, so its call site is not
 * known and the report must say so rather than show the caller's.
 */
#include <stdio.h>

static volatile int sink;

static inline __attribute__((always_inline)) void small(int n)
{
	sink += n;
}

__attribute__((noinline)) void outer(void)
{
	small(1);
	small(2);
}

int main(void)
{
	outer();
	printf("%d\n", sink);
	return 0;
}
