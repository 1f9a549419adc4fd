/*
 * s-hotloop.c - threads hot in calls, for `callprof attach` (t0513): two
 * workers call a() (which calls b() twice) as fast as they can, so an
 * attach or a detach finds them anywhere: in a function's own code, in a
 * hook's PLT stub, in the C library's empty hook.  SIGUSR1 runs h() on
 * whichever thread it lands on; a spawner starts short threads that call
 * a() a few times and end.  Runs until killed; started without callprof.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE void b(void)
{
	sink++;
}

NOINLINE void a(void)
{
	b();
	b();
}

NOINLINE void h(void)
{
	sink += 2;
}

static void on_usr1(int sig)
{
	(void)sig;
	h();
}

static void *worker(void *arg)
{
	for (;;)
		a();
	return arg;
}

static void *brief(void *arg)
{
	for (int i = 0; i < 50; i++)
		a();
	return arg;
}

static void *spawner(void *arg)
{
	struct timespec ms = { 0, 2000000 };

	for (;;) {
		pthread_t t;

		if (!pthread_create(&t, NULL, brief, NULL))
			pthread_join(t, NULL);
		nanosleep(&ms, NULL);
	}
	return arg;
}

int main(void)
{
	struct sigaction sa;
	pthread_t t[3];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&t[0], NULL, worker, NULL);
	pthread_create(&t[1], NULL, worker, NULL);
	pthread_create(&t[2], NULL, spawner, NULL);
	for (;;)
		pause();
}
