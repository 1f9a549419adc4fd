/*
 * s-sample.c - CPU work with a known shape, for `record --sample` (built
 * with and without -finstrument-functions, so sampled and exact trees of
 * the same source can be compared).
 *
 *   s-sample [SCALE]          main -> run -> hot -> crunch   (4 units, ~80%)
 *                             main -> run -> cold -> crunch  (1 unit)
 *   s-sample threads [SCALE]  threads "spin-a" (spin_a -> crunch, 3 units)
 *                             and "spin-b" (spin_b -> crunch, 1 unit)
 *   s-sample fork [SCALE]     the child runs in_child (3 units), the parent
 *                             in_parent (1 unit) and waits for it
 *   s-sample env              prints CALLPROF_SAMPLE, or "unset"
 *
 * A unit is 0.1 s of the thread's CPU time (SCALE/10 of it with SCALE), in
 * dependent floating-point steps: the shares hold at any optimisation level,
 * and the samples a unit gets do not depend on the machine's speed (a
 * count of steps gave a faster machine fewer).  Every function
 * uses its callee's result, so none ends in a tail call that would take
 * its frame off the stack, and crunch is no leaf, so that compilers keep
 * its frame pointer (gcc drops it in leaves even with
 * -fno-omit-frame-pointer), without which a frame-pointer walk would
 * skip its caller.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "workload.h"

volatile long sink;
static long long unit_ns = 100000000;

/* No hooks: the trees are those of the work alone. */
NOINSTR static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Called once, but it makes crunch a caller, which keeps its frame pointer. */
NOINLINE static void tick(void)
{
	sink++;
}

NOINLINE static double crunch(long units)
{
	long long end = cpu_ns() + units * unit_ns;
	double x = 1.0;

	tick(); /* once: the exact trees of two runs are the same */
	for (long i = 1;; i++) {
		x = x * 1.0000001 + 0.5;
		if (!(i & 0xfffff) && cpu_ns() >= end)
			break;
	}
	return x;
}

NOINLINE static double hot(void)
{
	return crunch(4) + 1;
}

NOINLINE static double cold(void)
{
	return crunch(1) + 1;
}

NOINLINE static double run(void)
{
	double a = hot();

	return a + cold();
}

NOINLINE static void *spin_a(void *arg)
{
	sink += (long)crunch(3);
	return arg;
}

NOINLINE static void *spin_b(void *arg)
{
	sink += (long)crunch(1);
	return arg;
}

NOINLINE static void threads(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, spin_a, NULL);
	pthread_setname_np(a, "spin-a");
	pthread_create(&b, NULL, spin_b, NULL);
	pthread_setname_np(b, "spin-b");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

NOINLINE static void in_child(void)
{
	sink += (long)crunch(3);
}

NOINLINE static void in_parent(void)
{
	sink += (long)crunch(1);
}

NOINLINE static int forks(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (pid == 0) {
		in_child();
		_exit(0);
	}
	in_parent();
	waitpid(pid, &status, 0);
	return !WIFEXITED(status) || WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 && !strchr("0123456789", argv[1][0]) ? argv[1] : "";
	const char *scale = argc > 1 && !*what ? argv[1] : argc > 2 ? argv[2] : NULL;
	int ret = 0;

	if (scale)
		unit_ns = unit_ns * atol(scale) / 10;
	if (!strcmp(what, "env")) {
		const char *v = getenv("CALLPROF_SAMPLE");

		printf("CALLPROF_SAMPLE=%s\n", v ? v : "unset");
		return 0;
	}
	if (!strcmp(what, "threads"))
		threads();
	else if (!strcmp(what, "fork"))
		ret = forks();
	else
		sink += (long)run();
	sink += ret; /* after the calls: none is a tail call, main keeps its frame */
	return ret;
}
