/*
 * test-diff.c - the diff's arithmetic on hand-made profiles, where times
 * are exact (one tick is one nanosecond) and so are the time floor and
 * the --fail-if conditions; and the condition grammar.
 *
 * The functions are in no module, so both profiles name them
 * "[unknown]+0xADDR" from the same addresses: they match.
 */
#include <stdio.h>
#include <stdlib.h>

#include "format/format.h"
#include "report/diff.h"
#include "report/report.h"
#include "tests/unit/unittest.h"

static struct cp_writer w;

/* One thread, no calibration (raw times), root lifetime root_ticks. */
static void write_profile(const char *path, const struct cp_node_rec *n, uint32_t nn,
			  uint64_t root_ticks)
{
	struct cp_meta meta = { 0 };
	struct cp_thread_rec th = { .nthreads = 1, .tid = 1 };
	struct cp_node_rec *all = calloc(nn + 1, sizeof(*all));

	all[0] = (struct cp_node_rec){ .parent = CP_NO_PARENT, .calls = 1, .ticks = root_ticks };
	memcpy(all + 1, n, nn * sizeof(*n));
	CHECK_EQ(cp_writer__begin(&w, path), 0);
	meta.clock = CP_CLOCK_MONOTONIC;
	meta.ticks_per_sec = 1000000000u;
	cp_writer__section(&w, CP_SEC_META, sizeof(meta));
	cp_writer__put(&w, &meta, sizeof(meta));
	cp_writer__section(&w, CP_SEC_NODES, sizeof(all[0]));
	cp_writer__put(&w, all, (nn + 1) * sizeof(*all));
	th.nnodes = nn + 1;
	th.name = cp_writer__string(&w, "main");
	cp_writer__section(&w, CP_SEC_THREADS, sizeof(th));
	cp_writer__put(&w, &th, sizeof(th));
	CHECK_EQ(cp_writer__finish(&w, CP_FEAT_TIMING), 0);
	free(all);
}

/*
 *   A: P 0x100 (1 call, 10000)  B: P (1 call, 10000)
 *        C 0x200 (10, 1000)          C (10, 3000)       self 3x
 *        G 0x300 (1, 50)             -                  gone, below the floor
 *        -                           D 0x400 (1, 500)   new
 * Floor at 1%: 100ns.  P's self falls from 8950 to 6500.
 */
static struct cp_report_profile *a, *b;

static struct cp_diff *setup(double min_percent)
{
	struct cp_report_opts o = { .threads = CP_THREADS_MERGED };
	const struct cp_node_rec na[] = {
		{ .fn = 0x100, .parent = 0, .calls = 1, .ticks = 10000 },
		{ .fn = 0x200, .parent = 1, .calls = 10, .ticks = 1000 },
		{ .fn = 0x300, .parent = 1, .calls = 1, .ticks = 50 },
	};
	const struct cp_node_rec nb[] = {
		{ .fn = 0x100, .parent = 0, .calls = 1, .ticks = 10000 },
		{ .fn = 0x200, .parent = 1, .calls = 10, .ticks = 3000 },
		{ .fn = 0x400, .parent = 1, .calls = 1, .ticks = 500 },
	};

	write_profile("a.cprof", na, 3, 10000);
	write_profile("b.cprof", nb, 3, 10000);
	a = cp_report_profile__load("a.cprof", &o);
	b = cp_report_profile__load("b.cprof", &o);
	CHECK(a && b && a->timed && !a->compensated);
	return cp_diff__new(a, b, min_percent);
}

static void teardown(struct cp_diff *d)
{
	cp_diff__free(d);
	cp_report_profile__free(a);
	cp_report_profile__free(b);
}

/* Check condition text on d: whether it holds, and the line it prints. */
static void check_cond(struct cp_diff *d, const char *text, const char *line)
{
	struct cp_diff_cond c;
	const char *why = NULL;
	char *buf = NULL;
	size_t size = 0;
	FILE *fp = open_memstream(&buf, &size);
	int held;

	CHECK_EQ(cp_diff_cond__parse(&c, text, &why), 0);
	held = cp_diff__check(d, &c, fp);
	fclose(fp);
	CHECK_EQ(held, line != NULL);
	CHECK_STR(buf, line ? line : "");
	free(buf);
}

