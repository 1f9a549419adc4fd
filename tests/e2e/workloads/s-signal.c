/*
 * s-signal.c - signal handlers, synchronous and at 10 kHz.
 *
 * "sync": sigmain() raises SIGUSR1 100 times (handler installed with
 * sigaction, SA_SIGINFO) and SIGUSR2 50 times (handler installed with
 * signal()); raise() delivers before it returns, so every handler run must
 * be recorded as sigmain;<signal N>;handler.  It also checks that sigaction
 * and signal() report back the handlers the program installed.
 *
 * "timer N": a 10 kHz SIGALRM timer whose handler calls tick(), which
 * calls tock(), while the main thread calls work() and leafw() until the
 * handler has run N times (or a minute has passed: a timer's signals
 * coalesce while the process waits for a CPU, so a loaded machine handles
 * fewer a second; the count, not the time, is what the test needs).
 * Signals land anywhere, inside the hooks too.  Prints the number of
 * handler runs and of work() calls; the test compares them with the
 * profile.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "workload.h"

volatile long sink;
static volatile sig_atomic_t handled;

NOINLINE void leaf(void)
{
	sink++;
}

NOINLINE void on_usr1(int sig, siginfo_t *si, void *uc)
{
	if (si->si_signo == sig)
		leaf();
}

NOINLINE void on_usr2(int sig)
{
	leaf();
}

NOINLINE int sigmain(void)
{
	struct sigaction sa, back;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) || sigaction(SIGUSR1, NULL, &back) ||
	    back.sa_sigaction != on_usr1 || !(back.sa_flags & SA_SIGINFO)) {
		fprintf(stderr, "sigaction does not give back the handler\n");
		return 1;
	}
	if (signal(SIGUSR2, on_usr2) == SIG_ERR || signal(SIGUSR2, on_usr2) != on_usr2) {
		fprintf(stderr, "signal does not give back the handler\n");
		return 1;
	}
	for (int i = 0; i < 100; i++)
		raise(SIGUSR1);
	for (int i = 0; i < 50; i++)
		raise(SIGUSR2);
	return 0;
}

NOINLINE void tock(void)
{
	sink++;
}

NOINLINE void tick(void)
{
	tock();
}

NOINLINE void on_alarm(int sig)
{
	handled++;
	tick();
}

NOINLINE void leafw(int i)
{
	sink += i;
}

NOINLINE void work(int i)
{
	leafw(i);
	leafw(i + 1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE long timed(long n)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	double end = now() + 60;
	long calls = 0;

	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	while (handled < n && now() < end) {
		for (int i = 0; i < 1000; i++)
			work(i);
		calls += 1000;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	return calls;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "timer")) {
		long calls = timed(strtol(argv[2], NULL, 10));

		printf("handled %ld\nwork %ld\n", (long)handled, calls);
		return 0;
	}
	return sigmain();
}
