/*
 * s-cc-main: with s-cc-util.c, a program of two files for `callprof cc`
 * (t0500-cc.sh):
 *
 *   main -> run               1 call
 *   main -> run -> twice      3 calls (s-cc-util.c)
 *   main -> run -> twice -> leaf   6 calls (s-cc-util.c)
 */
#include "workload.h"
#include "s-cc.h"

volatile long sink;

NOINLINE static void run(void)
{
	for (int i = 0; i < 3; i++)
		twice(i);
}

int main(void)
{
	run();
	return sink == 6 ? 0 : 1;
}
