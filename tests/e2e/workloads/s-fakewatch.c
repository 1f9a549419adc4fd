/*
 * s-fakewatch.c - processes that pretend to be a program's watcher, for
 * `callprof dump` (run as root only: the fakes run as another user).
 *
 *   t-fakewatch outside PID FILE   an uninstrumented process that takes a
 *                                  watcher's name (callprof-watch) and a
 *                                  pidfd on PID, as any user can, and
 *                                  answers every snapshot request with a
 *                                  descriptor on FILE
 *   t-fakewatch inside FILE        an instrumented program (its watcher
 *                                  starts at its first call) that clones a
 *                                  child sharing its memory, as only the
 *                                  program itself can; the child takes a
 *                                  watcher's name and a pidfd on the
 *                                  program and answers requests with a
 *                                  descriptor on FILE (opened with O_PATH
 *                                  if the program may not read it)
 *
 * Each says "ready PID FAKE" on stdout once it is in place (PID: the
 * program it pretends to watch, FAKE: its own), then waits to be killed
 * (at most a minute).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE void work(void)
{
	sink++;
}

/* Be a watcher of pid, answering with fd; never returns. */
static NOINSTR __attribute__((noreturn)) void pretend(pid_t pid, int fd)
{
	sigset_t set;
	siginfo_t si;
	long pidfd = syscall(SYS_pidfd_open, (long)pid, 0L);

	alarm(60);
	prctl(PR_SET_NAME, "callprof-watch");
	if (pidfd < 0 || fd < 0) {
		perror("t-fakewatch");
		_exit(1);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d %d\n", (int)pid, (int)getpid());
	fflush(stdout);
	for (;;) {
		if (sigwaitinfo(&set, &si) == SIGUSR2 && si.si_code == SI_QUEUE) {
			union sigval v = { .sival_int = fd };

			sigqueue(si.si_pid, SIGUSR2, v);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "outside"))
		pretend((pid_t)atoi(argv[2]), open(argv[3], O_RDONLY | O_CLOEXEC));
	if (argc == 3 && !strcmp(argv[1], "inside")) {
		pid_t self = getpid();
		long child;

		work();
		/* A clone without the fork handlers keeps sharing the runtime's memory. */
		child = syscall(SYS_clone, (long)SIGCHLD, NULL, NULL, NULL, 0L);
		if (child == 0) {
			int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

			pretend(self, fd >= 0 ? fd : open(argv[2], O_PATH | O_CLOEXEC));
		}
		if (child < 0)
			return 1;
		alarm(60);
		for (;;)
			pause();
	}
	fprintf(stderr, "usage: t-fakewatch outside PID FILE | inside FILE\n");
	return 2;
}
