/*
 * s-daemon.c - a daemon's exit: every file descriptor closed (standard
 * streams included) and the working directory changed to /, then more
 * calls and a normal exit.  The profile must still appear where it was
 * asked for.
 *
 *   t-daemon                  as above, in the one process
 *   t-daemon fork READY STOP  a daemon as servers make one: forks, the child
 *                             starts a session and forks the daemon, which
 *                             calls work(10), detaches as above, writes its
 *                             pid to READY and runs until STOP exists (at
 *                             most a minute), then calls work(20); the
 *                             parent returns as soon as READY is there.
 *                             READY and STOP are absolute paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

/* The daemon: tell READY our pid (written to a temporary, then renamed). */
__attribute__((noinline)) static void serve(const char *ready, const char *stop)
{
	char tmp[4096];
	FILE *f;

	work(10);
	detach();
	snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
	f = fopen(tmp, "w");
	if (!f)
		exit(1);
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	rename(tmp, ready);
	for (int i = 0; i < 600 && access(stop, F_OK); i++)
		usleep(100000);
	work(20);
	exit(0);
}

__attribute__((noinline)) static int daemonize(const char *ready, const char *stop)
{
	pid_t child = fork();

	if (child == 0) {
		setsid();
		if (fork() == 0)
			serve(ready, stop);
		_exit(0);
	}
	if (child < 0 || waitpid(child, NULL, 0) != child)
		return 1;
	while (access(ready, F_OK))
		usleep(10000);
	puts("daemon started");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "fork"))
		return daemonize(argv[2], argv[3]);
	work(10);
	puts("detaching");
	fflush(stdout);
	detach();
	work(20);
	return 0;
}
