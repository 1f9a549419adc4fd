/*
 * s-sled-plug.c - a plugin for s-sled-dlopen.c (t0537), built twice:
 * -DWHICH=1 names its inner function plug_one_inner and calls it 3 times a
 * run, -DWHICH=2 plug_two_inner, 5 times.  Both export plug_run(), which
 * also calls back into the program (host_callback()).  Same size, so the
 * second may load where the first was.
 */
#include "s-sled-count.h"

#if WHICH == 1
#define INNER plug_one_inner
#define INNER_NAME "plug_one_inner"
#define TIMES 3
#else
#define INNER plug_two_inner
#define INNER_NAME "plug_two_inner"
#define TIMES 5
#endif

volatile long plug_sink;

NOINLINE void INNER(int i)
{
	COUNT(INNER_NAME);
	plug_sink += i;
}

NOINLINE void plug_run(void (*host_callback)(void))
{
	COUNT("plug_run");
	for (int i = 0; i < TIMES; i++)
		INNER(i);
	host_callback();
	plug_sink++;
}
