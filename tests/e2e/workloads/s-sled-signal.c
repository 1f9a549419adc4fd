/*
 * s-sled-signal.c - signal handlers that call sledded functions (t0533).
 *
 *   ./t-sled-signal sync [N]    (default 500 rounds) each round:
 *     work(4) raises SIGUSR1 at its deepest level: on_usr1() runs on the
 *     thread's stack and calls in_handler();
 *     work(4) raises SIGUSR2: on_usr2() runs on a sigaltstack (SA_ONSTACK;
 *     it checks that it does) and calls in_handler();
 *     work(4) raises SIGURG: on_urg() calls in_handler() then bail(),
 *     which siglongjmps out of the handler and the 5 work frames back to
 *     round(), which calls after_bail().
 *   ./t-sled-signal async [N]   (default 300 handler runs) a 5 kHz
 *     ITIMER_REAL interrupts spin(), a loop of calls 20 deep; on_alrm()
 *     calls in_handler(); after N runs of it the timer stops.  Where the
 *     signal lands varies, so the counts vary from run to run: the test
 *     compares them with the profile of the same run.
 * Prints "on alt stack: yes" when every SIGUSR2 ran on the alternate
 * stack, the result and its counts.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define SLED_COUNT_MAIN
#include "s-sled-count.h"

volatile long sink;
static sigjmp_buf bail_env;
static char alt_stack[256 << 10];
static volatile int not_on_alt;
static volatile sig_atomic_t alarms, alarms_wanted;

NOINLINE void in_handler(int sig)
{
	COUNT("in_handler");
	sink += sig;
}

NOINLINE void on_usr1(int sig)
{
	COUNT("on_usr1");
	in_handler(sig);
	sink++;
}

NOINLINE void on_usr2(int sig)
{
	char here;

	COUNT("on_usr2");
	if (&here < alt_stack || &here >= alt_stack + sizeof(alt_stack))
		not_on_alt = 1;
	in_handler(sig);
	sink++;
}

NOINLINE void bail(void)
{
	COUNT("bail");
	siglongjmp(bail_env, 1);
}

NOINLINE void on_urg(int sig)
{
	COUNT("on_urg");
	in_handler(sig);
	bail();
}

NOINLINE void on_alrm(int sig)
{
	COUNT("on_alrm");
	/* An expiry already pending when the timer was stopped: not one more alarm. */
	if (alarms >= alarms_wanted)
		return;
	in_handler(sig);
	if (++alarms >= alarms_wanted) {
		struct itimerval off;

		memset(&off, 0, sizeof(off));
		setitimer(ITIMER_REAL, &off, NULL);
	}
}

NOINLINE void work(int depth, int sig)
{
	COUNT("work");
	if (depth == 0)
		raise(sig);
	else
		work(depth - 1, sig);
	sink++;
}

NOINLINE void after_bail(void)
{
	COUNT("after_bail");
	sink++;
}

NOINLINE void round_trip(void)
{
	COUNT("round_trip");
	work(4, SIGUSR1);
	work(4, SIGUSR2);
	if (!sigsetjmp(bail_env, 1))
		work(4, SIGURG);
	after_bail();
}

NOINLINE long spin(int depth)
{
	COUNT("spin");
	if (depth == 0)
		return sink;
	long r = spin(depth - 1);
	sink++;
	return r + 1;
}

SLED_UNCOUNTED static void handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL))
		abort();
}

int main(int argc, char **argv)
{
	int async = argc > 1 && !strcmp(argv[1], "async");
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : async ? 300 : 500;
	stack_t ss;

	COUNT("main");
	if (async) {
		struct itimerval every = { { 0, 200 }, { 0, 200 } };

		alarms_wanted = n;
		handle(SIGALRM, on_alrm, SA_RESTART);
		setitimer(ITIMER_REAL, &every, NULL);
		while (alarms < alarms_wanted)
			spin(20);
		printf("alarms %d\n", (int)alarms);
		sled_count_print();
		return 0;
	}
	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = alt_stack;
	ss.ss_size = sizeof(alt_stack);
	if (sigaltstack(&ss, NULL))
		abort();
	handle(SIGUSR1, on_usr1, 0);
	handle(SIGUSR2, on_usr2, SA_ONSTACK);
	handle(SIGURG, on_urg, 0);
	for (long i = 0; i < n; i++)
		round_trip();
	printf("on alt stack: %s\nsink %ld\n", not_on_alt ? "no" : "yes", (long)sink);
	sled_count_print();
	return 0;
}
