/*
 * s-sled-dlopen.c - dlopen of sledded libraries, calls, dlclose, and
 * dlopen again (t0537).
 *
 *   ./t-sled-dlopen LIB1 LIB2 [ROUNDS]     (default 10)
 *
 * use(LIB1): dlopen, plug_run() ROUNDS times (its calls back into
 * host_callback() -> host_leaf()), dlclose.  Then use(LIB2), which may be
 * mapped where LIB1 was (prints "same address" then), then use(LIB1)
 * again.  Finally held(LIB1): dlopen twice, and plug_run()'s call back
 * into the program dlcloses it once (the library stays mapped: one
 * reference is left) before returning into it; then the last dlclose.
 * Prints the result and its counts.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define SLED_COUNT_MAIN
#include "s-sled-count.h"

volatile long sink;
static void *held_handle;

NOINLINE void host_leaf(void)
{
	COUNT("host_leaf");
	sink++;
}

NOINLINE void host_callback(void)
{
	COUNT("host_callback");
	host_leaf();
}

NOINLINE void host_callback_close(void)
{
	COUNT("host_callback_close");
	host_leaf();
	if (held_handle) {
		dlclose(held_handle);
		held_handle = NULL;
	}
}

typedef void (*plug_fn)(void (*)(void));

NOINLINE void *use(const char *path, int rounds)
{
	void *h, *at;
	plug_fn run;

	COUNT("use");
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		exit(2);
	}
	run = (plug_fn)dlsym(h, "plug_run");
	if (!run)
		exit(3);
	for (int i = 0; i < rounds; i++)
		run(host_callback);
	at = (void *)run;
	dlclose(h);
	return at;
}

NOINLINE void held(const char *path)
{
	void *h;
	plug_fn run;

	COUNT("held");
	h = dlopen(path, RTLD_NOW);
	held_handle = dlopen(path, RTLD_NOW);
	if (!h || !held_handle)
		exit(2);
	run = (plug_fn)dlsym(h, "plug_run");
	run(host_callback_close);
	run(host_callback);
	dlclose(h);
}

int main(int argc, char **argv)
{
	int rounds = argc > 3 ? (int)strtol(argv[3], NULL, 10) : 10;
	void *a, *b;

	COUNT("main");
	if (argc < 3)
		return 1;
	a = use(argv[1], rounds);
	b = use(argv[2], rounds);
	if (a == b)
		printf("same address\n");
	use(argv[1], rounds);
	held(argv[1]);
	printf("sink %ld\n", (long)sink);
	sled_count_print();
	return 0;
}
