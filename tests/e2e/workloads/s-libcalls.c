/*
 * s-libcalls: calls into libc, for record --libcalls (t0350).
 *
 *   main -> run_sort -> qsort -> cmp (counted by the program itself)
 *   main -> writer -> write (x WRITES, to /dev/null)
 *   main -> allocs -> malloc, free (x ALLOCS each)
 *   main -> lengths -> strlen (x LENGTHS)
 *   main -> failing -> open("/nonexistent") : errno must be ENOENT
 *   main -> jumper -> qsort -> jcmp -> longjmp back to jumper (x JUMPS)
 *   main -> use_lib -> lc_lib_len -> strlen (x 3, in libslc.so when built
 *                                            with -DWITH_LIB)
 *
 * It prints its own comparator count on stderr ("cmp N") and a line of
 * results on stdout that must not change under the profiler.  A first
 * argument "loop N" instead calls strlen N times (the per-call cost).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

#define NSORT 1000
#define WRITES 7
#define ALLOCS 11
#define LENGTHS 13
#define JUMPS 5

volatile long sink;
static long ncmp;
static jmp_buf jb;

#ifdef WITH_LIB
long lc_lib_len(const char *s, int n);
#endif

NOINLINE static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	ncmp++;
	return (x > y) - (x < y);
}

NOINLINE static void run_sort(void)
{
	static int v[NSORT];

	for (int i = 0; i < NSORT; i++)
		v[i] = (i * 7919) % NSORT;
	qsort(v, NSORT, sizeof(v[0]), cmp);
	sink += v[NSORT / 2];
}

NOINLINE static void writer(void)
{
	int fd = open("/dev/null", O_WRONLY);

	for (int i = 0; i < WRITES; i++)
		sink += write(fd, "x", 1);
	close(fd);
}

NOINLINE static void allocs(void)
{
	for (int i = 0; i < ALLOCS; i++) {
		char *volatile p = malloc(16 + i);

		sink += p != NULL;
		free(p);
	}
}

NOINLINE static void lengths(void)
{
	static char s[64] = "hello, world";

	for (int i = 0; i < LENGTHS; i++) {
		s[0] = (char)('a' + i); /* not a constant: the call stays */
		sink += strlen(s);
	}
}

NOINLINE static int failing(void)
{
	int fd, e;

	errno = 0;
	fd = open("/nonexistent/callprof", O_RDONLY);
	e = errno;
	return fd < 0 && e == ENOENT;
}

NOINLINE static int jcmp(const void *a, const void *b)
{
	longjmp(jb, 1);
}

/*
 * A library function left by a longjmp from its callback (qsort: bsearch
 * is an inline function in glibc's header at -O2).
 */
NOINLINE static int jumper(void)
{
	static int v[4] = { 4, 3, 2, 1 };
	volatile int jumped = 0;

	if (setjmp(jb) == 0)
		qsort(v, 4, sizeof(int), jcmp);
	else
		jumped = 1;
	return jumped;
}

NOINLINE static void loop(long n)
{
	static char s[16] = "abc";

	for (long i = 0; i < n; i++) {
		s[1] = (char)i;
		sink += strlen(s);
	}
}

int main(int argc, char **argv)
{
	int ok, jumps = 0;

	if (argc > 2 && !strcmp(argv[1], "loop")) {
		loop(atol(argv[2]));
		return 0;
	}
	run_sort();
	writer();
	allocs();
	lengths();
	ok = failing();
	for (int i = 0; i < JUMPS; i++)
		jumps += jumper();
#ifdef WITH_LIB
	sink += lc_lib_len("abc", 3);
#endif
	printf("sorted %ld errno-ok %d jumps %d\n", sink > 0 ? 1L : 0L, ok, jumps);
	fprintf(stderr, "cmp %ld\n", ncmp);
	return ok && jumps == JUMPS ? 0 : 1;
}
