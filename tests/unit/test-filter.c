/*
 * test-filter.c - report-time filters (report/filter.c) and --threads
 * selection on hand-made profiles: what --hide merges where, what --focus
 * keeps, what --min-percent folds, exactly; and that a 200000-deep
 * recursion is filtered without recursing or going quadratic.
 *
 * One tick is one nanosecond and nothing is compensated, so every
 * expected value is worked out by hand from cp_test__mgabc_profile()
 * (tests/unit/profiles.h).
 */
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "report/report.h"
#include "tests/unit/profiles.h"
#include "tests/unit/rtree.h"
#include "tests/unit/unittest.h"

/* The profile with threads each, only main's tree, filtered by f. */
static struct cp_report_profile *load_filtered(struct cp_view_filter *f)
{
	const char *main_only[] = { "main", NULL }, *path = "f.cprof";
	struct cp_report_opts o = { .threads = CP_THREADS_EACH, .no_compensate = 1,
				    .select_threads = main_only };
	struct cp_report_profile *rp;

	cp_test__mgabc_profile(path);
	rp = cp_report_profile__load_many(&path, 1, &o);
	CHECK(rp != NULL);
	CHECK_EQ(rp->ntrees, 1);
	CHECK_EQ(cp_view_filter__apply(f, rp), 0);
	cp_view_filter__free(f);
	unlink(path);
	return rp;
}

static uint32_t idx(const struct cp_rtree *t, const struct cp_rnode *n)
{
	return (uint32_t)(n - t->n);
}

static uint32_t nchildren(const struct cp_rtree *t, uint32_t i)
{
	uint32_t k = 0;

	for (uint32_t c = t->n[i].first_child; c != CP_NONE; c = t->n[c].next)
		k++;
	return k;
}

static struct cp_view_filter *filter(int focus, const char *pattern, double min_percent)
{
	struct cp_view_filter *f = cp_view_filter__new(0, min_percent);
	char err[128];

	if (pattern)
		CHECK_EQ(cp_view_filter__add(f, focus, pattern, err, sizeof(err)), 0);
	return f;
}

TEST(hide_merges_children_into_the_parent_with_summed_counts)
{
	struct cp_report_profile *rp = load_filtered(filter(0, "*+0x200", 0));
	const struct cp_rtree *t = &rp->trees[0];
	const struct cp_rnode *m = find(rp, t, 0, M), *a, *b, *c;

	/* G's A (4 calls, 300) and M's A (6, 600) are one context now. */
	a = find(rp, t, idx(t, m), A);
	CHECK_EQ(a->calls, 10);
	CHECK_EQ(a->total_ns, 900);
	CHECK_EQ(a->self_ns, 900);
	CHECK_EQ(a->min_ns, 20);
	CHECK_EQ(a->max_ns, 200);
	b = find(rp, t, idx(t, m), B);
	CHECK_EQ(b->calls, 1);
	CHECK_EQ(b->total_ns, 400);
	CHECK_EQ(nchildren(t, idx(t, m)), 3); /* A, B, C: no G */
	/* M's self grows by exactly G's self (300), its total stays. */
	CHECK_EQ(m->self_ns, 100 + 300);
	CHECK_EQ(m->total_ns, 1900);
	CHECK_EQ(m->calls, 1);
	/* Off-CPU time moves with the self time: G's wait is M's own now. */
	CHECK_EQ(m->self_wait_ns, 30);
	CHECK_EQ(m->wait_ns, 30 + 7);
	/* C's G is gone too: its 50 and its switch are C's. */
	c = find(rp, t, idx(t, m), C);
	CHECK_EQ(c->self_ns, 150 + 50);
	CHECK_EQ(c->total_ns, 200);
	CHECK_EQ(c->self_switches_vol, 1);
	CHECK_EQ(nchildren(t, idx(t, c)), 0);
	CHECK_EQ(t->n[0].total_ns, 2000);
	CHECK_EQ(t->n[0].self_ns, 100);
	CHECK(strstr(rp->filters, "# threads: main (1 of 2 threads)\n") != NULL);
	CHECK(strstr(rp->filters, "# hidden: *+0x200 (2 contexts merged into callers)\n") != NULL);
	cp_report_profile__free(rp);
}

TEST(hide_of_nothing_changes_nothing)
{
	struct cp_report_profile *rp = load_filtered(filter(0, "nothing", 0));
	const struct cp_rtree *t = &rp->trees[0];
	const struct cp_rnode *m = find(rp, t, 0, M);

	CHECK_EQ(t->nn, 8);
	CHECK_EQ(m->self_ns, 100);
	CHECK_EQ(find(rp, t, idx(t, m), G)->self_ns, 300);
	CHECK(strstr(rp->filters, "# hidden: nothing (0 contexts merged into callers)\n") != NULL);
	cp_report_profile__free(rp);
}

