/*
 * s-fork.c - a fork child with its own calls, and a shell command (sh and
 * an uninstrumented program, both with the runtime preloaded) that must
 * leave no profile of its own.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) void work(int k)
{
	for (int i = 0; i < k; i++)
		sink += i;
}

__attribute__((noinline)) void child_only(void)
{
	work(5);
}

int main(void)
{
	pid_t pid;

	work(10);
	pid = fork();
	if (pid == 0) {
		child_only();
		return 0;
	}
	waitpid(pid, NULL, 0);
	return system("true");
}
