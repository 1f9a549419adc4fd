/*
 * s-deep.c - recursion N deep (default 20000): the shadow stack has no
 * fixed limit.  Runs in a thread with a large stack so -O0 frames fit.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long down(unsigned long n)
{
	unsigned long r = n ? down(n - 1) + 1 : 0;

	sink += r;
	return r;
}

static void *run(void *arg)
{
	return (void *)down((unsigned long)arg);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	pthread_attr_t attr;
	pthread_t t;
	void *res;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256u << 20);
	if (pthread_create(&t, &attr, run, (void *)n))
		return 2;
	pthread_join(t, &res);
	printf("%lu\n", (unsigned long)res);
	return 0;
}
