/*
 * s-grow.c - a program whose profile memory grows when asked, for
 * `callprof dump` against a watcher gone stale (t0518).
 *
 *   t-grow READY GROWN
 *
 * Writes its pid to READY, then waits for SIGUSR1; each SIGUSR1 makes it
 * start and join 400 threads, one after the other, each making a few
 * calls: their states and trees take the runtime's arena past its piece,
 * so a newer watcher is started and the older one is stale.  After each
 * such burst it writes their number so far to GROWN.  SIGTERM ends it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE void work(int i)
{
	sink += i;
}

static void *thread(void *arg)
{
	for (int i = 0; i < 4; i++)
		work(i);
	return arg;
}

int main(int argc, char **argv)
{
	sigset_t set;
	FILE *f;
	int sig, bursts = 0;

	if (argc != 3)
		return 2;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	work(0);
	f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	while (!sigwait(&set, &sig) && sig == SIGUSR1) {
		for (int i = 0; i < 400; i++) {
			pthread_t t;

			if (!pthread_create(&t, NULL, thread, NULL))
				pthread_join(t, NULL);
		}
		f = fopen(argv[2], "w");
		if (!f)
			return 2;
		fprintf(f, "%d\n", ++bursts);
		fclose(f);
	}
	return 0;
}
