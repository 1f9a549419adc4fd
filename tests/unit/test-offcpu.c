/*
 * test-offcpu.c - off-CPU time and sampled profiles in the report model:
 * exclusive wait and inactive time from the file, their subtree sums
 * (over call-site records and threads merged by path), cpu = total -
 * wait - inactive with its clamp, the flat profile's recursion-aware
 * sums, `callprof merge` keeping the exclusive values, and what the views
 * print for them.
 *
 * Profiles are written with the real writer; one tick is one nanosecond
 * (CLOCK_MONOTONIC), so every expected value is worked out by hand from
 * the records below.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "tests/unit/rtree.h"
#include "tests/unit/unittest.h"

static struct cp_writer w;

/* Write meta, the threads (first_node and nnodes set here) and their nodes. */
static void write_profile(const char *path, struct cp_meta meta, struct cp_thread_rec *th,
			  uint32_t nth, const struct cp_node_rec *n, uint32_t nn)
{
	uint32_t first = 0;

	CHECK_EQ(cp_writer__begin(&w, path), 0);
	if (!meta.clock) {
		meta.clock = CP_CLOCK_MONOTONIC;
		meta.ticks_per_sec = 1000000000u;
	}
	cp_writer__section(&w, CP_SEC_META, sizeof(meta));
	cp_writer__put(&w, &meta, sizeof(meta));
	cp_writer__section(&w, CP_SEC_NODES, sizeof(*n));
	cp_writer__put(&w, n, nn * sizeof(*n));
	for (uint32_t i = 0; i < nth; i++) {
		th[i].first_node = first;
		th[i].name = cp_writer__string(&w, i ? "worker" : "main");
		th[i].nthreads = 1;
		th[i].tid = i + 1;
		first += th[i].nnodes;
	}
	CHECK_EQ(first, nn);
	cp_writer__section(&w, CP_SEC_THREADS, sizeof(*th));
	cp_writer__put(&w, th, nth * sizeof(*th));
	CHECK_EQ(cp_writer__finish(&w, CP_FEAT_TIMING), 0);
}

/*
 * Two threads, wait/inactive/vol/invol exclusive per record:
 *   main:   root ticks 1000 wait 50
 *             A 0x100  ticks 900 wait 100 inactive 20 vol 1
 *               B 0x200 ticks 400 wait 150 inactive 10 vol 2 invol 1 (site 0x1010)
 *               B 0x200 ticks 200 wait 60           vol 1    (site record, site 0x1020)
 *               C 0x300 ticks 100 inactive 30 invol 4
 *   worker: root ticks 500
 *             A 0x100  ticks 450 wait 40
 *               B 0x200 ticks 300 wait 290 inactive 20 (site 0x1010)
 * Merged: A wait 140 inactive 20; B wait 500 inactive 30; C inactive 30.
 */
static void make_split(const char *path, uint32_t switches)
{
	struct cp_meta meta = { .switches = switches };
	struct cp_thread_rec th[2] = { { .nnodes = 5, .cpu_ns = 700 },
				       { .nnodes = 3, .cpu_ns = 100 } };
	struct cp_node_rec n[8] = {
		{ .parent = CP_NO_PARENT, .ticks = 1000, .wait_ticks = 50 },
		{ .fn = 0x100, .parent = 0, .calls = 1, .ticks = 900, .wait_ticks = 100,
		  .inactive_ticks = 20, .switches_vol = 1 },
		{ .fn = 0x200, .parent = 1, .calls = 4, .ticks = 400, .wait_ticks = 150,
		  .inactive_ticks = 10, .switches_vol = 2, .switches_invol = 1, .site = 0x1010 },
		{ .fn = 0x200, .parent = 1, .calls = 2, .ticks = 200, .wait_ticks = 60,
		  .switches_vol = 1, .site = 0x1020, .flags = CP_NODE_SITE },
		{ .fn = 0x300, .parent = 1, .calls = 1, .ticks = 100, .inactive_ticks = 30,
		  .switches_invol = 4 },
		{ .parent = CP_NO_PARENT, .ticks = 500 },
		{ .fn = 0x100, .parent = 0, .calls = 1, .ticks = 450, .wait_ticks = 40 },
		{ .fn = 0x200, .parent = 1, .calls = 3, .ticks = 300, .wait_ticks = 290,
		  .inactive_ticks = 20, .site = 0x1010 },
	};

	write_profile(path, meta, th, 2, n, 8);
}

