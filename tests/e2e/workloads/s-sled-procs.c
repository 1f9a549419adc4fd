/*
 * s-sled-procs.c - threads, fork, vfork + exec and exec of sledded code
 * (t0536).  Every process prints its own counts (s-sled-count.h), after a
 * line naming it, so that the test can hold each against its profile.
 *
 *   ./t-sled-procs threads   8 threads; thread i calls worker(i), which
 *                            calls unit() 1000 * (i + 1) times
 *   ./t-sled-procs fork      before_fork(); fork(); the child resets its
 *                            counts and calls child_work() 300 times
 *                            (prints "--- child"); the parent waits, calls
 *                            after_fork() (prints "--- parent")
 *   ./t-sled-procs vfork     vfork() + execv of itself as "image", then waits
 *   ./t-sled-procs exec      before_exec(), prints its counts ("--- old
 *                            image") and execs itself as "image"
 *   ./t-sled-procs image     in_image() 5 times (prints "--- new image")
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLED_COUNT_MAIN
#include "s-sled-count.h"

#define THREADS 8

volatile long sink;

NOINLINE void unit(long i)
{
	COUNT("unit");
	__atomic_add_fetch(&sink, i, __ATOMIC_RELAXED);
}

NOINLINE void *worker(void *arg)
{
	long i = (long)arg;

	COUNT("worker");
	for (long k = 0; k < 1000 * (i + 1); k++)
		unit(k);
	return NULL;
}

NOINLINE void leaf(void)
{
	COUNT("leaf");
	sink++;
}

NOINLINE void child_work(void)
{
	COUNT("child_work");
	leaf();
}

NOINLINE void before_fork(void)
{
	COUNT("before_fork");
	leaf();
}

NOINLINE void after_fork(void)
{
	COUNT("after_fork");
	leaf();
}

NOINLINE void before_exec(void)
{
	COUNT("before_exec");
	leaf();
}

NOINLINE void in_image(void)
{
	COUNT("in_image");
	leaf();
}

NOINLINE int forker(void)
{
	int status;
	pid_t pid;

	COUNT("forker");
	before_fork();
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		sled_count_reset();
		for (int i = 0; i < 300; i++)
			child_work();
		printf("--- child\n");
		sled_count_print();
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || status)
		return 3;
	after_fork();
	return 0;
}

NOINLINE int vforker(const char *self)
{
	int status;
	pid_t pid;

	COUNT("vforker");
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		execl(self, self, "image", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		return 3;
	after_fork();
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "threads";
	int rc = 0;

	COUNT("main");
	if (!strcmp(mode, "threads")) {
		pthread_t t[THREADS];

		for (long i = 0; i < THREADS; i++)
			if (pthread_create(&t[i], NULL, worker, (void *)i))
				return 2;
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
		printf("--- threads\n");
	} else if (!strcmp(mode, "fork")) {
		rc = forker();
		printf("--- parent\n");
	} else if (!strcmp(mode, "vfork")) {
		rc = vforker(argv[0]);
		printf("--- parent\n");
	} else if (!strcmp(mode, "exec")) {
		before_exec();
		printf("--- old image\n");
		sled_count_print();
		execl(argv[0], argv[0], "image", (char *)NULL);
		return 127;
	} else {
		for (int i = 0; i < 5; i++)
			in_image();
		printf("--- new image\n");
	}
	sled_count_print();
	return rc;
}
