/*
 * s-dlopen.c - plugins loaded, used and unloaded before exit:
 * s-dlopen PLUGIN_A PLUGIN_B loads A, calls plug_a(3), unloads it, then
 * does the same with B and plug_b(5).  Prints whether B was loaded where A
 * had been (the case where names could be confused).
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>

#include "workload.h"

volatile long sink;

NOINLINE void *use_plugin(const char *path, const char *fn, int n)
{
	void *h = dlopen(path, RTLD_NOW);
	void (*f)(int);
	Dl_info info;
	void *base = NULL;

	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return NULL;
	}
	f = (void (*)(int))dlsym(h, fn);
	if (f) {
		f(n);
		if (dladdr((void *)f, &info))
			base = info.dli_fbase;
	}
	dlclose(h);
	return base;
}

int main(int argc, char **argv)
{
	void *a, *b;

	if (argc < 3)
		return 2;
	a = use_plugin(argv[1], "plug_a", 3);
	b = use_plugin(argv[2], "plug_b", 5);
	if (!a || !b)
		return 1;
	printf("%s\n", a == b ? "same address" : "different addresses");
	return 0;
}
