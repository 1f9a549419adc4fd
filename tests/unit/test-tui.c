/*
 * test-tui.c - the model of callprof tui (report/tui.c) on a hand-made
 * profile: which rows the tree view shows after each expand and collapse
 * (spliced in and out, in the order the report prints), the hottest path
 * opened at start, the flat, callers and callees lists with their sums,
 * search and reveal, and a 200000-deep chain handled without recursion.
 * The profile is cp_test__mgabc_profile's (tests/unit/profiles.h, which
 * draws its tree).
 */
#include <unistd.h>

#include "format/format.h"
#include "report/report.h"
#include "report/tui.h"
#include "tests/unit/profiles.h"
#include "tests/unit/unittest.h"

static struct cp_report_profile *load(enum cp_thread_mode mode)
{
	const char *path = "tui.cprof";
	struct cp_report_opts o = { .threads = mode, .no_compensate = 1, .no_files = 1 };
	struct cp_report_profile *rp;

	cp_test__mgabc_profile(path);
	rp = cp_report_profile__load_many(&path, 1, &o);
	CHECK(rp != NULL);
	unlink(path);
	return rp;
}

/* The function addresses and depths of the rows, "M1 G2 B3": what the screen lists. */
static const char *rows(const struct cp_tui *t)
{
	static char buf[4096];
	size_t o = 0;

	buf[0] = '\0';
	for (uint32_t r = 0; r < cp_tui__nrows(t) && o + 16 < sizeof(buf); r++) {
		uint32_t fn = cp_tui__fn(t, r);
		uint64_t a = fn == CP_NONE ? 0 : t->rp->fns[fn].addr;

		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%c%u", r ? " " : "",
				      "?MGABC"[a >> 8 <= 5 ? a >> 8 : 0], cp_tui__depth(t, r));
	}
	return buf;
}

static uint32_t row_of(const struct cp_tui *t, const char *want)
{
	char buf[16];

	for (uint32_t r = 0; r < cp_tui__nrows(t); r++) {
		uint32_t fn = cp_tui__fn(t, r);
		uint64_t a = t->rp->fns[fn].addr;

		snprintf(buf, sizeof(buf), "%c%u", "?MGABC"[a >> 8 <= 5 ? a >> 8 : 0],
			 cp_tui__depth(t, r));
		if (!strcmp(buf, want))
			return r;
	}
	cp_test__fail(__FILE__, __LINE__, "no row %s in %s", want, rows(t));
}

TEST(tui_opens_the_hottest_path)
{
	struct cp_report_profile *rp = load(CP_THREADS_MERGED);
	struct cp_tui t;

	CHECK_EQ(cp_tui__init(&t, rp, 0, CP_METRIC_TOTAL, 1, NULL), 0);
	/* M, its hottest child G, G's hottest child B (400 > A's 300); C under M stays shut. */
	CHECK_STR(rows(&t), "M1 G2 B3 A3 A2 C2 C1");
	CHECK(cp_tui__is_open(&t, 0));
	CHECK(!cp_tui__is_open(&t, 5));
	CHECK(cp_tui__has_children(&t, 5));
	CHECK(!cp_tui__has_children(&t, 6));
	CHECK_EQ(cp_tui__whole(&t), 2500);
	cp_tui__release(&t);
	cp_report_profile__free(rp);
}

