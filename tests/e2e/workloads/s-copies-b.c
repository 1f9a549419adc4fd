/* s-copies-b.c - a copy of little_endian, and another static helper. */
#include "s-copies.h"

__attribute__((noinline)) static unsigned helper(unsigned x)
{
	return x ^ 5u;
}

unsigned copies_b(int n)
{
	unsigned s = 0;

	for (int i = 0; i < n; i++)
		s += little_endian((unsigned)i) + helper((unsigned)i);
	return s;
}
