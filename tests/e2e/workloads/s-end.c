/*
 * s-end.c - every way a process ends: s-end HOW, where HOW is exit,
 * return, thread (exit() from a second thread while main waits), _exit,
 * abort, segv, term (SIGTERM, default action) or kill (SIGKILL).
 *
 * main() calls work() 10 times, then finish(), whose die() ends the process
 * (for "return", die() returns and main returns 3).  Before dying it checks
 * that the program still sees SIG_DFL for SIGSEGV and SIGTERM, whatever
 * the profiler installed.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE void leaf(void)
{
	sink++;
}

NOINLINE void work(void)
{
	leaf();
}

NOINLINE static int default_disposition(int sig)
{
	struct sigaction sa;

	return !sigaction(sig, NULL, &sa) && !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL;
}

NOINLINE void die(const char *how)
{
	if (!default_disposition(SIGSEGV) || !default_disposition(SIGTERM) ||
	    signal(SIGSEGV, SIG_DFL) != SIG_DFL) {
		fprintf(stderr, "the program does not see SIG_DFL\n");
		exit(9);
	}
	if (!strcmp(how, "exit") || !strcmp(how, "thread"))
		exit(3);
	if (!strcmp(how, "_exit"))
		_exit(3);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "segv"))
		*(volatile int *)(sink * 0) = 1;
	if (!strcmp(how, "term"))
		raise(SIGTERM);
	if (!strcmp(how, "kill"))
		raise(SIGKILL);
	sink++;
}

NOINLINE void finish(const char *how)
{
	die(how);
	sink++;
}

static void *thread_main(void *arg)
{
	finish(arg);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "return";
	pthread_t th;

	for (int i = 0; i < 10; i++)
		work();
	if (!strcmp(how, "thread")) {
		pthread_create(&th, NULL, thread_main, argv[1]);
		pthread_join(th, NULL);
	} else {
		finish(how);
	}
	return 3;
}
