/*
 * s-leave.c - a run that leaves a process behind:
 *
 *   s-leave PIDFILE GO   main calls work(); a fork child calls work(),
 *                        writes its pid to PIDFILE, waits until the file
 *                        GO exists (at most 30 s), calls work() again and
 *                        exits 0.  main exits 0 at once.  record must not
 *                        wait for the child's watcher: that one writes the
 *                        child's profile when the child ends.
 */
#include <stdio.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE void work(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	FILE *f;

	if (argc != 3)
		return 2;
	work();
	if (fork() != 0)
		return 0;
	work();
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
		return 3;
	for (int i = 0; i < 3000 && access(argv[2], F_OK); i++)
		usleep(10000);
	work();
	return 0;
}