static struct cp_report_profile *load(const char *path, enum cp_thread_mode threads,
				      int no_compensate)
{
	struct cp_report_opts o = { .threads = threads, .no_compensate = no_compensate };
	struct cp_report_profile *rp = cp_report_profile__load(path, &o);

	CHECK(rp != NULL);
	return rp;
}

static uint32_t idx(const struct cp_rtree *t, const struct cp_rnode *n)
{
	return (uint32_t)(n - t->n);
}

/* make_split's profile, threads merged, raw times: its A and A's B. */
static struct cp_report_profile *load_split(const struct cp_rnode **a, const struct cp_rnode **b)
{
	struct cp_report_profile *rp;
	const struct cp_rtree *t;

	make_split("s.cprof", CP_SWITCHES_ON);
	rp = load("s.cprof", CP_THREADS_MERGED, 1);
	CHECK(rp->split);
	t = &rp->trees[0];
	*a = find(rp, t, 0, 0x100);
	*b = find(rp, t, idx(t, *a), 0x200);
	return rp;
}

TEST(self_values_add_over_call_sites_and_threads)
{
	const struct cp_rnode *a, *b, *c;
	struct cp_report_profile *rp = load_split(&a, &b);
	const struct cp_rtree *t = &rp->trees[0];

	c = find(rp, t, idx(t, a), 0x300);
	CHECK_EQ(t->n[0].self_wait_ns, 50);
	CHECK_EQ(a->self_wait_ns, 140);
	CHECK_EQ(a->self_inactive_ns, 20);
	CHECK_EQ(b->self_wait_ns, 150 + 60 + 290);
	CHECK_EQ(b->self_inactive_ns, 30);
	CHECK_EQ(b->self_switches_vol, 3);
	CHECK_EQ(b->self_switches_invol, 1);
	CHECK_EQ(c->self_inactive_ns, 30);
	CHECK_EQ(c->self_switches_invol, 4);
	cp_report_profile__free(rp);
}

TEST(inclusive_values_are_subtree_sums)
{
	const struct cp_rnode *a, *b;
	struct cp_report_profile *rp = load_split(&a, &b);
	const struct cp_rtree *t = &rp->trees[0];

	CHECK_EQ(b->wait_ns, 500);
	CHECK_EQ(a->wait_ns, 140 + 500);
	CHECK_EQ(a->inactive_ns, 20 + 30 + 30);
	CHECK_EQ(a->switches_vol, 1 + 3);
	CHECK_EQ(a->switches_invol, 1 + 4);
	CHECK_EQ(t->n[0].wait_ns, 50 + 640);
	CHECK_EQ(t->n[0].inactive_ns, 80);
	/* Every node: inclusive = own + the children's inclusive. */
	for (uint32_t i = 0; i < t->nn; i++) {
		uint64_t wait = t->n[i].self_wait_ns, inactive = t->n[i].self_inactive_ns;

		for (uint32_t k = t->n[i].first_child; k != CP_NONE; k = t->n[k].next) {
			wait += t->n[k].wait_ns;
			inactive += t->n[k].inactive_ns;
		}
		CHECK_EQ(t->n[i].wait_ns, wait);
		CHECK_EQ(t->n[i].inactive_ns, inactive);
	}
	cp_report_profile__free(rp);
}

