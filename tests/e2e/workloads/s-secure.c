/*
 * s-secure.c - a program to install setuid: prints its real and effective
 * user ids ("uid=R euid=E") and makes a few calls.  Linked with the static
 * runtime (LD_PRELOAD is ignored in secure-execution mode).
 */
#include <stdio.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE static int leaf(int i)
{
	return i * 3 + 1;
}

NOINLINE static int work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += leaf(i);
	sink = s;
	return s;
}

int main(void)
{
	printf("uid=%d euid=%d sum=%d\n", (int)getuid(), (int)geteuid(), work(10));
	return 0;
}
