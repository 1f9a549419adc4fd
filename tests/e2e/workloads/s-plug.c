/*
 * s-plug.c - a plugin, built twice: -DWHICH=a gives plug_a() calling
 * a_inner(), -DWHICH=b gives plug_b() calling b_inner().  The two builds
 * have the same layout, so the loader tends to put the second where the
 * first was, once the first is unloaded.
 */
#include "workload.h"

#define CAT2(x, y) x##y
#define CAT(x, y) CAT2(x, y)

static volatile long plug_sink;

NOINLINE void CAT(WHICH, _inner)(int i)
{
	plug_sink += i;
}

NOINLINE void CAT(plug_, WHICH)(int n)
{
	for (int i = 0; i < n; i++)
		CAT(WHICH, _inner)(i);
}