TEST(threads_each_keep_their_own_sums_and_kernel_cpu)
{
	struct cp_report_profile *rp;
	const struct cp_rnode *a;

	make_split("s.cprof", CP_SWITCHES_ON);
	rp = load("s.cprof", CP_THREADS_EACH, 1);
	CHECK_EQ(rp->ntrees, 2);
	a = find(rp, &rp->trees[1], 0, 0x100);
	CHECK_EQ(a->wait_ns, 40 + 290);
	CHECK_EQ(a->self_wait_ns, 40);
	CHECK_EQ(rp->trees[0].cpu_ns, 700);
	CHECK_EQ(rp->trees[1].cpu_ns, 100);
	CHECK_EQ(rp->trees[1].cpu_unknown, 0);
	/* worker: 500 - 330 waited - 20 preempted */
	CHECK_EQ(cp_rnode__cpu(&rp->trees[1].n[0]), 150);
	cp_report_profile__free(rp);
}

TEST(cpu_is_total_less_off_cpu_time_everywhere)
{
	const struct cp_rnode *a, *b;
	struct cp_report_profile *rp = load_split(&a, &b);
	const struct cp_rtree *t = &rp->trees[0];
	for (uint32_t i = 0; i < t->nn; i++) {
		const struct cp_rnode *n = &t->n[i];

		CHECK(n->wait_ns + n->inactive_ns <= n->total_ns);
		CHECK_EQ(cp_rnode__cpu(n), n->total_ns - n->wait_ns - n->inactive_ns);
		CHECK_EQ(cp_rnode__self_cpu(n), n->self_ns - n->self_wait_ns - n->self_inactive_ns);
	}
	CHECK_EQ(cp_rnode__cpu(a), 1350 - 640 - 80);
	CHECK_EQ(cp_rnode__self_cpu(a), (1350 - 900 - 100) - 140 - 20);
	CHECK_EQ(cp_rnode__cpu(b), 900 - 500 - 30);
	cp_report_profile__free(rp);
}

/*
 * Compensation takes hook overhead off the CPU time only (the hooks ran on
 * the CPU), never off the wait: a context that waited nearly all its own
 * time keeps it, its total never drops below its wait, and its cpu is 0
 * exactly, not a clamped negative number (issue 30, item 24).
 *   0x100: 1000 ticks, 990 of its own 990 waited: nothing to take
 *   0x200: 10 calls, 10 ticks, 8 waited: 2 of CPU time, all of it taken
 */
TEST(compensation_takes_cpu_time_only)
{
	struct cp_meta meta = { .switches = CP_SWITCHES_ON, .overhead_ticks = 20,
				.self_overhead_ticks = 5 };
	struct cp_thread_rec th[1] = { { .nnodes = 3 } };
	struct cp_node_rec n[3] = {
		{ .parent = CP_NO_PARENT, .ticks = 2000 },
		{ .fn = 0x100, .parent = 0, .calls = 1, .ticks = 1000, .wait_ticks = 990 },
		{ .fn = 0x200, .parent = 1, .calls = 10, .ticks = 10, .wait_ticks = 8 },
	};
	struct cp_report_profile *rp;
	const struct cp_rnode *a, *b;

	write_profile("c.cprof", meta, th, 1, n, 3);
	rp = load("c.cprof", CP_THREADS_MERGED, 0);
	CHECK(rp->compensated);
	a = find(rp, &rp->trees[0], 0, 0x100);
	b = find(rp, &rp->trees[0], (uint32_t)(a - rp->trees[0].n), 0x200);
	CHECK_EQ(b->self_overhead_ns, 2);
	CHECK_EQ(b->total_ns, 8);
	CHECK_EQ(b->wait_ns, 8);
	CHECK_EQ(a->self_overhead_ns, 0);
	CHECK_EQ(a->total_ns, 990 + 8);
	CHECK_EQ(a->wait_ns, 998);
	CHECK_EQ(cp_rnode__cpu(a), 0);
	CHECK_EQ(cp_rnode__self_cpu(a), 0);
	CHECK_EQ(cp_cpu_ns(5, 3, 3), 0);
	CHECK_EQ(cp_cpu_ns(7, 3, 3), 1);
	cp_report_profile__free(rp);
}

