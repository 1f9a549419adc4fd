/*
 * s-cxx-host: a C program (no C++ runtime of its own) that dlopens a C++
 * plugin (s-cxx-plugin.cc) whose functions throw and catch (t0191).
 *
 *   t-cxx-host PLUGIN.so N
 *
 * Prints "sum S" (N*(N-1)/2 for plug_catch(N)) and exits 0.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

NOINLINE int run_plugin(const char *path, int n)
{
	void *h = dlopen(path, RTLD_NOW);
	int (*fn)(int);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return -1;
	}
	fn = (int (*)(int))dlsym(h, "plug_catch");
	if (!fn) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return -1;
	}
	return fn(n);
}

int main(int argc, char **argv)
{
	int s;

	if (argc != 3)
		return 2;
	s = run_plugin(argv[1], atoi(argv[2]));
	if (s < 0)
		return 1;
	printf("sum %d\n", s);
	return 0;
}
