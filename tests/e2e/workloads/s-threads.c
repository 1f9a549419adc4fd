/*
 * s-threads: four named threads, each on its own call path under a common
 * start routine, plus the main thread (named "main").
 *
 *   worker1: worker -> work_1 -> step_a
 *   worker2: worker -> work_2 -> step_a (x2), step_b
 *   worker3: worker -> work_3 -> relay -> step_c (x3)
 *   worker4: worker -> work_4 -> step_c (x4)
 *   main:    main -> spawn (x4), main -> reap
 *
 * The threads run concurrently; the trees are per thread, so the counts do
 * not depend on the interleaving.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include "workload.h"

volatile long sink;

NOINLINE static void step_c(int i)
{
	sink += i;
}

NOINLINE static void step_b(int i)
{
	sink += i;
}

NOINLINE static void step_a(int i)
{
	sink += i;
}

NOINLINE static void relay(void)
{
	for (int i = 0; i < 3; i++)
		step_c(i);
}

NOINLINE static void work_1(void)
{
	step_a(1);
}

NOINLINE static void work_2(void)
{
	step_a(1);
	step_a(2);
	step_b(3);
}

NOINLINE static void work_3(void)
{
	relay();
}

NOINLINE static void work_4(void)
{
	for (int i = 0; i < 4; i++)
		step_c(i);
}

NOINLINE static void *worker(void *arg)
{
	long k = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker%ld", k);
	pthread_setname_np(pthread_self(), name);
	switch (k) {
	case 1: work_1(); break;
	case 2: work_2(); break;
	case 3: work_3(); break;
	case 4: work_4(); break;
	}
	return NULL;
}

NOINLINE static int spawn(pthread_t *t, long k)
{
	return pthread_create(t, NULL, worker, (void *)k);
}

NOINLINE static int reap(pthread_t *t, int n)
{
	int err = 0;

	for (int i = 0; i < n; i++)
		err |= pthread_join(t[i], NULL);
	return err;
}

int main(void)
{
	pthread_t t[4];

	pthread_setname_np(pthread_self(), "main");
	for (long k = 1; k <= 4; k++)
		if (spawn(&t[k - 1], k))
			return 1;
	return reap(t, 4);
}