/* A pseudo-random number below n (xorshift; the same sequence on every run). */
static uint64_t rnd(uint64_t *state, uint64_t n)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return n ? *state % n : 0;
}

/*
 * Every tree of rp: each metric's self is what its inclusive value leaves
 * of the children's (so never below 0, without a clamp), and no child's
 * inclusive value exceeds its parent's.
 */
static void check_adds_up(const struct cp_report_profile *rp)
{
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		const struct cp_rtree *t = &rp->trees[ti];

		for (uint32_t i = 0; i < t->nn; i++) {
			const struct cp_rnode *n = &t->n[i];
			uint64_t total = n->self_ns, wait = n->self_wait_ns;
			uint64_t inactive = n->self_inactive_ns, cpu;

			CHECK_LE(n->self_wait_ns + n->self_inactive_ns, n->self_ns);
			cpu = n->self_ns - n->self_wait_ns - n->self_inactive_ns;
			CHECK_EQ(cp_rnode__self_cpu(n), cpu);
			for (uint32_t c = n->first_child; c != CP_NONE; c = t->n[c].next) {
				const struct cp_rnode *k = &t->n[c];

				for (int m = 0; m < CP_METRIC_NR; m++)
					if ((int)cp_metric__inclusive((enum cp_metric)m) == m &&
					    m != CP_METRIC_CALLS)
						CHECK_LE(cp_rnode__metric(k, (enum cp_metric)m),
							 cp_rnode__metric(n, (enum cp_metric)m));
				total += k->total_ns;
				wait += k->wait_ns;
				inactive += k->inactive_ns;
				cpu += cp_rnode__cpu(k);
			}
			CHECK_EQ(n->total_ns, total);
			CHECK_EQ(n->wait_ns, wait);
			CHECK_EQ(n->inactive_ns, inactive);
			CHECK_EQ(cp_rnode__cpu(n), cpu);
		}
	}
}

/*
 * Random clocked trees with off-CPU time, some of it inconsistent with the
 * clock (more waited than timed, as a crafted file or clocks that disagree
 * give), compensated and raw, threads merged and each, then hidden and
 * folded: cpu, wait, inactive and total add up over every subtree.
 */
TEST(clocked_metrics_add_up_over_random_trees)
{
	struct cp_meta meta = { .switches = CP_SWITCHES_ON, .overhead_ticks = 30,
				.self_overhead_ticks = 20 };
	enum { THREADS = 3, PER = 40 };
	struct cp_thread_rec th[THREADS] = { { 0 } };
	struct cp_node_rec n[THREADS * PER];
	uint64_t seed = 0x9e3779b97f4a7c15u;

	for (int round = 0; round < 40; round++) {
		memset(n, 0, sizeof(n));
		for (uint32_t k = 0; k < THREADS; k++) {
			th[k].nnodes = PER;
			for (uint32_t i = 0; i < PER; i++) {
				struct cp_node_rec *r = &n[k * PER + i];
				uint64_t ticks = rnd(&seed, 5000);

				r->parent = i ? (uint32_t)rnd(&seed, i) : CP_NO_PARENT;
				r->fn = i ? 0x100 * (1 + rnd(&seed, 6)) : 0;
				r->calls = i ? 1 + rnd(&seed, 300) : 1;
				r->ticks = i ? ticks : 20000;
				/* Up to half again its own share: some more than it timed. */
				r->wait_ticks = rnd(&seed, ticks / 2 + 1);
				r->inactive_ticks = rnd(&seed, ticks / 3 + 1);
				if (i && !rnd(&seed, 10))
					r->flags = CP_NODE_UNTIMED;
			}
		}
		write_profile("r.cprof", meta, th, THREADS, n, THREADS * PER);
		for (int mode = 0; mode < 4; mode++) {
			struct cp_report_profile *rp = load("r.cprof", mode & 1 ? CP_THREADS_EACH :
								CP_THREADS_MERGED, mode >> 1);
			struct cp_view_filter *f = cp_view_filter__new(0, 2);
			char err[128];

			CHECK_EQ(rp->compensated, !(mode >> 1));
			check_adds_up(rp);
			CHECK_EQ(cp_view_filter__add(f, 0, "*+0x300", err, sizeof(err)), 0);
			cp_view_filter__apply(f, rp);
			check_adds_up(rp);
			cp_view_filter__free(f);
			cp_report_profile__free(rp);
		}
	}
}