TEST(tui_expand_and_collapse_splice_rows)
{
	struct cp_report_profile *rp = load(CP_THREADS_MERGED);
	struct cp_tui t;

	CHECK_EQ(cp_tui__init(&t, rp, 0, CP_METRIC_TOTAL, 1, NULL), 0);
	t.sel = row_of(&t, "C1");
	cp_tui__collapse(&t, row_of(&t, "G2"));
	CHECK_STR(rows(&t), "M1 G2 A2 C2 C1");
	/* the selection below the cut moves up with its row */
	CHECK_EQ(t.sel, 4);
	CHECK_EQ(cp_tui__expand(&t, 3), 0);
	CHECK_STR(rows(&t), "M1 G2 A2 C2 G3 C1");
	/* collapsing M keeps what is open below it, expanding it brings that back */
	cp_tui__collapse(&t, 0);
	CHECK_STR(rows(&t), "M1 C1");
	CHECK_EQ(t.sel, 1);
	CHECK_EQ(cp_tui__expand(&t, 0), 0);
	CHECK_STR(rows(&t), "M1 G2 A2 C2 G3 C1");
	CHECK_EQ(cp_tui__parent_row(&t, row_of(&t, "G3")), row_of(&t, "C2"));
	CHECK_EQ(cp_tui__parent_row(&t, 0), 0);
	cp_tui__collapse_all(&t);
	CHECK_STR(rows(&t), "M1 C1");
	CHECK_EQ(cp_tui__expand_all(&t, 0, 100), 0);
	CHECK_STR(rows(&t), "M1 G2 B3 A3 A2 C2 G3 C1");
	/* bounded: after the limit what is reached stays shut */
	CHECK_EQ(cp_tui__expand_all(&t, 0, 2), 0);
	CHECK_STR(rows(&t), "M1 G2 B3 A3 A2 C2 C1");
	cp_tui__release(&t);
	cp_report_profile__free(rp);
}

TEST(tui_reveal_and_search)
{
	struct cp_report_profile *rp = load(CP_THREADS_MERGED);
	struct cp_tui t;
	uint32_t r;

	CHECK_EQ(cp_tui__init(&t, rp, 0, CP_METRIC_TOTAL, 1, NULL), 0);
	/* the name of G holds its offset 0x200, B's 0x400 */
	CHECK(strstr(rp->fns[cp_tui__fn(&t, 1)].name, "200") != NULL);
	CHECK_EQ(cp_tui__search(&t, "200"), 2);
	CHECK_EQ(cp_tui__next_match(&t, 1), 0);
	CHECK_EQ(t.sel, row_of(&t, "G2"));
	CHECK(cp_tui__row_matches(&t, t.sel));
	CHECK(!cp_tui__row_matches(&t, 0));
	/* the second G is under the shut C: revealed */
	CHECK_EQ(cp_tui__next_match(&t, 1), 0);
	CHECK_STR(rows(&t), "M1 G2 B3 A3 A2 C2 G3 C1");
	CHECK_EQ(t.sel, row_of(&t, "G3"));
	CHECK_EQ(t.cur_match, 1);
	/* around the end, and back */
	CHECK_EQ(cp_tui__next_match(&t, 1), 0);
	CHECK_EQ(t.cur_match, 0);
	CHECK_EQ(cp_tui__next_match(&t, -1), 0);
	CHECK_EQ(t.cur_match, 1);
	/* from the selection on: C under M comes before the second G */
	cp_tui__collapse(&t, row_of(&t, "C2"));
	t.sel = row_of(&t, "C2");
	CHECK_EQ(cp_tui__search(&t, "200"), 2);
	CHECK_EQ(cp_tui__next_match(&t, 1), 0);
	CHECK_EQ(t.cur_match, 1);
	CHECK_EQ(t.sel, row_of(&t, "G3"));
	/* a selected match is the first */
	CHECK_EQ(cp_tui__search(&t, "200"), 2);
	CHECK_EQ(cp_tui__next_match(&t, 1), 0);
	CHECK_EQ(t.sel, row_of(&t, "G3"));
	/* nothing after the last row's: around to the first */
	t.sel = row_of(&t, "C1");
	CHECK_EQ(cp_tui__search(&t, "200"), 2);
	CHECK_EQ(cp_tui__next_match(&t, 1), 0);
	CHECK_EQ(t.cur_match, 0);
	CHECK_EQ(cp_tui__search(&t, "no such name"), 0);
	CHECK(cp_tui__next_match(&t, 1) < 0);
	/* a glob names as every option does: the whole name, not a part of it */
	CHECK_EQ(cp_tui__search(&t, "20"), 2);
	CHECK_EQ(cp_tui__search(&t, "*20"), 0);
	CHECK_EQ(cp_tui__search(&t, "*200"), 2);
	CHECK(cp_tui__row_matches(&t, row_of(&t, "G2")));
	cp_tui__collapse_all(&t);
	r = cp_tui__reveal(&t, 4); /* some context */
	CHECK(r != CP_NONE);
	CHECK_EQ(t.rows[r], 4);
	cp_tui__release(&t);
	cp_report_profile__free(rp);
}

