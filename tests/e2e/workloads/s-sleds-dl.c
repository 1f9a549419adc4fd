/*
 * s-sleds-dl.c - t0542: dlopen a sledded library (argv[1], a path or a
 * bare name), call it, dlclose it, open it again and call it again; prints
 * the library's own counts each time.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	long total = 0;

	for (int round = 0; round < 2; round++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		long (*run)(int), (*count)(int);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 2;
		}
		run = (long (*)(int))dlsym(h, "plugin_run");
		count = (long (*)(int))dlsym(h, "plugin_count");
		total += run(100 + round);
		printf("round %d plugin_run %ld plugin_leaf %ld\n", round, count(1), count(0));
		dlclose(h);
	}
	printf("total %ld\n", total);
	return 0;
}