/*
 * The weight is CPU time wherever the profile has it, a single thread's
 * too, however much of its time was preempted (issue 30, item 18); total
 * time only without the off-CPU split; a comparison weighs by CPU time
 * where both sides have it.
 */
TEST(weight_is_cpu_time_whatever_the_threads_and_the_load)
{
	struct cp_thread_rec th[1] = { { .nnodes = 2 } };
	struct cp_node_rec n[2] = {
		{ .parent = CP_NO_PARENT, .ticks = 1000 },
		{ .fn = 0x100, .parent = 0, .calls = 1, .ticks = 900, .inactive_ticks = 600 },
	};
	struct cp_report_profile *one, *off, *two;
	char why[512];

	write_profile("one.cprof", (struct cp_meta){ .switches = CP_SWITCHES_ON }, th, 1, n, 2);
	write_profile("off.cprof", (struct cp_meta){ .switches = 0 }, th, 1, n, 2);
	make_split("two.cprof", CP_SWITCHES_ON);
	one = load("one.cprof", CP_THREADS_MERGED, 1);
	off = load("off.cprof", CP_THREADS_MERGED, 1);
	two = load("two.cprof", CP_THREADS_MERGED, 1);
	CHECK_EQ(cp_report_profile__weight(one, why, sizeof(why)), CP_METRIC_CPU);
	CHECK(strstr(why, "the thread was also blocked 0ns (0% of its time") != NULL);
	CHECK(strstr(why, "preempted 600ns (60%: the machine's load, in no default weight)") != NULL);
	CHECK_EQ(cp_report_profile__weight(off, why, sizeof(why)), CP_METRIC_TOTAL);
	CHECK_STR(why, "");
	CHECK_EQ(cp_report_profile__weight(two, NULL, 0), CP_METRIC_CPU);
	CHECK_EQ(cp_report_profile__pair_weight(one, two), CP_METRIC_CPU);
	CHECK_EQ(cp_report_profile__pair_weight(one, off), CP_METRIC_TOTAL);
	CHECK_EQ(cp_report_profile__pair_weight(off, off), CP_METRIC_TOTAL);
	cp_report_profile__free(one);
	cp_report_profile__free(off);
	cp_report_profile__free(two);
}

/*
 * R inside R: the flat profile's total wait counts the outer activation
 * only (like its total), its self wait both.
 *   root -> P 0x100 (wait 10) -> R 0x300 ticks 400 (wait 100) -> R ticks 100 (wait 60)
 */
