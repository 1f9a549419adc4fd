/*
 * s-offcpu: where time goes when a thread is not running.
 *
 *   t-offcpu sleep    main -> sleeper: ten 50 ms sleeps (wait)
 *   t-offcpu naps     main -> napper: 3000 sleeps of 100 us with no hook
 *                     between (as Open MPI waits in MPI_Finalize): more
 *                     switches than the ring holds
 *   t-offcpu pinned   two threads on CPU 0, each in its own spinner for 1 s
 *                     of wall time: each is preempted for the other (inactive)
 *   t-offcpu calls    as "pinned", but each thread makes tiny calls for 0.5 s:
 *                     preemptions land inside the hooks, where the frame
 *                     changes, as often as anywhere
 *   t-offcpu fork     a child process sleeps as in "sleep"; so does the parent
 *   t-offcpu hot      main -> hot: CPU work on two lines of very different
 *                     weight, and a call into libc (for sampled lines)
 *   t-offcpu fds      prints how many file descriptors the process has open
 *   t-offcpu pool F   two pool threads block in pool_wait (a condition variable
 *                     nobody signals) while main spins in pool_main; once
 *                     both are blocked, main writes its pid to F and spins
 *                     until killed: the calls still open at a dump or a
 *                     fatal signal
 *
 * The spinners and hot() burn in burn(), which is not instrumented: no hook
 * runs while they spin, so every switch is charged from the ring at their
 * exit, the hardest case for the ring's size.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "workload.h"

volatile long sink;

NOINSTR static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Spin until the wall clock reaches until_ms (no hooks inside). */
NOINSTR __attribute__((noinline)) static void burn_until(long until_ms)
{
	unsigned long x = (unsigned long)sink | 1;

	while (now_ms() < until_ms) {
		for (int i = 0; i < 10000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	}
	sink = (long)x;
}

NOINLINE void sleeper(void)
{
	for (int i = 0; i < 10; i++)
		usleep(50000);
}

NOINLINE void napper(void)
{
	for (int i = 0; i < 3000; i++)
		usleep(100);
}

static pthread_barrier_t start;

NOINLINE void spinner_a(void)
{
	burn_until(now_ms() + 1000);
}

NOINLINE void spinner_b(void)
{
	burn_until(now_ms() + 1000);
}

static void pin_to_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
}

NOINLINE void tiny(void)
{
	sink++;
}

NOINLINE void caller(void)
{
	for (int i = 0; i < 100; i++)
		tiny();
}

/* Tiny calls until the wall clock reaches until_ms. */
NOINLINE void caller_loop(long until_ms)
{
	while (now_ms() < until_ms)
		caller();
}

static int calls_mode;

NOINLINE static void *run_a(void *arg)
{
	pin_to_cpu0();
	pthread_barrier_wait(&start);
	if (calls_mode)
		caller_loop(now_ms() + 500);
	else
		spinner_a();
	return arg;
}

NOINLINE static void *run_b(void *arg)
{
	pin_to_cpu0();
	pthread_barrier_wait(&start);
	if (calls_mode)
		caller_loop(now_ms() + 500);
	else
		spinner_b();
	return arg;
}

static void pinned(void)
{
	pthread_t a, b;

	pthread_barrier_init(&start, NULL, 2);
	pthread_create(&a, NULL, run_a, NULL);
	pthread_create(&b, NULL, run_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* Most of the time on the first loop's line, a tenth of it on the second's, some in qsort. */
NOINLINE void hot(void)
{
	static long v[200000];
	unsigned long x = 88172645463325252ul;

	for (long i = 0; i < 100000000L; i++) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	for (long i = 0; i < 10000000L; i++) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	for (long i = 0; i < 200000; i++)
		v[i] = (long)(x = x * 6364136223846793005ul + 1);
	qsort(v, 200000, sizeof(v[0]), cmp_long);
	sink = (long)x + v[0];
}

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER;
static int pool_blocked;

NOINLINE void pool_wait(void)
{
	pthread_mutex_lock(&pool_lock);
	pool_blocked++;
	for (;;)
		pthread_cond_wait(&pool_cond, &pool_lock); /* nobody signals it */
}

static void *pool_thread(void *arg)
{
	pool_wait();
	return arg;
}

NOINLINE void pool_main(const char *ready)
{
	pthread_t t[2];
	int n = 0;
	FILE *f;

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, pool_thread, NULL);
	while (n < 2) {
		usleep(1000);
		pthread_mutex_lock(&pool_lock);
		n = pool_blocked;
		pthread_mutex_unlock(&pool_lock);
	}
	f = fopen(ready, "w");
	if (f) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
	burn_until(now_ms() + 60000);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sleep";

	if (!strcmp(mode, "sleep")) {
		sleeper();
	} else if (!strcmp(mode, "naps")) {
		napper();
	} else if (!strcmp(mode, "pinned")) {
		pinned();
	} else if (!strcmp(mode, "calls")) {
		calls_mode = 1;
		pinned();
	} else if (!strcmp(mode, "fork")) {
		pid_t pid = fork();

		if (pid == 0) {
			sleeper();
			return 0;
		}
		sleeper();
		waitpid(pid, NULL, 0);
	} else if (!strcmp(mode, "hot")) {
		hot();
	} else if (!strcmp(mode, "pool") && argc > 2) {
		pool_main(argv[2]);
	} else if (!strcmp(mode, "fds")) {
		printf("%d\n", count_fds());
	} else {
		fprintf(stderr, "usage: t-offcpu sleep|pinned|calls|fork|hot|fds|pool F\n");
		return 2;
	}
	return 0;
}
