/*
 * s-lines.c - a function with a few distinct hot lines and calls into
 * code without hooks (a helper built without them, and libc), for
 * `report --lines`: t0330 places samples on these lines by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile unsigned sink;

__attribute__((no_instrument_function, patchable_function_entry(0, 0), noinline)) static unsigned helper(unsigned x)
{
	return x * 2654435761u;
}

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static void work(int n)
{
	int v[64];

	for (int i = 0; i < n; i++) {
		sink += (unsigned)i * 3u;	/* LINE-A */
		sink ^= sink >> 3;		/* LINE-B */
		sink += helper(sink);
	}
	for (int i = 0; i < 64; i++)
		v[i] = (int)(sink >> (i % 16)) & 255;
	qsort(v, 64, sizeof(v[0]), cmp);
	sink += (unsigned)v[0];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;

	work(n);
	work(n / 2);
	printf("%u\n", sink);
	return 0;
}