TEST(flat_off_cpu_totals_count_recursion_once)
{
	struct cp_meta meta = { .switches = CP_SWITCHES_ON };
	struct cp_thread_rec th[1] = { { .nnodes = 4 } };
	struct cp_node_rec n[4] = {
		{ .parent = CP_NO_PARENT, .ticks = 1100 },
		{ .fn = 0x100, .parent = 0, .calls = 1, .ticks = 1000, .wait_ticks = 10 },
		{ .fn = 0x300, .parent = 1, .calls = 1, .ticks = 400, .wait_ticks = 100 },
		{ .fn = 0x300, .parent = 2, .calls = 2, .ticks = 100, .wait_ticks = 60 },
	};
	struct cp_report_profile *rp;
	struct cp_agg *a;
	uint32_t *active, r = CP_NONE;

	write_profile("f.cprof", meta, th, 1, n, 4);
	rp = load("f.cprof", CP_THREADS_MERGED, 1);
	a = calloc(rp->nfns, sizeof(*a));
	active = calloc(rp->nfns, sizeof(*active));
	cp_flat_walk(&rp->trees[0], a, active);
	for (uint32_t f = 0; f < rp->nfns; f++)
		if (rp->fns[f].addr == 0x300)
			r = f;
	CHECK(r != CP_NONE);
	CHECK_EQ(a[r].total_ns, 400);
	CHECK_EQ(a[r].wait_ns, 160);
	CHECK_EQ(a[r].self_wait_ns, 160);
	CHECK_EQ(a[r].calls, 3);
	free(a);
	free(active);
	cp_report_profile__free(rp);
}

TEST(merge_file_keeps_exclusive_values_and_switches)
{
	const char *in[] = { "s.cprof", "t.cprof" };
	struct cp_report_opts o = { 0 };
	struct cp_merge_result res;
	struct cp_report_profile *rp;
	const struct cp_rtree *t;
	const struct cp_rnode *a, *b;
	struct cp_profile_file *pf;
	char err[256];
	int code;

	make_split("s.cprof", CP_SWITCHES_ON);
	make_split("t.cprof", CP_SWITCHES_ON);
	CHECK_EQ(cp_merge_files(in, 2, "m.cprof", &o, 0, &res), 0);
	pf = cp_profile_file__open("m.cprof", err, sizeof(err), &code);
	CHECK(pf != NULL);
	CHECK_EQ(pf->meta.switches, CP_SWITCHES_ON);
	CHECK_EQ(pf->threads[0].cpu_ns, 2 * 800);
	cp_profile_file__free(pf);

	/* Addresses in no module keep their value in a merged profile. */
	rp = load("m.cprof", CP_THREADS_MERGED, 1);
	CHECK(rp->split);
	t = &rp->trees[0];
	a = find(rp, t, 0, 0x100);
	b = find(rp, t, idx(t, a), 0x200);
	CHECK_EQ(t->n[0].self_wait_ns, 2 * 50);
	CHECK_EQ(a->self_wait_ns, 2 * 140);
	CHECK_EQ(a->wait_ns, 2 * 640);
	CHECK_EQ(b->self_wait_ns, 2 * 500);
	CHECK_EQ(b->self_inactive_ns, 2 * 30);
	CHECK_EQ(b->self_switches_vol, 2 * 3);
	CHECK_EQ(a->switches_invol, 2 * 5);
	cp_report_profile__free(rp);
}

TEST(switch_states_combine)
{
	struct cp_meta d = { 0 }, on = { .switches = CP_SWITCHES_ON, .switch_lost = 2 };
	struct cp_meta off = { 0 }, refused = { .switches = CP_SWITCHES_UNAVAILABLE,
						.switch_errno = EACCES };
	struct cp_meta part = { .switches = CP_SWITCHES_PARTIAL, .switch_threads_failed = 1 };

	cp_meta__add_switches(&d, 0, &on, 3);
	cp_meta__add_switches(&d, 3, &on, 2);
	CHECK_EQ(d.switches, CP_SWITCHES_ON);
	CHECK_EQ(d.switch_lost, 4);
	cp_meta__add_switches(&d, 5, &part, 2);
	CHECK_EQ(d.switches, CP_SWITCHES_PARTIAL);
	CHECK_EQ(d.switch_threads_failed, 1);
	cp_meta__add_switches(&d, 7, &off, 4);
	CHECK_EQ(d.switch_threads_failed, 5);
	/* Not measured first, measured after: the first's threads went without. */
	memset(&d, 0, sizeof(d));
	cp_meta__add_switches(&d, 0, &refused, 2);
	CHECK_EQ(d.switches, CP_SWITCHES_UNAVAILABLE);
	cp_meta__add_switches(&d, 2, &refused, 1);
	CHECK_EQ(d.switches, CP_SWITCHES_UNAVAILABLE);
	CHECK_EQ(d.switch_errno, EACCES);
	cp_meta__add_switches(&d, 3, &on, 1);
	CHECK_EQ(d.switches, CP_SWITCHES_PARTIAL);
	CHECK_EQ(d.switch_threads_failed, 3);
}

