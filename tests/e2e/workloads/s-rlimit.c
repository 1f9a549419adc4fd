/*
 * s-rlimit.c - a program that lowers its own address-space limit.
 *   ./t-rlimit          prints its VmSize (kB) before it does anything
 *   ./t-rlimit MB       sets RLIMIT_AS to MB megabytes, then allocates and
 *                       touches 64 MB and calls work() 1000 times
 * Exits 0 when the allocation succeeded, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "workload.h"

volatile long sink;

NOINLINE void work(int k)
{
	sink += k;
}

static long vmsize_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	char *p;

	if (argc < 2) {
		work(1);
		printf("VmSize %ld\n", vmsize_kb());
		return 0;
	}
	rl.rlim_cur = rl.rlim_max = (rlim_t)atol(argv[1]) << 20;
	if (setrlimit(RLIMIT_AS, &rl)) {
		perror("setrlimit");
		return 2;
	}
	p = malloc(64 << 20);
	if (!p) {
		puts("malloc failed");
		return 1;
	}
	memset(p, 1, 64 << 20);
	for (int i = 0; i < 1000; i++)
		work(p[i * 4096]);
	free(p);
	puts("malloc ok");
	return 0;
}
