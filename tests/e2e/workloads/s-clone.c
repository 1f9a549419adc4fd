/*
 * s-clone.c - children made by clone() rather than fork(): no fork
 * handlers run in them.  A child calls instrumented functions and ends
 * with status 7; the parent checks that and goes on calling.
 *   ./t-clone          glibc clone(fn, stack, SIGCHLD, arg), then raw
 *                      syscall(SYS_clone, SIGCHLD, 0, ...)
 * The parent calls work() 10 times before and 10 times after each child
 * (40 in all); each child calls child_work() 5 times and writes "child ok".
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE void work(int k)
{
	for (int i = 0; i < k; i++)
		sink += i;
}

NOINLINE void child_work(int k)
{
	work(k);
}

static NOINLINE int child(void *arg)
{
	for (int i = 0; i < 5; i++)
		child_work(100);
	/* Unbuffered: the child's exit flushes nothing twice. */
	if (write(1, "child ok\n", 9) != 9)
		return 1;
	return 7;
}

static NOINLINE int reap(pid_t pid, const char *how)
{
	int status;

	if (pid < 0) {
		perror(how);
		return 1;
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 7) {
		fprintf(stderr, "%s child: status 0x%x\n", how, status);
		return 1;
	}
	printf("%s child exited 7\n", how);
	fflush(stdout);
	return 0;
}

int main(void)
{
	static char stack[256 << 10] __attribute__((aligned(16)));
	int bad = 0;
	long pid;

	fflush(stdout);
	for (int i = 0; i < 10; i++)
		work(10);
	bad |= reap(clone(child, stack + sizeof(stack), SIGCHLD, NULL), "clone");
	for (int i = 0; i < 10; i++)
		work(10);
	pid = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
	if (pid == 0)
		_exit(child(NULL));
	bad |= reap((pid_t)pid, "syscall");
	for (int i = 0; i < 20; i++)
		work(10);
	return bad;
}
