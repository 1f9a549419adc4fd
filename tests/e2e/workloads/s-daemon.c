/*
 * s-daemon.c - a daemon's exit: every file descriptor closed (standard
 * streams included) and the working directory changed to /, then more
 * calls and a normal exit.  The profile must still appear where it was
 * asked for.
 */
#include <stdio.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) void work(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) void detach(void)
{
	for (int fd = 0; fd < 1024; fd++)
		close(fd);
	if (chdir("/") != 0)
		sink = -1;
}

int main(void)
{
	work(10);
	puts("detaching");
	fflush(stdout);
	detach();
	work(20);
	return 0;
}