TEST(focus_keeps_ancestors_and_drops_unrelated_siblings)
{
	struct cp_report_profile *rp = load_filtered(filter(1, "*+0x400", 0));
	const struct cp_rtree *t = &rp->trees[0];
	const struct cp_rnode *m = find(rp, t, 0, M), *g, *b;

	/* root -> M -> G -> B, nothing else: M's A and C, G's A go. */
	CHECK_EQ(t->nn, 4);
	CHECK_EQ(nchildren(t, idx(t, m)), 1);
	g = find(rp, t, idx(t, m), G);
	CHECK_EQ(nchildren(t, idx(t, g)), 1);
	b = find(rp, t, idx(t, g), B);
	CHECK_EQ(b->calls, 1);
	CHECK_EQ(b->total_ns, 400);
	CHECK_EQ(b->min_ns, 400);
	/* Ancestors: their calls, and the time of the paths kept only. */
	CHECK_EQ(g->calls, 2);
	CHECK_EQ(g->total_ns, 400);
	CHECK_EQ(g->self_ns, 0);
	CHECK_EQ(g->wait_ns, 0);
	CHECK_EQ(g->max_ns, 0);
	CHECK_EQ(m->calls, 1);
	CHECK_EQ(m->total_ns, 400);
	/* The root stays the thread's 100%. */
	CHECK_EQ(t->n[0].total_ns, 2000);
	CHECK_EQ(t->n[0].self_ns, 1600);
	CHECK(strstr(rp->filters, "# focus: *+0x400 (20.00% of the time)\n") != NULL);
	cp_report_profile__free(rp);
}

TEST(focus_keeps_every_path_through_the_function)
{
	struct cp_report_profile *rp = load_filtered(filter(1, "*+0x200", 0));
	const struct cp_rtree *t = &rp->trees[0];
	const struct cp_rnode *m = find(rp, t, 0, M), *c, *g;

	/* M's G with its whole subtree (1000), C's G (50) with C for it. */
	CHECK_EQ(m->total_ns, 1000 + 50);
	g = find(rp, t, idx(t, m), G);
	CHECK_EQ(g->self_ns, 300);
	CHECK_EQ(g->wait_ns, 30);
	CHECK_EQ(nchildren(t, idx(t, g)), 2);
	c = find(rp, t, idx(t, m), C);
	CHECK_EQ(c->total_ns, 50);
	CHECK_EQ(c->self_ns, 0);
	CHECK_EQ(find(rp, t, idx(t, c), G)->self_switches_vol, 1);
	CHECK_EQ(nchildren(t, idx(t, m)), 2); /* M's own A is gone */
	CHECK(strstr(rp->filters, "# focus: *+0x200 (52.50% of the time)\n") != NULL);
	cp_report_profile__free(rp);
}

TEST(focus_matching_nothing_is_an_error)
{
	const char *path = "f.cprof";
	struct cp_report_opts o = { .threads = CP_THREADS_MERGED, .no_compensate = 1 };
	struct cp_view_filter *f = filter(1, "nothing", 0);
	struct cp_report_profile *rp;

	cp_test__mgabc_profile(path);
	rp = cp_report_profile__load_many(&path, 1, &o);
	CHECK(rp != NULL);
	CHECK_EQ(cp_view_filter__apply(f, rp), -1);
	cp_view_filter__free(f);
	cp_report_profile__free(rp);
	unlink(path);
}

TEST(min_percent_folds_small_contexts_into_the_parent_self)
{
	/* 30% of 2000: contexts below 600 go, with their subtree, into their parent. */
	struct cp_report_profile *rp = load_filtered(filter(0, NULL, 30));
	const struct cp_rtree *t = &rp->trees[0];
	const struct cp_rnode *m = find(rp, t, 0, M), *g;

	g = find(rp, t, idx(t, m), G);
	CHECK_EQ(nchildren(t, idx(t, g)), 0);
	CHECK_EQ(g->self_ns, 300 + 300 + 400);
	CHECK_EQ(g->total_ns, 1000);
	CHECK_EQ(find(rp, t, idx(t, m), A)->total_ns, 600); /* not below: kept */
	CHECK_EQ(m->self_ns, 100 + 200);		      /* C and its G */
	CHECK_EQ(m->self_wait_ns, 7);
	CHECK_EQ(m->total_ns, 1900);
	CHECK_EQ(t->nn, 4);
	cp_report_profile__free(rp);
}

