/*
 * s-lib: an instrumented shared library (built by the test as libslib.so).
 *
 * slib_compute(n) calls slib_step n times; slib_apply(cb, n) calls back into
 * the executable n times.
 */
#include "workload.h"

NOINLINE static long slib_step(long x)
{
	return x * 3 + 1;
}

NOINLINE long slib_compute(int n)
{
	long x = 0;

	for (int i = 0; i < n; i++)
		x = slib_step(x);
	return x;
}

NOINLINE long slib_apply(long (*cb)(long), int n)
{
	long x = 0;

	for (int i = 0; i < n; i++)
		x += cb(i);
	return x;
}

#ifdef OTHER_BUILD
/* Only in "another build" of the library (t0260): a different build-id. */
NOINLINE long slib_other(void)
{
	return 7;
}
#endif
