/*
 * s-errno.c - the hooks never change errno: not on a plain call, not on a
 * thread's first call (which sets up its state), not on a new call path.
 * Exits 0 when errno survived everything, else the number of the check
 * that failed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "workload.h"

__attribute__((noinline)) int f(int x)
{
	return x + 1;
}

__attribute__((noinline)) int g(int x)
{
	return f(x) + 1;
}

/* Not instrumented: sets errno before the thread's first hook runs. */
NOINSTR static void *thread_main(void *arg)
{
	errno = 77;
	f(1);
	return (void *)(long)(errno == 77);
}

int main(void)
{
	pthread_t t;
	void *ok;

	errno = 1234;
	f(1);
	if (errno != 1234)
		return 1;
	errno = 4321;
	g(2); /* new call paths main;g and main;g;f */
	if (errno != 4321)
		return 2;
	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, &ok))
		return 3;
	if (!ok)
		return 4;
	puts("errno preserved");
	return 0;
}
