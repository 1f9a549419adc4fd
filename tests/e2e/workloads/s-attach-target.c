/*
 * s-attach-target.c - a program started without callprof that keeps
 * calling instrumented functions: the target of `callprof attach`.
 *
 *   t-attach-target READY [undumpable | thread | dlopen LIB]
 *
 * It sets itself up, then writes its pid (and with "thread", a second
 * thread's id) to READY, by rename so that the file appears complete.
 * "undumpable" calls prctl(PR_SET_DUMPABLE, 0) first; "dlopen LIB" loads
 * LIB.  It ends by itself after a minute, should a test fail to kill it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;
static volatile long tid;

NOINLINE static void work(long i)
{
	sink += i;
}

NOINLINE static void nap(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	tid = syscall(SYS_gettid);
	for (int i = 0; i < 6000; i++)
		nap();
	return arg;
}

int main(int argc, char **argv)
{
	char tmp[4096];
	pthread_t th;
	FILE *f;

	if (argc < 2)
		return 2;
	if (argc > 2 && !strcmp(argv[2], "undumpable") && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return perror("prctl"), 1;
	if (argc > 3 && !strcmp(argv[2], "dlopen") && !dlopen(argv[3], RTLD_NOW | RTLD_LOCAL))
		return fprintf(stderr, "dlopen: %s\n", dlerror()), 1;
	if (argc > 2 && !strcmp(argv[2], "thread")) {
		if (pthread_create(&th, NULL, worker, NULL))
			return 1;
		while (!tid)
			nap();
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	f = fopen(tmp, "w");
	if (!f)
		return perror(tmp), 1;
	if (tid)
		fprintf(f, "%d %ld\n", (int)getpid(), tid);
	else
		fprintf(f, "%d\n", (int)getpid());
	if (fclose(f) || rename(tmp, argv[1]))
		return perror(argv[1]), 1;
	for (long i = 0; i < 6000; i++) {
		work(i);
		nap();
	}
	return 0;
}
