/*
 * s-libcalls-lib: an instrumented shared library that calls libc (t0350,
 * built as libslc.so and linked into s-libcalls.c with -DWITH_LIB).
 *
 *   lc_lib_len(s, n) -> strlen (x n)
 */
#include <string.h>

#include "workload.h"

NOINLINE long lc_lib_len(const char *s, int n)
{
	long x = 0;

	for (int i = 0; i < n; i++)
		x += (long)strlen(s + (i & 1));
	return x;
}
