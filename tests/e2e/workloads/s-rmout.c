/*
 * s-rmout.c - a program that takes its profile's directory away:
 *
 *   s-rmout DIR   calls work() 3 times, then removes the (empty) directory
 *                 DIR, where its profile was to go, and exits 0: the
 *                 runtime cannot write the profile.
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
	if (argc != 2)
		return 2;
	for (int i = 0; i < 3; i++)
		work();
	if (rmdir(argv[1])) {
		perror("s-rmout: rmdir");
		return 3;
	}
	return 0;
}