static const struct cp_tui_fnrow *fnrow(const struct cp_tui *t, uint64_t addr)
{
	for (uint32_t i = 0; i < t->nlist; i++)
		if (t->rp->fns[t->list[i].fn].addr == addr)
			return &t->list[i];
	cp_test__fail(__FILE__, __LINE__, "no row 0x%llx", (unsigned long long)addr);
}

TEST(tui_flat_callers_callees)
{
	struct cp_report_profile *rp = load(CP_THREADS_MERGED);
	struct cp_tui t;

	CHECK_EQ(cp_tui__init(&t, rp, 0, CP_METRIC_TOTAL, 1, NULL), 0);
	CHECK_EQ(cp_tui__flat(&t), 0);
	CHECK_EQ(t.view, CP_TUI_FLAT);
	/* by total: M 1900, G 1000 + 50 (not inside another G), A 900, C 600, B 400 */
	CHECK_STR(rows(&t), "M1 G1 A1 C1 B1");
	CHECK_EQ(fnrow(&t, G)->fig.calls, 3);
	CHECK_EQ(fnrow(&t, G)->fig.total_ns, 1050);
	CHECK_EQ(fnrow(&t, C)->fig.total_ns, 600);
	CHECK_EQ(fnrow(&t, M)->fig.self_ns, 100);
	/* calls next: A 10, C 4, G 3, then M and B by name */
	cp_tui__cycle_sort(&t); /* self */
	cp_tui__cycle_sort(&t); /* calls */
	CHECK_EQ(t.sort, CP_TUI_SORT_CALLS);
	CHECK_EQ(t.list[0].fn, fnrow(&t, A)->fn);
	CHECK_EQ(t.list[1].fn, fnrow(&t, C)->fn);
	/* Enter's target: A's first context in preorder, under G */
	CHECK_EQ(rp->trees[0].n[rp->trees[0].n[fnrow(&t, A)->first].parent].fn, fnrow(&t, G)->fn);

	CHECK_EQ(cp_tui__callers(&t, fnrow(&t, A)->fn), 0);
	CHECK_EQ(t.nlist, 2);
	CHECK_EQ(fnrow(&t, M)->fig.calls, 6);
	CHECK_EQ(fnrow(&t, G)->fig.calls, 4);
	CHECK_EQ(fnrow(&t, G)->fig.total_ns, 300);
	CHECK_EQ(cp_tui__callees(&t, fnrow(&t, G)->fn), 0);
	CHECK_EQ(t.view, CP_TUI_CALLEES);
	CHECK_EQ(t.nlist, 2);
	CHECK_STR(rows(&t), "B1 A1");
	CHECK_EQ(fnrow(&t, A)->fig.calls, 4);
	/* back to the tree as it was */
	cp_tui__tree(&t);
	CHECK_STR(rows(&t), "M1 G2 B3 A3 A2 C2 C1");
	cp_tui__release(&t);
	cp_report_profile__free(rp);
}

