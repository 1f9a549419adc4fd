/*
 * s-fsize: a program that lowers its own file size limit, and says how
 * its signals were left to it.
 *
 *   t-fsize [BYTES]
 *
 * Prints "pipe=dfl|ign xfsz=dfl|ign" (the dispositions it started with),
 * then, with BYTES, sets RLIMIT_FSIZE to BYTES, runs a few calls and
 * prints "sum=N" through stdio (buffered: lost if the process dies before
 * exit flushes it).  Exits 7.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "workload.h"

volatile long sink;

static const char *disposition(int sig)
{
	struct sigaction sa;

	if (sigaction(sig, NULL, &sa))
		return "?";
	return sa.sa_handler == SIG_IGN ? "ign" : sa.sa_handler == SIG_DFL ? "dfl" : "handler";
}

NOINLINE long leaf(int i)
{
	sink += i;
	return i;
}

NOINLINE long branch(int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += leaf(i);
	return s;
}

int main(int argc, char **argv)
{
	long sum = 0;

	printf("pipe=%s xfsz=%s\n", disposition(SIGPIPE), disposition(SIGXFSZ));
	fflush(stdout);
	if (argc > 1) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = (rlim_t)strtoul(argv[1], NULL, 10);
		if (setrlimit(RLIMIT_FSIZE, &rl))
			return 2;
	}
	for (int i = 0; i < 10; i++)
		sum += branch(i);
	printf("sum=%ld\n", sum);
	return 7;
}
