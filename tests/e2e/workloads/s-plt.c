/*
 * s-plt.c - calls through PLT stubs in a hot loop, from the program and
 * from an instrumented shared library (s-plt-lib.c, libspl.so): samples
 * land in the stubs, which report as TARGET@plt.  The strings are not
 * constants, so that strlen stays a call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long pl_lib_loop(const char *s, int n);

__attribute__((noinline)) static long pl_main_loop(const char *s, int n)
{
	long x = 0;

	for (int i = 0; i < n; i++)
		x += (long)strlen(s + (i & 1));
	return x;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	long x = pl_main_loop(argv[0], n) + pl_lib_loop(argv[0], n);

	printf("%ld\n", x);
	return 0;
}
