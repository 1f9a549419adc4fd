/*
 * s-pool: a worker pool that idles while one thread computes, the case
 * where elapsed time misleads.
 *
 *   t-pool [N]   four pool threads block in idle_wait (a read on a pipe)
 *                while main computes in crunch (N rounds, default 1) and
 *                light; then main releases them and they return.
 *
 * By elapsed time the pool's waiting is four times main's run; by CPU
 * time crunch is nearly all of it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;
static int fds[2];

NOINLINE static void idle_wait(void)
{
	char c;

	if (read(fds[0], &c, 1) != 1)
		abort();
}

NOINLINE static void *pool_thread(void *arg)
{
	(void)arg;
	idle_wait();
	return NULL;
}

NOINLINE static void crunch(int rounds)
{
	for (long i = 0; i < rounds * 300000000L; i++)
		sink += i ^ (i >> 3);
}

NOINLINE static void light(void)
{
	for (long i = 0; i < 3000000L; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	int rounds = argc > 1 ? atoi(argv[1]) : 1;

	if (pipe(fds))
		return 1;
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, pool_thread, NULL);
	crunch(rounds);
	light();
	if (write(fds[1], "xxxx", 4) != 4)
		return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
