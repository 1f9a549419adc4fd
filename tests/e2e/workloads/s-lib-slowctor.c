/*
 * s-lib-slowctor.c - a library whose constructor runs until the file
 * named by $SLOW_CTOR_UNTIL exists (at most a minute): while it runs, the
 * thread that loads it holds the dynamic loader's lock, and every other
 * dlopen in the process waits.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((constructor)) static void slow_ctor(void)
{
	const char *until = getenv("SLOW_CTOR_UNTIL");
	struct timespec ms = { 0, 10 * 1000 * 1000 };

	for (int i = 0; until && i < 6000 && access(until, F_OK); i++)
		nanosleep(&ms, NULL);
}

int slow_lib_loaded(void)
{
	return 1;
}
