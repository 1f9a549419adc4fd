/*
 * s-waitfile.c - t-waitfile N FILE: call step() N times, say it started
 * (creates started.PID), then wait until FILE exists before returning, so
 * that a test can hold two runs open at once and let them end together.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void step(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	char started[64];
	FILE *f;

	for (int i = 0; i < n; i++)
		step();
	snprintf(started, sizeof(started), "started.%d", (int)getpid());
	f = fopen(started, "w");
	if (f)
		fclose(f);
	while (argc > 2 && access(argv[2], F_OK))
		usleep(10000);
	return 0;
}