TEST(tui_metric_and_threads)
{
	struct cp_report_profile *rp = load(CP_THREADS_EACH);
	struct cp_tui t;

	CHECK_EQ(rp->ntrees, 2);
	CHECK_EQ(cp_tui__init(&t, rp, 1, CP_METRIC_TOTAL, 1, NULL), 0);
	CHECK_STR(rows(&t), "C1");
	cp_tui__release(&t);
	CHECK_EQ(cp_tui__init(&t, rp, 0, CP_METRIC_CALLS, 0, NULL), 0);
	/* by calls: under M, A (6) before G (2) and C (1); the hot path is M, A */
	CHECK_STR(rows(&t), "M1 A2 G2 C2");
	t.sel = 2;
	CHECK_EQ(cp_tui__set_metric(&t, CP_METRIC_TOTAL), 0);
	CHECK_STR(rows(&t), "M1 G2 A2 C2");
	CHECK_EQ(t.sel, 1); /* still G */
	cp_tui__release(&t);
	cp_report_profile__free(rp);
}

TEST(tui_deep_chain_without_recursion)
{
	enum { DEPTH = 200000 };
	static const char *const names[1] = { "main" };
	const char *path = "deep.cprof";
	struct cp_thread_rec th = { .tid = 1, .nnodes = DEPTH + 1, .nthreads = 1 };
	struct cp_node_rec *n = calloc(DEPTH + 1, sizeof(*n));
	struct cp_report_opts o = { .no_compensate = 1, .no_files = 1 };
	struct cp_report_profile *rp;
	struct cp_tui t;

	CHECK(n != NULL);
	n[0] = (struct cp_node_rec){ .parent = CP_NO_PARENT, .calls = 1, .ticks = 10 * DEPTH };
	for (uint32_t i = 1; i <= DEPTH; i++)
		n[i] = (struct cp_node_rec){ .fn = 0x1000 + 16 * (i % 7), .parent = i - 1,
					     .calls = 1, .ticks = 10 * (DEPTH - i + 1) };
	cp_test__write_profile(path, NULL, n, DEPTH + 1, &th, names, 1);
	free(n);
	rp = cp_report_profile__load_many(&path, 1, &o);
	unlink(path);
	CHECK(rp != NULL);
	CHECK_EQ(cp_tui__init(&t, rp, 0, CP_METRIC_TOTAL, 1, NULL), 0);
	CHECK_EQ(cp_tui__nrows(&t), DEPTH);
	cp_tui__collapse(&t, 0);
	CHECK_EQ(cp_tui__nrows(&t), 1);
	CHECK_EQ(cp_tui__expand(&t, 0), 0);
	CHECK_EQ(cp_tui__nrows(&t), DEPTH);
	CHECK_EQ(cp_tui__parent_row(&t, DEPTH - 1), DEPTH - 2);
	CHECK_EQ(cp_tui__flat(&t), 0);
	CHECK_EQ(t.nlist, 7);
	cp_tui__tree(&t);
	CHECK_EQ(cp_tui__search(&t, "0x1000"), DEPTH / 7);
	cp_tui__release(&t);
	cp_report_profile__free(rp);
}