TEST(thread_selectors_pick_by_id_and_name)
{
	const char *path = "f.cprof", *by_id[] = { "2", NULL }, *none[] = { "main", "nope", NULL };
	const char *glob[] = { "w*", NULL };
	struct cp_report_opts o = { .threads = CP_THREADS_MERGED, .no_compensate = 1,
				    .select_threads = glob };
	struct cp_report_profile *rp;

	cp_test__mgabc_profile(path);
	/* Merged: only the worker's paths add up. */
	rp = cp_report_profile__load_many(&path, 1, &o);
	CHECK(rp != NULL);
	CHECK_EQ(rp->ntrees, 1);
	CHECK_EQ(rp->trees[0].nthreads, 1);
	CHECK_EQ(rp->trees[0].n[0].total_ns, 500);
	CHECK_EQ(find(rp, &rp->trees[0], 0, C)->calls, 3);
	CHECK_EQ(rp->calls, 3);
	cp_report_profile__free(rp);

	o.threads = CP_THREADS_EACH;
	o.select_threads = by_id;
	rp = cp_report_profile__load_many(&path, 1, &o);
	CHECK(rp != NULL);
	CHECK_EQ(rp->ntrees, 1);
	CHECK_STR(rp->trees[0].label, "worker");
	CHECK_EQ(rp->thread_tree[0], CP_NONE);
	CHECK_EQ(rp->thread_tree[1], 0);
	CHECK_EQ(rp->node_map[1], CP_NONE); /* main's M is in no tree */
	cp_report_profile__free(rp);

	/* One selector that matches nothing fails the load. */
	o.select_threads = none;
	CHECK(cp_report_profile__load_many(&path, 1, &o) == NULL);
	unlink(path);
}

#define DEPTH 200000

/* root -> main -> R x DEPTH (recursion) -> L; every R has self 1, L 5. */
static void make_deep(const char *path)
{
	static const char *const names[1] = { "main" };
	struct cp_thread_rec th = { .tid = 1, .nthreads = 1 };
	uint32_t nn = DEPTH + 3;
	struct cp_node_rec *n = calloc(nn, sizeof(*n));

	CHECK(n != NULL);
	n[nn - 1] = (struct cp_node_rec){ .fn = 0x900, .parent = nn - 2, .calls = 1, .ticks = 5 };
	for (uint32_t i = nn - 1; i-- > 0;) {
		n[i].fn = i == 0 ? 0 : i == 1 ? M : 0x800;
		n[i].parent = i ? i - 1 : CP_NO_PARENT;
		n[i].calls = 1;
		n[i].ticks = n[i + 1].ticks + 1;
	}
	th.nnodes = nn;
	cp_test__write_profile(path, NULL, n, nn, &th, names, 1);
	free(n);
}

static struct cp_report_profile *load_deep(int focus, const char *pattern, double *secs)
{
	const char *path = "deep.cprof";
	struct cp_report_opts o = { .threads = CP_THREADS_MERGED, .no_compensate = 1 };
	struct cp_view_filter *f = filter(focus, pattern, 0);
	struct cp_report_profile *rp;
	struct timespec a, b;

	make_deep(path);
	rp = cp_report_profile__load_many(&path, 1, &o);
	CHECK(rp != NULL);
	CHECK_EQ(rp->trees[0].nn, DEPTH + 3);
	clock_gettime(CLOCK_MONOTONIC, &a);
	CHECK_EQ(cp_view_filter__apply(f, rp), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	cp_view_filter__free(f);
	unlink(path);
	return rp;
}

TEST(hide_of_a_deep_recursion_is_linear)
{
	double secs;
	struct cp_report_profile *rp = load_deep(0, "*+0x800", &secs);
	const struct cp_rtree *t = &rp->trees[0];
	const struct cp_rnode *m = find(rp, t, 0, M), *l = find(rp, t, idx(t, m), 0x900);

	/* All of the recursion's selves are main's; L is main's only child. */
	CHECK_EQ(t->nn, 3);
	CHECK_EQ(m->self_ns, 1 + DEPTH);
	CHECK_EQ(m->total_ns, DEPTH + 6);
	CHECK_EQ(l->total_ns, 5);
	CHECK_EQ(l->depth, 2);
	CHECK(strstr(rp->filters, "(200000 contexts merged into callers)") != NULL);
	/* Quadratic would be 4e10 steps; linear is milliseconds. */
	CHECK(secs < 2.0);
	cp_report_profile__free(rp);
}

TEST(focus_below_a_deep_recursion_keeps_the_chain)
{
	double secs;
	struct cp_report_profile *rp = load_deep(1, "*+0x900", &secs);
	const struct cp_rtree *t = &rp->trees[0];

	/* Every R is an ancestor of L: all kept, times those of L's path. */
	CHECK_EQ(t->nn, DEPTH + 3);
	CHECK_EQ(t->n[t->nn - 1].depth, DEPTH + 2);
	CHECK_EQ(t->n[t->nn - 1].total_ns, 5);
	CHECK_EQ(find(rp, t, 0, M)->total_ns, 5);
	CHECK_EQ(t->n[0].total_ns, DEPTH + 7);
	CHECK(secs < 2.0);
	cp_report_profile__free(rp);
}
