/*
 * s-exec.c - exec, alone and after fork.
 *
 *   t-exec          before() once, then execs itself as "t-exec after"
 *   t-exec after    after() once
 *   t-exec fork N   forks N children; child k runs work() k+1 times, and
 *                   child 0 then execs itself as "t-exec after"; the
 *                   parent runs reap() and waits for them
 * Every image's calls must be in some profile, each exactly once.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE void before(void)
{
	sink++;
}

NOINLINE void after(void)
{
	sink++;
}

NOINLINE void work(void)
{
	sink++;
}

NOINLINE void reap(int n)
{
	for (int i = 0; i < n; i++)
		wait(NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "after")) {
		after();
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "fork")) {
		int n = (int)strtol(argv[2], NULL, 10);

		for (int k = 0; k < n; k++) {
			if (fork() == 0) {
				for (int i = 0; i <= k; i++)
					work();
				if (k == 0)
					execl("/proc/self/exe", "t-exec", "after", (char *)NULL);
				return 0;
			}
		}
		reap(n);
		return 0;
	}
	before();
	execl("/proc/self/exe", "t-exec", "after", (char *)NULL);
	return 1;
}
