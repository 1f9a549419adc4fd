/*
 * s-live.c - threads still calling instrumented functions, creating new
 * call paths and growing their shadow stacks, while main exits: the dump
 * reads trees that change under it and must neither crash nor hang, and
 * what it writes must be consistent.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile unsigned long sink;
static int started; /* workers that have begun to spin */

__attribute__((noinline)) static void leaf(unsigned long i)
{
	sink += i;
}

__attribute__((noinline)) static void climb(unsigned depth)
{
	if (depth)
		climb(depth - 1);
	leaf(depth);
}

__attribute__((noinline)) static void spin(void)
{
	for (unsigned long i = 0;; i++)
		climb(i % 1100); /* new deep paths keep appearing; the stack grows past 1024 */
}

static void *worker(void *arg)
{
	__atomic_fetch_add(&started, 1, __ATOMIC_RELEASE);
	spin();
	return arg;
}

int main(void)
{
	pthread_t t;

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t, NULL, worker, NULL))
			return 2;
	/* On a loaded machine a thread can take longer than any fixed sleep to start. */
	while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < 2)
		usleep(1000);
	usleep(30000);
	puts("exit while workers run");
	return 0;
}
