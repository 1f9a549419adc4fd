/*
 * s-manythreads.c - threads at scale: s-manythreads WAVES starts WAVES
 * waves of 1000 short-lived threads named "short" (all 1000 of a wave alive
 * at once), each calling shortwork() once, which calls leaf() 3 times;
 * meanwhile two long-lived threads named "steady" call steadywork() 1000
 * times each.  Prints its peak resident memory (VmHWM, kB) after the
 * second wave ("peak2 N") and last ("peak N"): two figures of one run,
 * each with at most 1000 short threads alive at once.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

#define WAVE 1000

volatile long sink;
static pthread_barrier_t wave_barrier;

NOINLINE void leaf(void)
{
	sink++;
}

NOINLINE void shortwork(void)
{
	for (int i = 0; i < 3; i++)
		leaf();
}

NOINLINE void steadywork(void)
{
	sink++;
}

static void *short_main(void *arg)
{
	pthread_setname_np(pthread_self(), "short");
	/* All of a wave alive at once. */
	pthread_barrier_wait(&wave_barrier);
	shortwork();
	return NULL;
}

static void *steady_main(void *arg)
{
	pthread_setname_np(pthread_self(), "steady");
	for (int i = 0; i < 1000; i++)
		steadywork();
	return NULL;
}

NOINLINE static long peak_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	int waves = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 10;
	static pthread_t th[WAVE];
	pthread_t steady[2];
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (int i = 0; i < 2; i++)
		pthread_create(&steady[i], NULL, steady_main, NULL);
	pthread_barrier_init(&wave_barrier, NULL, WAVE);
	for (int w = 0; w < waves; w++) {
		for (int i = 0; i < WAVE; i++)
			if (pthread_create(&th[i], &attr, short_main, NULL)) {
				perror("pthread_create");
				return 1;
			}
		for (int i = 0; i < WAVE; i++)
			pthread_join(th[i], NULL);
		if (w == 1)
			printf("peak2 %ld\n", peak_kb());
	}
	for (int i = 0; i < 2; i++)
		pthread_join(steady[i], NULL);
	printf("peak %ld\n", peak_kb());
	return 0;
}
