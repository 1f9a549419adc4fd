/*
 * s-sigjump.c - a storm of signals whose handler leaves by siglongjmp,
 * abandoning whatever it interrupted: deep recursion that grows the shadow
 * stack and the node table, and the hooks themselves, half-way.
 *
 *   ./t-sigjump [THREADS [ATTEMPTS]]      (default 40 and 20)
 *
 * THREADS threads run one after the other (each starts with fresh, small
 * tables to grow).  Each makes ATTEMPTS calls of attempt(), which takes a
 * sigsetjmp and descends 3000 levels through down0()/down1(), the choice
 * at each level depending on the attempt, so that new call paths keep
 * being made.  A 20 kHz SIGALRM timer runs meanwhile; its handler calls
 * tick(), then inner(), which jumps within the handler (hop() siglongjmps
 * back to inner()), and, while an attempt is under way, every second run
 * calls bail(), which siglongjmps back to attempt().  Prints the handler
 * runs, the bail() calls and the attempts made; the test compares them
 * with the profile.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "workload.h"

volatile long sink;
static __thread sigjmp_buf env, henv;
static __thread volatile sig_atomic_t armed;
static volatile sig_atomic_t handled, bailed;
static int attempts = 20;
static long attempts_made;

NOINLINE void tick(void)
{
	sink++;
}

NOINLINE void bail(void)
{
	bailed++;
	armed = 0;
	siglongjmp(env, 1);
}

NOINLINE void hop(void)
{
	siglongjmp(henv, 1);
}

/* A jump that stays inside the handler: the thread is not given back. */
NOINLINE void inner(void)
{
	if (sigsetjmp(henv, 0) == 0)
		hop();
	tick();
}

static NOINLINE void on_alarm(int sig)
{
	handled++;
	tick();
	inner();
	if (armed && handled % 2 == 0)
		bail();
}

NOINLINE void down1(int level, unsigned pattern);

NOINLINE void down0(int level, unsigned pattern)
{
	sink += level;
	if (level > 0) {
		if ((pattern >> (level % 13)) & 1)
			down1(level - 1, pattern);
		else
			down0(level - 1, pattern);
	}
}

NOINLINE void down1(int level, unsigned pattern)
{
	sink -= level;
	if (level > 0) {
		if ((pattern >> (level % 11)) & 1)
			down0(level - 1, pattern);
		else
			down1(level - 1, pattern);
	}
}

NOINLINE void attempt(unsigned pattern)
{
	if (sigsetjmp(env, 1) == 0) {
		armed = 1;
		down0(3000, pattern);
	}
	armed = 0;
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(long)arg;
	sigset_t alrm;

	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	for (int i = 0; i < attempts; i++)
		attempt(seed * 7919u + (unsigned)i * 104729u);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	__atomic_fetch_add(&attempts_made, attempts, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 40;
	struct itimerval it = { { 0, 50 }, { 0, 50 } }, off;
	struct sigaction sa;
	sigset_t alrm;

	if (argc > 2)
		attempts = atoi(argv[2]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	/* Only the workers take the signal. */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < threads; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, worker, (void *)(long)i) || pthread_join(th, NULL))
			return 1;
	}
	memset(&off, 0, sizeof(off));
	setitimer(ITIMER_REAL, &off, NULL);
	printf("handled %ld\nbailed %ld\nattempts %ld\n", (long)handled, (long)bailed, attempts_made);
	return 0;
}
