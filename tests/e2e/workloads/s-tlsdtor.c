/*
 * s-tlsdtor.c - calls made by a thread's TLS destructor, after the
 * runtime's own destructor saw the thread end.  Two threads:
 *   - "start": calls phase() (the --start function) once, returns; its
 *     key destructor then calls dtor_work() 3 times, outside every
 *     start function;
 *   - "tree": calls phase(1), which calls quiet() (an --exclude-tree
 *     function), which calls leaf() and ends the thread from inside
 *     (pthread_exit); the destructor's 3 dtor_work() calls happen inside
 *     quiet's tree.
 * Under --start=phase --exclude-tree=quiet neither thread's dtor_work
 * may be recorded.  `./t-tlsdtor N` runs N of each, one after the other
 * (past 256, ending threads' states are recycled: thread.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

volatile long sink;
static pthread_key_t key;

NOINLINE void leaf(int k)
{
	sink += k;
}

NOINLINE void dtor_work(void)
{
	leaf(1);
}

NOINLINE void quiet(void)
{
	leaf(3);
	pthread_exit(NULL);
}

NOINLINE void phase(int q)
{
	leaf(2);
	if (q)
		quiet();
}

static void on_exit_key(void *arg)
{
	for (int i = 0; i < 3; i++)
		dtor_work();
}

static void *start_thread(void *arg)
{
	pthread_setspecific(key, &key);
	phase(0);
	return NULL;
}

static void *tree_thread(void *arg)
{
	pthread_setspecific(key, &key);
	phase(1);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t a, b;

	/* After the runtime's key: this destructor runs after its own. */
	if (pthread_key_create(&key, on_exit_key))
		return 1;
	for (int i = 0; i < n; i++) {
		if (pthread_create(&a, NULL, start_thread, NULL))
			return 1;
		pthread_join(a, NULL);
		if (pthread_create(&b, NULL, tree_thread, NULL))
			return 1;
		pthread_join(b, NULL);
	}
	puts("done");
	return 0;
}
