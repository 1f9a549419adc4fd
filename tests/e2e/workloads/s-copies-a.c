/* s-copies-a.c - a copy of little_endian, and a static helper of its own. */
#include "s-copies.h"

__attribute__((noinline)) static unsigned helper(unsigned x)
{
	return x * 3u;
}

unsigned copies_a(int n)
{
	unsigned s = 0;

	for (int i = 0; i < n; i++)
		s += little_endian((unsigned)i) + helper((unsigned)i);
	return s;
}
