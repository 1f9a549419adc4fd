/*
 * s-unmap.c - a program that takes away shared memory it did not create:
 * it walks /proc/self/maps and unmaps (or write-protects, or discards)
 * every shared mapping there, as a program that drops what it inherited
 * before it goes on might.  It has none of its own, so without callprof it
 * finds nothing; under callprof it finds the runtime's, which the runtime
 * must keep usable without the program noticing.
 *
 *   t-unmap HOW   HOW: munmap, mprotect, madvise (MADV_DONTNEED and
 *                 MADV_REMOVE), mremap (moves each one elsewhere), or
 *                 syscall (munmap through syscall(2)); then threads and
 *                 calls as usual, prints a checksum, exits 3
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "workload.h"

volatile long sink;

NOINLINE static long leaf(long i)
{
	return i % 7;
}

/* It writes sink: not a pure function, whose second call -O2 would drop. */
NOINLINE static long work(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += leaf(i);
	sink = s;
	return s;
}

static void *thread_main(void *arg)
{
	*(long *)arg = work(20000);
	return NULL;
}

/* Apply how to [start, end); the result of the call, as the program sees it. */
static int take(const char *how, unsigned long start, unsigned long end)
{
	void *p = (void *)start;
	size_t len = end - start;

	if (!strcmp(how, "munmap"))
		return munmap(p, len);
	if (!strcmp(how, "syscall"))
		return (int)syscall(SYS_munmap, p, len);
	if (!strcmp(how, "mprotect"))
		return mprotect(p, len, PROT_READ);
	if (!strcmp(how, "madvise"))
		return madvise(p, len, MADV_DONTNEED) | madvise(p, len, MADV_REMOVE);
	if (!strcmp(how, "mremap"))
		return mremap(p, len, len, MREMAP_MAYMOVE) == MAP_FAILED ? -1 : 0;
	return -1;
}

NOINLINE static int take_shared(const char *how)
{
	unsigned long start[256], end[256];
	char line[512];
	int n = 0, failed = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	/* Read first, act after: the maps change under a reader. */
	while (f && n < 256 && fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &start[n], &end[n], perms) == 3 && perms[3] == 's')
			n++;
	}
	if (f)
		fclose(f);
	for (int i = 0; i < n; i++)
		failed += take(how, start[i], end[i]) != 0;
	return failed;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	long r[2], sum;
	int failed;

	if (argc < 2)
		return 2;
	sum = work(1000);
	failed = take_shared(argv[1]);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, thread_main, &r[i]);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		sum += r[i];
	}
	sum += work(1000);
	printf("sum %ld\n", sum);
	if (failed)
		printf("%d calls failed\n", failed);
	return 3;
}