#define P "[unknown]+0x100"

TEST(time_conditions_use_the_floor)
{
	struct cp_diff *d = setup(1);

	CHECK(cp_diff__timed(d));
	/* D is new (an infinite growth), C grew 3x; P fell. */
	check_cond(d, "self>+10%",
		   "callprof: fail-if 'self>+10%' holds for 2 call paths; worst: " P
		   " > [unknown]+0x400: self 0ns -> 500ns (new)\n");
	check_cond(d, "self>+1us",
		   "callprof: fail-if 'self>+1us' holds for 1 call path; worst: " P
		   " > [unknown]+0x200: self 1.00us -> 3.00us (+2.00us, 3.00x)\n");
	check_cond(d, "self>+2us", NULL);
	check_cond(d, "total>+0ns",
		   "callprof: fail-if 'total>+0ns' holds for 2 call paths; worst: " P
		   " > [unknown]+0x200: total 1.00us -> 3.00us (+2.00us, 3.00x)\n");
	/* G fell by 100% but its 50ns are below the 100ns floor; P fell by 27%. */
	check_cond(d, "self<-10%",
		   "callprof: fail-if 'self<-10%' holds for 1 call path; worst: " P
		   ": self 8.95us -> 6.50us (-2.45us, 0.73x)\n");
	check_cond(d, "self<-30%", NULL);
	teardown(d);
}

TEST(a_zero_floor_counts_every_time)
{
	struct cp_diff *d = setup(0);

	check_cond(d, "self<-50%",
		   "callprof: fail-if 'self<-50%' holds for 1 call path; worst: " P
		   " > [unknown]+0x300: self 50ns -> 0ns (gone)\n");
	teardown(d);
}

TEST(calls_conditions_ignore_the_floor)
{
	struct cp_diff *d = setup(50);

	/* G and D both changed by one call: D's larger self change ranks it first. */
	check_cond(d, "calls-changed",
		   "callprof: fail-if 'calls-changed' holds for 2 call paths; worst: " P
		   " > [unknown]+0x400: calls 0 -> 1 (new)\n");
	check_cond(d, "paths-changed",
		   "callprof: fail-if 'paths-changed' holds for 2 call paths; worst: " P
		   " > [unknown]+0x400: calls 0 -> 1 (new)\n");
	check_cond(d, "calls>+0", "callprof: fail-if 'calls>+0' holds for 1 call path; worst: " P
		   " > [unknown]+0x400: calls 0 -> 1 (new)\n");
	check_cond(d, "calls>+1", NULL);
	/* Above the 5000ns floor only P, whose self fell by 27%. */
	check_cond(d, "self>+10%", NULL);
	teardown(d);
}

TEST(condition_grammar)
{
	static const char *const bad[] = {
		"", "calls", "calls-changed ", "size>+1", "self>10%", "self>-10%", "self<+10%",
		"self>+", "self>+x", "self>+-1%", "self>+5", "self>+5kb", "calls>+5ms",
		"calls<-100%", "total>+1e999s", NULL,
	};
	struct cp_diff_cond c;
	const char *why;

	CHECK_EQ(cp_diff_cond__parse(&c, "total>+1.5ms", &why), 0);
	CHECK_EQ(c.kind, CP_COND_METRIC);
	CHECK_EQ(c.metric, CP_METRIC_TOTAL);
	CHECK_EQ(c.up, 1);
	CHECK_EQ(c.percent, 0);
	CHECK_EQ(c.limit, 1500000);
	CHECK(cp_diff_cond__timed(&c));
	CHECK_EQ(cp_diff_cond__parse(&c, "calls<-99.5%", &why), 0);
	CHECK_EQ(c.up, 0);
	CHECK_EQ(c.percent, 1);
	CHECK(c.limit == 99.5);
	CHECK(!cp_diff_cond__timed(&c));
	CHECK_EQ(cp_diff_cond__parse(&c, "paths-changed", &why), 0);
	CHECK_EQ(c.kind, CP_COND_PATHS_CHANGED);
	for (int i = 0; bad[i]; i++) {
		why = NULL;
		if (cp_diff_cond__parse(&c, bad[i], &why) == 0)
			cp_test__fail(__FILE__, __LINE__, "'%s' parsed", bad[i]);
		CHECK(why != NULL);
	}
}