TEST(tui_diff_profile_matches_paths_by_name)
{
	struct cp_report_profile *a = load(CP_THREADS_MERGED), *b = load(CP_THREADS_MERGED);
	struct cp_report_profile *d;
	struct cp_figures *side, f;
	struct cp_tui t;

	/*
	 * B: M's A called twice as often (its time the same), and M's C 300 ns slower (M and the
	 * root with it).  By B's values M's children would be G 1000, A 600, C 500; by change C
	 * (300) comes first.
	 */
	for (uint32_t i = 1; i < b->trees[0].nn; i++) {
		struct cp_rnode *n = &b->trees[0].n[i];

		if (b->fns[n->fn].addr == A && n->depth == 2)
			n->calls *= 2;
		if ((b->fns[n->fn].addr == C && n->depth == 2) || b->fns[n->fn].addr == M) {
			n->total_ns += 300;
			n->self_ns += b->fns[n->fn].addr == C ? 300 : 0;
		}
	}
	b->trees[0].n[0].total_ns += 300;
	d = cp_tui__diff_profile(a, b, &side);
	CHECK(d != NULL);
	/* one path per distinct name path: as many as either tree's contexts */
	CHECK_EQ(d->trees[0].nn, a->trees[0].nn);
	CHECK_EQ(d->nfns, 5);
	/* The path to the largest change is open, down to C, below which nothing changed. */
	CHECK_EQ(cp_tui__init(&t, d, 0, CP_METRIC_TOTAL, 0, side), 0);
	CHECK_STR(rows(&t), "M1 C2 G2 A2 C1");
	cp_tui__figures(&t, row_of(&t, "C2"), &f);
	CHECK_EQ(f.total_ns, 500);
	cp_tui__side_figures(&t, row_of(&t, "C2"), &f);
	CHECK_EQ(f.total_ns, 200);
	cp_tui__figures(&t, row_of(&t, "A2"), &f);
	CHECK_EQ(f.calls, 12);
	cp_tui__side_figures(&t, row_of(&t, "A2"), &f);
	CHECK_EQ(f.calls, 6);
	CHECK_EQ(f.total_ns, 600);
	/* Calls: only A's changed; unchanged siblings by B's calls (C1's 3 before M's 1). */
	CHECK_EQ(cp_tui__set_metric(&t, CP_METRIC_CALLS), 0);
	CHECK_STR(rows(&t), "C1 M1 A2 G2 C2");
	CHECK_EQ(cp_tui__set_metric(&t, CP_METRIC_TOTAL), 0);
	/* The flat list likewise: M and C changed by 300 (M the larger in B), then by B's value. */
	CHECK_EQ(cp_tui__flat(&t), 0);
	CHECK_STR(rows(&t), "M1 C1 G1 A1 B1");
	CHECK_EQ(fnrow(&t, A)->fig.calls, 16);
	CHECK_EQ(fnrow(&t, A)->side.calls, 10);
	cp_tui__release(&t);
	cp_tui__diff_free(d, side);
	cp_report_profile__free(a);
	cp_report_profile__free(b);
}

/*
 * Every row function at the rows a key can hand it: the first, the
 * selection and its neighbours, the last, one past the last, CP_NONE.  A
 * view may have no rows at all; nothing here may read outside the model
 * (the sanitized build checks), and each answer for a row that is not
 * there is "none".
 */
static void probe_rows(struct cp_tui *t)
{
	uint32_t nr = cp_tui__nrows(t);
	const uint32_t at[] = { 0, t->sel, t->sel + 1, t->sel ? t->sel - 1 : 0, nr ? nr - 1 : 0,
				nr, nr + 1, CP_NONE };
	struct cp_figures f;

	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		uint32_t r = at[i];

		cp_tui__figures(t, r, &f);
		cp_tui__side_figures(t, r, &f);
		CHECK(cp_tui__name(t, r) != NULL);
		(void)cp_tui__row_matches(t, r);
		if (r < nr)
			continue;
		CHECK(cp_tui__node(t, r) == NULL);
		CHECK(!cp_tui__has_children(t, r));
		CHECK(!cp_tui__is_open(t, r));
		CHECK_EQ(cp_tui__depth(t, r), 0);
		CHECK_EQ(cp_tui__fn(t, r), CP_NONE);
		CHECK_EQ(cp_tui__parent_row(t, r), r);
		CHECK_EQ(cp_tui__expand(t, r), 0);
		cp_tui__collapse(t, r);
		CHECK_EQ(cp_tui__expand_all(t, r, 3), 0);
		CHECK_EQ(cp_tui__nrows(t), nr);
	}
	if (t->view == CP_TUI_TREE)
		for (uint32_t r = 0; r < t->nrows; r++)
			CHECK(t->rows[r] > 0 && t->rows[r] < t->rp->trees[t->tree].nn);
}

