/*
 * s-manypaths.c - a million distinct call paths: ten functions f0..f9, each
 * of which calls all ten again until the path is DEPTH long (default 6):
 * 10 + 100 + ... + 10^6 = 1,111,110 paths, each entered once.
 * `./t-manypaths DEPTH kill`: then the process kills itself (SIGKILL)
 * inside doomed(), for the watcher to write a tree that takes several of
 * the arena's pieces (runtime/arena.c).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;
static int depth = 6;

typedef void (*fn)(int);
static fn table[10];

NOINLINE static void fan(int d)
{
	if (d < depth)
		for (int i = 0; i < 10; i++)
			table[i](d + 1);
	sink++;
}

#define F(k) NOINLINE void f##k(int d) { fan(d); }
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9)

NOINLINE void doomed(void)
{
	kill(getpid(), SIGKILL);
}

int main(int argc, char **argv)
{
	fn all[10] = { f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 };

	if (argc > 1)
		depth = (int)strtol(argv[1], NULL, 10);
	for (int i = 0; i < 10; i++)
		table[i] = all[i];
	fan(0);
	if (argc > 2 && !strcmp(argv[2], "kill"))
		doomed();
	return 0;
}