/* What a view printed with options vo, in a buffer the caller frees. */
static char *run_view(struct cp_report_profile *rp,
		      int (*fn)(struct cp_report_profile *, const struct cp_view_opts *, FILE *),
		      const struct cp_view_opts *vo)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	CHECK(fp != NULL);
	CHECK_EQ(fn(rp, vo, fp), 0);
	fclose(fp);
	return buf;
}

/* The view with fields (NULL: its default), rows by name. */
static char *view(struct cp_report_profile *rp, int (*fn)(struct cp_report_profile *,
							  const struct cp_view_opts *, FILE *),
		  const char *fields)
{
	struct cp_view_opts vo = { .fields = fields, .sort = CP_SORT_NAME };

	return run_view(rp, fn, &vo);
}

/* The same with a weight given, as --sort=WEIGHT does. */
static char *view_weighed(struct cp_report_profile *rp,
			  int (*fn)(struct cp_report_profile *, const struct cp_view_opts *, FILE *),
			  enum cp_metric weight)
{
	struct cp_view_opts vo = { .sort = (enum cp_sort_key)weight, .weight = weight,
				   .weight_given = 1 };

	return run_view(rp, fn, &vo);
}

TEST(measured_split_shows_in_default_columns_and_banner)
{
	struct cp_report_profile *rp;
	char *out;

	make_split("s.cprof", CP_SWITCHES_ON);
	rp = load("s.cprof", CP_THREADS_MERGED, 1);
	out = view(rp, cp_view_tree, NULL);
	CHECK(strstr(out, "# off-CPU time measured: ") != NULL);
	/* Weighed by CPU time, told how much blocked and preempted time there was. */
	CHECK(strstr(out, "# weight: CPU time; the threads were also blocked 690ns (46% of their "
			  "time: the wait column; --sort=wait weighs by it, --sort=total by elapsed "
			  "time) and preempted 80ns (5%: the machine's load, in no default weight)\n") !=
	      NULL);
	CHECK(strstr(out, "  calls         cpu    self-cpu     cpu%       total        wait    inactive") !=
	      NULL);
	CHECK(strstr(out, "cpu 730ns; the kernel counted 800ns) ==") != NULL); /* 1500 - 690 - 80 */
	free(out);
	out = view(rp, cp_view_flat, NULL);
	CHECK(strstr(out, "  self-cpu  self-cpu%         cpu     cpu%   self-wait  self-inact") != NULL);
	free(out);
	/* Weighed by total time (--sort=total): the total's split. */
	out = view_weighed(rp, cp_view_tree, CP_METRIC_TOTAL);
	CHECK(strstr(out, "# weight: ") == NULL);
	CHECK(strstr(out, "  calls       total         cpu        wait    inactive        self") !=
	      NULL);
	free(out);
	out = view_weighed(rp, cp_view_flat, CP_METRIC_TOTAL);
	CHECK(strstr(out, "  self    self-cpu   self-wait  self-inact") != NULL);
	free(out);
	out = view(rp, cp_view_tree, "calls,wait,self-wait,switches-vol,name");
	CHECK(strstr(out, "           2       640ns       140ns          4  [unknown]+0x100\n") !=
	      NULL);
	free(out);
	cp_report_profile__free(rp);
}

