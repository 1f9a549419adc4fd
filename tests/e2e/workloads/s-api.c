/*
 * s-api.c - a program using the run-time control API (include/callprof.h).
 * It must build and run the same without callprof (no -lcallprof), so its
 * standard output holds only what it computes; what the API returned goes
 * to standard error.
 *
 *   t-api           regions, two snapshots 7 calls of tick() apart, labels
 *   t-api reset     5 calls of before(), a reset, 4 calls of after()
 *   t-api pause     calls while paused are not recorded, an open one goes on
 *   t-api reset-pause  3 calls of paused_fn() while paused, a reset, 2 more
 *   t-api serve F   a daemon: calls tick() every 10 ms, and writes its pid to F
 *                   after the first (a snapshot taken once F is there holds a
 *                   tick, however slowly the machine ran it)
 *                   until the file "stop" exists
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../../include/callprof.h"
#include "workload.h"

volatile long sink;

NOINLINE void leaf(void)
{
	sink++;
}

NOINLINE void inner(int n)
{
	for (int i = 0; i < n; i++)
		leaf();
}

NOINLINE void tick(void)
{
	sink += 2;
}

NOINLINE void before(void)
{
	leaf();
}

NOINLINE void after(void)
{
	leaf();
}

NOINLINE void paused_fn(void)
{
	leaf();
}

NOINLINE void resumed_fn(void)
{
	leaf();
}

/* Open when the pause begins: goes on being timed, its later calls are not recorded. */
NOINLINE void spans_pause(void)
{
	leaf();
	callprof_pause();
	leaf();
}

NOINLINE void *worker(void *arg)
{
	callprof_set_thread_name("worker-label");
	inner(4);
	return arg;
}

/* Not instrumented: the two snapshots must differ by tick()'s calls alone. */
NOINSTR static void report_dump(const char *what, int ret)
{
	if (ret)
		fprintf(stderr, "%s=-1 %s\n", what, strerror(errno));
	else
		fprintf(stderr, "%s=0\n", what);
}

NOINLINE static void all(void)
{
	pthread_t th;

	callprof_set_thread_name("api-main");
	callprof_region_begin("setup");
	inner(3);
	callprof_region_begin("load");
	leaf();
	callprof_region_end("load");
	callprof_region_end("setup");
	callprof_region_begin("setup");
	inner(2);
	callprof_region_end("setup");
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	for (int i = 0; i < 3; i++)
		tick();
	errno = 0;
	report_dump("dump1", callprof_dump("d1.cprof"));
	for (int i = 0; i < 7; i++)
		tick();
	report_dump("dump2", callprof_dump("d2.cprof"));
	report_dump("dump3", callprof_dump(NULL));
	/* An end with no begin: counted, not fatal. */
	callprof_region_end("never-begun");
	printf("all %ld\n", sink);
}

NOINLINE static void reset(void)
{
	for (int i = 0; i < 5; i++)
		before();
	callprof_reset();
	for (int i = 0; i < 4; i++)
		after();
	printf("reset %ld\n", sink);
}

NOINLINE static void pause_mode(void)
{
	spans_pause();
	for (int i = 0; i < 3; i++)
		paused_fn();
	callprof_resume();
	for (int i = 0; i < 2; i++)
		resumed_fn();
	printf("pause %ld\n", sink);
}

/* The calls left unrecorded before a reset are not counted after it either. */
NOINLINE static void reset_pause(void)
{
	callprof_pause();
	for (int i = 0; i < 3; i++)
		paused_fn();
	callprof_resume();
	callprof_reset();
	callprof_pause();
	for (int i = 0; i < 2; i++)
		paused_fn();
	callprof_resume();
	resumed_fn();
	printf("reset-pause %ld\n", sink);
}

NOINLINE static void serve(const char *ready)
{
	struct timespec ms10 = { 0, 10000000 };
	FILE *f;

	tick();
	f = fopen(ready, "w");
	if (f) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
	while (access("stop", F_OK)) {
		tick();
		nanosleep(&ms10, NULL);
	}
	printf("served\n");
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "reset"))
		reset();
	else if (argc > 1 && !strcmp(argv[1], "pause"))
		pause_mode();
	else if (argc > 1 && !strcmp(argv[1], "reset-pause"))
		reset_pause();
	else if (argc > 2 && !strcmp(argv[1], "serve"))
		serve(argv[2]);
	else
		all();
	return 0;
}