/* Operation op of the browser's keys on t, with the selection where it is. */
static void operate(struct cp_tui *t, int op)
{
	uint32_t nr = cp_tui__nrows(t), fn = cp_tui__fn(t, t->sel);

	switch (op) {
	case 0: cp_tui__expand(t, t->sel); break;
	case 1: cp_tui__collapse(t, t->sel); break;
	case 2: cp_tui__expand_all(t, t->sel, 3); break;
	case 3: cp_tui__collapse_all(t); break;
	case 4: t->sel = cp_tui__parent_row(t, t->sel); break;
	case 5: cp_tui__reveal(t, t->rp->trees[t->tree].nn ? t->rp->trees[t->tree].nn - 1 : 0);
		break;
	case 6: cp_tui__flat(t); break;
	case 7: cp_tui__callers(t, fn); break;
	case 8: cp_tui__callees(t, fn); break;
	case 9: cp_tui__tree(t); break;
	case 10: cp_tui__cycle_sort(t); break;
	case 11: cp_tui__set_metric(t, t->metric == CP_METRIC_TOTAL ? CP_METRIC_CALLS :
							     CP_METRIC_TOTAL);
		break;
	case 12: cp_tui__search(t, "0x"); cp_tui__next_match(t, 1); break;
	case 13: cp_tui__next_match(t, -1); break;
	case 14: t->sel = nr ? nr - 1 : 0; break; /* G */
	case 15: t->sel = nr + 5; break;	  /* past the end: a key before the clamp */
	case 16: cp_tui__clamp(t, 2); break;
	}
}
#define NOPS 17

/*
 * Issue 30: x (focus on a function of one thread), T (a thread's tree the
 * focus left empty), Enter crashed the browser.  Every sequence of three
 * operations from every start: all threads merged, the thread with rows,
 * the empty thread, and the diff mode's profile; the rows probed after each.
 */
TEST(tui_every_operation_sequence_in_every_state)
{
	struct cp_report_profile *each = load(CP_THREADS_EACH), *merged = load(CP_THREADS_MERGED);
	struct cp_report_profile *a = load(CP_THREADS_MERGED), *d;
	struct cp_view_filter *f = cp_view_filter__new(0, 0);
	struct cp_figures *side;
	char err[128];
	struct {
		struct cp_report_profile *rp;
		uint32_t tree;
		const struct cp_figures *side;
	} starts[5];
	uint32_t empty = CP_NONE;

	/* Focus on B, which only thread "main" calls: "worker" keeps no context. */
	CHECK_EQ(cp_view_filter__add(f, 1, "*0x400", err, sizeof(err)), 0);
	CHECK_EQ(cp_view_filter__apply(f, each), 0);
	cp_view_filter__free(f);
	for (uint32_t i = 0; i < each->ntrees; i++)
		if (each->trees[i].nn <= 1)
			empty = i;
	CHECK(empty != CP_NONE);
	d = cp_tui__diff_profile(a, merged, &side);
	CHECK(d != NULL);
	starts[0].rp = merged, starts[0].tree = 0, starts[0].side = NULL;
	starts[1].rp = each, starts[1].tree = !empty, starts[1].side = NULL;
	starts[2].rp = each, starts[2].tree = empty, starts[2].side = NULL;
	starts[3].rp = d, starts[3].tree = 0, starts[3].side = side;
	starts[4].rp = d, starts[4].tree = 0, starts[4].side = NULL;
	for (int s = 0; s < 5; s++)
		for (int ops = 0; ops < NOPS * NOPS * NOPS; ops++) {
			struct cp_tui t;

			CHECK_EQ(cp_tui__init(&t, starts[s].rp, starts[s].tree, CP_METRIC_TOTAL, 0,
					      starts[s].side), 0);
			probe_rows(&t);
			for (int k = 0, o = ops; k < 3; k++, o /= NOPS) {
				operate(&t, o % NOPS);
				probe_rows(&t);
			}
			cp_tui__clamp(&t, 2);
			CHECK(cp_tui__nrows(&t) ? t.sel < cp_tui__nrows(&t) : t.sel == 0);
			cp_tui__release(&t);
		}
	cp_tui__diff_free(d, side);
	cp_report_profile__free(a);
	cp_report_profile__free(merged);
	cp_report_profile__free(each);
}