TEST(unmeasured_split_keeps_columns_and_shows_dashes)
{
	struct cp_report_profile *rp;
	char *out;

	make_split("s.cprof", CP_SWITCHES_OFF);
	rp = load("s.cprof", CP_THREADS_MERGED, 1);
	CHECK(!rp->split);
	out = view(rp, cp_view_tree, NULL);
	CHECK(strstr(out, "off-CPU") == NULL);
	CHECK(strstr(out, "  calls       total        self   total%         avg  name\n") != NULL);
	free(out);
	out = view(rp, cp_view_flat, "calls,cpu,wait,name");
	CHECK(strstr(out, "           2           -           -  [unknown]+0x100\n") != NULL);
	free(out);
	cp_report_profile__free(rp);
}

TEST(banner_says_partial_unavailable_and_lost)
{
	struct cp_meta partial = { .switches = CP_SWITCHES_PARTIAL, .switch_threads_failed = 2,
				   .switch_lost = 7 };
	struct cp_meta refused = { .switches = CP_SWITCHES_UNAVAILABLE, .switch_errno = EACCES };
	struct cp_thread_rec th[1] = { { .nnodes = 1 } };
	struct cp_node_rec n[1] = { { .parent = CP_NO_PARENT, .ticks = 10 } };
	struct cp_report_profile *rp;
	char *out;

	write_profile("p.cprof", partial, th, 1, n, 1);
	rp = load("p.cprof", CP_THREADS_MERGED, 1);
	CHECK(rp->split);
	out = view(rp, cp_view_tree, NULL);
	CHECK(strstr(out, "# off-CPU time measured partially: 2 threads without") != NULL);
	CHECK(strstr(out, "# warning: 7 context-switch records lost") != NULL);
	free(out);
	cp_report_profile__free(rp);
	write_profile("u.cprof", refused, th, 1, n, 1);
	rp = load("u.cprof", CP_THREADS_MERGED, 1);
	CHECK(!rp->split);
	out = view(rp, cp_view_tree, NULL);
	CHECK(strstr(out, "# off-CPU time unavailable: perf_event_open refused: Permission denied; "
			  "see callprof-record(1)\n") != NULL);
	free(out);
	cp_report_profile__free(rp);
}

TEST(sampled_profile_banner_and_columns)
{
	struct cp_meta meta = { .mode = CP_MODE_SAMPLED, .sample_hz = 997, .samples = 30,
				.sample_period_ns = 1003009, .samples_lost = 4,
				.sample_flags = CP_SAMPLE_DWARF };
	struct cp_thread_rec th[1] = { { .nnodes = 3 } };
	struct cp_node_rec n[3] = {
		{ .parent = CP_NO_PARENT, .calls = 30, .ticks = 30090270 },
		{ .fn = 0x100, .parent = 0, .calls = 30, .ticks = 30090270 },
		{ .fn = 0x200, .parent = 1, .calls = 12, .ticks = 12036108 },
	};
	struct cp_report_profile *rp;
	char *out;

	write_profile("m.cprof", meta, th, 1, n, 3);
	rp = load("m.cprof", CP_THREADS_MERGED, 0);
	CHECK(rp->sampled && !rp->compensated);
	out = view(rp, cp_view_tree, NULL);
	CHECK(strstr(out, "# sampled: 30 samples at 997 Hz (one per 1.00ms), call stacks unwound "
			  "with DWARF CFI; times are estimates, counts are samples\n") != NULL);
	CHECK(strstr(out, "# warning: 4 samples lost") != NULL);
	CHECK(strstr(out, "compensat") == NULL);
	CHECK(strstr(out, "# clock") == NULL);
	CHECK(strstr(out, "     samples       total") != NULL);
	free(out);
	out = view(rp, cp_view_flat, "calls,avg,min,max,name");
	CHECK(strstr(out, "     samples         avg         min         max  name\n") != NULL);
	CHECK(strstr(out, "          12           -           -           -  [unknown]+0x200\n") !=
	      NULL);
	free(out);
	cp_report_profile__free(rp);
}
