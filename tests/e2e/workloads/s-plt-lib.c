/*
 * s-plt-lib.c - the shared library of s-plt.c (libspl.so): its calls of
 * strlen go through its own PLT.
 */
#include <string.h>

long pl_lib_loop(const char *s, int n)
{
	long x = 0;

	for (int i = 0; i < n; i++)
		x += (long)strlen(s + (i & 1));
	return x;
}
