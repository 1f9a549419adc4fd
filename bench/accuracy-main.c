/*
 * accuracy-main.c - the driver of bench/accuracy's workload, never
 * instrumented.  It runs the instrumented copy of accuracy-work.c for
 * callprof to record, and times the uninstrumented copy (plain_*) with
 * CLOCK_MONOTONIC: the truth.
 *
 *	accuracy-work profile ROUNDS DIV   ROUNDS rounds, each: mixed(), then
 *	                                   the truth of each work function
 *	accuracy-work truth REPS DIV       the truth alone, REPS calls each
 *	accuracy-work counts ROUNDS DIV    the calls `profile` makes, per
 *	                                   instrumented function
 *
 * DIV divides every size (1 for the benchmark, 100 for the smoke test).
 *
 * In `profile`, each round calls, for each work function, the instrumented
 * mixed() (which calls that work function once, among small() calls) and
 * the plain copy of the function twice, timed alone: with its tiny() calls
 * and without them (bare).  The truth is thus measured within a few
 * milliseconds of the recorded call, so a noisy machine slows both alike;
 * odd rounds time the plain copy first, so no drift favours either.
 * `truth` measures the same in a process of its own, REPS calls in a row.
 * Both print, for work_a to work_d, "truth NAME WITH BARE", the mean ns per
 * call, and "truth tiny NS", one uninstrumented tiny() call (the best of 9
 * loops of b_chunks calls).  `profile` also prints "calls tiny N small N":
 * how often the instrumented tiny() and small() ran.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accuracy.h"

typedef uint64_t (*work_fn)(uint64_t);

static const struct {
	const char *name;	/* the instrumented function's name */
	work_fn plain;		/* its uninstrumented copy */
} works[] = {
	{ "work_a", plain_work_a },
	{ "work_b", plain_work_b },
	{ "work_c", plain_work_c },
	{ "work_d", plain_work_d },
};
#define NWORKS (sizeof(works) / sizeof(works[0]))

static struct accuracy_sizes sz;
static volatile uint64_t sink = 1;	/* keeps every result alive */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Time N calls of FN; ns in all. */
static double time_calls(work_fn fn, long n)
{
	uint64_t x = sink;
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		x = fn(x);
	sink = x;
	return now_ns() - t0;
}

/* tiny() loops of b_chunks calls, as work_b makes them. */
static uint64_t tiny_loop(uint64_t x)
{
	for (long c = 0; c < sz.b_chunks; c++)
		plain_tiny();
	return x + 1;
}

/* One uninstrumented tiny() call: the best of 9 loops of b_chunks calls. */
static double tiny_ns(void)
{
	double best = 0;

	for (int i = 0; i < 9; i++) {
		double t = time_calls(tiny_loop, 1);

		if (i == 0 || t < best)
			best = t;
	}
	return best / sz.b_chunks;
}

/* Add CALLS timed calls of plain work function I, with and without tiny(). */
static void time_plain(size_t i, double *with, double *bare, long calls)
{
	plain_accuracy_with_calls(1);
	with[i] += time_calls(works[i].plain, calls);
	plain_accuracy_with_calls(0);
	bare[i] += time_calls(works[i].plain, calls);
	plain_accuracy_with_calls(1);
}

static void print_truth(const double *with, const double *bare, long calls)
{
	for (size_t i = 0; i < NWORKS; i++)
		printf("truth %s %.1f %.1f\n", works[i].name, with[i] / calls, bare[i] / calls);
	printf("truth tiny %.3f\n", tiny_ns());
}

static long arg(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 1) {
		fprintf(stderr, "accuracy-work: bad %s '%s'\n", what, s);
		exit(129);
	}
	return v;
}

int main(int argc, char **argv)
{
	double with[NWORKS] = { 0 }, bare[NWORKS] = { 0 };
	long n, div;

	if (argc != 4) {
		fprintf(stderr, "usage: accuracy-work profile|truth|counts N DIV\n");
		return 129;
	}
	n = arg(argv[2], "count");
	div = arg(argv[3], "divisor");
	sz.a_chunks = A_CHUNKS / div;
	sz.b_chunks = B_CHUNKS / div;
	sz.c_chunks = C_CHUNKS / div;
	sz.d_chunks = D_CHUNKS / div;
	sz.small_calls = SMALL_CALLS / div;
	if (sz.a_chunks < 1 || sz.b_chunks < 1 || sz.c_chunks < 1 || sz.d_chunks < 1 ||
	    sz.small_calls < 2) {
		fprintf(stderr, "accuracy-work: divisor %ld too large\n", div);
		return 129;
	}
	accuracy_setup(&sz);
	plain_accuracy_setup(&sz);

	if (!strcmp(argv[1], "profile")) {
		uint64_t x = 1;

		for (size_t i = 0; i < NWORKS; i++)
			time_plain(i, with, bare, 1);	/* warm-up */
		memset(with, 0, sizeof(with));
		memset(bare, 0, sizeof(bare));
		for (long r = 0; r < n; r++) {
			for (size_t i = 0; i < NWORKS; i++) {
				/* alternate the order: no drift favours either */
				if (r % 2)
					time_plain(i, with, bare, 1);
				x = mixed(x, i);
				if (!(r % 2))
					time_plain(i, with, bare, 1);
			}
		}
		sink ^= x;
		print_truth(with, bare, n);
		printf("calls tiny %lu small %lu\n", accuracy_tiny_calls(), accuracy_small_calls());
	} else if (!strcmp(argv[1], "truth")) {
		for (size_t i = 0; i < NWORKS; i++)
			time_plain(i, with, bare, 1);	/* warm-up */
		memset(with, 0, sizeof(with));
		memset(bare, 0, sizeof(bare));
		for (size_t i = 0; i < NWORKS; i++)
			time_plain(i, with, bare, n);
		print_truth(with, bare, n);
	} else if (!strcmp(argv[1], "counts")) {
		printf("mixed %ld\n", n * (long)NWORKS);
		printf("small %ld\n", n * (long)NWORKS * sz.small_calls);
		for (size_t i = 0; i < NWORKS; i++)
			printf("%s %ld\n", works[i].name, n);
		printf("tiny %ld\n", n * (sz.b_chunks + sz.c_chunks + sz.d_chunks));
	} else {
		fprintf(stderr, "accuracy-work: unknown mode '%s'\n", argv[1]);
		return 129;
	}
	return 0;
}
