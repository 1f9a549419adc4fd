/*
 * s-forkexec.c - fork children that run no instrumented code, and one that
 * does: which of them write a profile (a process that ran no instrumented
 * code writes none).  Also built without -finstrument-functions, for a
 * program that uses the API only.
 *
 *   t-forkexec exec     spawn() forks a child that execs true(1) at once
 *   t-forkexec return   the child returns from spawn() into main (exit
 *                       hooks only) and main returns
 *   t-forkexec api      labels its thread through the API, forks nothing
 *
 * Prints "done MODE" and exits 3, so the tests see status and output.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../include/callprof.h"
#include "workload.h"

volatile long sink;

NOINLINE void work(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

/* The child's pid in the parent; 0 in a child that returns. */
NOINLINE pid_t spawn(int exec_it)
{
	pid_t pid = fork();

	if (pid == 0 && exec_it) {
		execlp("true", "true", (char *)NULL);
		_exit(127);
	}
	return pid;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exec";
	pid_t pid;

	if (!strcmp(mode, "api")) {
		callprof_set_thread_name("labelled");
		printf("done %s\n", mode);
		return 3;
	}
	work(10);
	pid = spawn(!strcmp(mode, "exec"));
	if (pid == 0)
		return 0; /* the child of "return" */
	waitpid(pid, NULL, 0);
	printf("done %s\n", mode);
	return 3;
}
