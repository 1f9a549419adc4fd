/*
 * s-attach-tracer.c - another tracer: seizes PID (a process, or one of its
 * threads) with PTRACE_SEIZE (which does not stop it), writes its own pid
 * to READY, and waits; the kernel detaches it when
 * it dies.  Ends by itself after a minute.
 *
 *   t-attach-tracer PID READY
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t pid;
	FILE *f;

	if (argc != 3)
		return 2;
	pid = (pid_t)strtol(argv[1], NULL, 10);
	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL))
		return perror("PTRACE_SEIZE"), 1;
	f = fopen(argv[2], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
		return perror(argv[2]), 1;
	sleep(60);
	return 0;
}
