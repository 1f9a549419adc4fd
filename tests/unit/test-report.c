/*
 * test-report.c - the report model's arithmetic on a hand-made profile:
 * self time, overhead compensation, recursion-aware flat totals, the HTML
 * export's node order.
 *
 * The profile is written with the real writer; one tick is one
 * nanosecond (CLOCK_MONOTONIC), so every expected value below can be
 * worked out by hand from the numbers in make_profile().
 */
#include <stdlib.h>
#include <unistd.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/json.h"
#include "report/report.h"
#include "tests/unit/rtree.h"
#include "tests/unit/unittest.h"

static struct cp_writer w;

/*
 * Thread tree (fn addresses are arbitrary, no modules):
 *   root           ticks 1100
 *     P  0x100     calls 1,  ticks 1000  (its one call: min = max = 1000)
 *       C 0x200    calls 10, ticks 300   (calls of 10 to 100)
 *       R 0x300    calls 1,  ticks 400
 *         R 0x300  calls 2,  ticks 100  (recursion: R inside R)
 * Calibration: outside 20, inside 5 ticks per call.
 */
static void make_profile_excluding(const char *path, int excluded)
{
	struct cp_meta meta = { 0 };
	struct cp_thread_rec th = { .nthreads = 1 };
	struct cp_node_rec n[6] = { 0 };
	uint32_t nn = excluded ? 6 : 5;

	CHECK_EQ(cp_writer__begin(&w, path), 0);
	meta.clock = CP_CLOCK_MONOTONIC;
	meta.ticks_per_sec = 1000000000u;
	meta.overhead_ticks = 20;
	meta.self_overhead_ticks = 5;
	meta.untimed_overhead_ticks = excluded ? 10 : 0;
	cp_writer__section(&w, CP_SEC_META, sizeof(meta));
	cp_writer__put(&w, &meta, sizeof(meta));
	n[0] = (struct cp_node_rec){ .parent = CP_NO_PARENT, .calls = 1, .ticks = 1100 };
	n[1] = (struct cp_node_rec){ .fn = 0x100, .parent = 0, .calls = 1, .ticks = 1000,
				     .min_ticks = 1000, .max_ticks = 1000 };
	n[2] = (struct cp_node_rec){ .fn = 0x200, .parent = 1, .calls = 10, .ticks = 300,
				     .min_ticks = 10, .max_ticks = 100 };
	n[3] = (struct cp_node_rec){ .fn = 0x300, .parent = 1, .calls = 1, .ticks = 400 };
	n[4] = (struct cp_node_rec){ .fn = 0x300, .parent = 3, .calls = 2, .ticks = 100 };
	/* X 0x400, excluded: 40 calls in P's context, counted only. */
	n[5] = (struct cp_node_rec){ .fn = 0x400, .parent = 1, .calls = 40,
				     .flags = CP_NODE_EXCLUDED };
	cp_writer__section(&w, CP_SEC_NODES, sizeof(n[0]));
	cp_writer__put(&w, n, nn * sizeof(n[0]));
	th.tid = 1;
	th.nnodes = nn;
	th.name = cp_writer__string(&w, "main");
	cp_writer__section(&w, CP_SEC_THREADS, sizeof(th));
	cp_writer__put(&w, &th, sizeof(th));
	CHECK_EQ(cp_writer__finish(&w, CP_FEAT_TIMING), 0);
}

static void make_profile(const char *path)
{
	make_profile_excluding(path, 0);
}

static struct cp_report_profile *load(int no_compensate)
{
	struct cp_report_opts o = { .threads = CP_THREADS_MERGED, .no_compensate = no_compensate };
	struct cp_report_profile *rp;

	make_profile("r.cprof");
	rp = cp_report_profile__load("r.cprof", &o);
	CHECK(rp != NULL);
	return rp;
}

TEST(raw_self_is_total_minus_children)
{
	struct cp_report_profile *rp = load(1);
	const struct cp_rtree *t = &rp->trees[0];
	const struct cp_rnode *p = find(rp, t, 0, 0x100);
	const struct cp_rnode *r = find(rp, t, p - t->n, 0x300);

	CHECK(!rp->compensated);
	CHECK_EQ(t->n[0].total_ns, 1100);
	CHECK_EQ(t->n[0].self_ns, 100);
	CHECK_EQ(p->total_ns, 1000);
	CHECK_EQ(p->self_ns, 1000 - 300 - 400);
	CHECK_EQ(r->self_ns, 300);
	cp_report_profile__free(rp);
}

TEST(compensation_subtracts_per_call_and_rebuilds_totals)
{
	struct cp_report_profile *rp = load(0);
	const struct cp_rtree *t = &rp->trees[0];
	const struct cp_rnode *p = find(rp, t, 0, 0x100);
	const struct cp_rnode *c = find(rp, t, p - t->n, 0x200);
	const struct cp_rnode *r = find(rp, t, p - t->n, 0x300);
	const struct cp_rnode *rr = find(rp, t, r - t->n, 0x300);

	CHECK(rp->compensated);
	/* Leaves lose inside x own calls. */
	CHECK_EQ(c->self_ns, 300 - 5 * 10);
	CHECK_EQ(c->total_ns, 250);
	CHECK_EQ(rr->self_ns, 100 - 5 * 2);
	/* R: inside x 1 own call, outside x 2 child calls. */
	CHECK_EQ(r->self_ns, 300 - 5 - 20 * 2);
	CHECK_EQ(r->total_ns, 255 + 90);
	/* P: inside x 1, outside x (10 + 1) child calls. */
	CHECK_EQ(p->self_ns, 300 - 5 - 20 * 11);
	CHECK_EQ(p->total_ns, 75 + 250 + 345);
	/* The root (no calls of its own) loses outside x its child's call. */
	CHECK_EQ(t->n[0].self_ns, 100 - 20);
	CHECK_EQ(t->n[0].total_ns, 80 + 670);
	CHECK_EQ(rp->subtracted_ns, 1100 - 750);
	CHECK_EQ(rp->raw_ns, 1100);
	CHECK_EQ(p->overhead_ns, 1000 - 670);
	/* Min and max lose inside; P's one call cannot outlast P's total. */
	CHECK_EQ(c->min_ns, 10 - 5);
	CHECK_EQ(c->max_ns, 100 - 5);
	CHECK_EQ(p->min_ns, 670);
	CHECK_EQ(p->max_ns, 670);
	cp_report_profile__free(rp);
}

TEST(compensation_clamps_at_zero)
{
	struct cp_report_opts o = { .threads = CP_THREADS_MERGED };
	struct cp_report_profile *rp;
	const struct cp_rtree *t;

	/* Calibration far larger than any time: everything clamps to 0. */
	{
		struct cp_meta meta = { 0 };
		struct cp_thread_rec th = { .nthreads = 1 };
		struct cp_node_rec n[2] = { 0 };

		CHECK_EQ(cp_writer__begin(&w, "big.cprof"), 0);
		meta.clock = CP_CLOCK_MONOTONIC;
		meta.ticks_per_sec = 1000000000u;
		meta.overhead_ticks = 1000000;
		meta.self_overhead_ticks = 1000000;
		cp_writer__section(&w, CP_SEC_META, sizeof(meta));
		cp_writer__put(&w, &meta, sizeof(meta));
		n[0] = (struct cp_node_rec){ .parent = CP_NO_PARENT, .calls = 1, .ticks = 50 };
		n[1] = (struct cp_node_rec){ .fn = 0x100, .parent = 0, .calls = 3, .ticks = 40 };
		cp_writer__section(&w, CP_SEC_NODES, sizeof(n[0]));
		cp_writer__put(&w, n, sizeof(n));
		th.nnodes = 2;
		cp_writer__section(&w, CP_SEC_THREADS, sizeof(th));
		cp_writer__put(&w, &th, sizeof(th));
		CHECK_EQ(cp_writer__finish(&w, CP_FEAT_TIMING), 0);
	}
	rp = cp_report_profile__load("big.cprof", &o);
	CHECK(rp != NULL);
	t = &rp->trees[0];
	CHECK_EQ(t->n[1].self_ns, 0);
	CHECK_EQ(t->n[1].total_ns, 0);
	CHECK_EQ(t->n[0].self_ns, 0);
	CHECK_EQ(t->n[0].total_ns, 0);
	CHECK_EQ(rp->subtracted_ns, 50);
	cp_report_profile__free(rp);
}

TEST(mostly_overhead_times_are_marked)
{
	struct cp_report_profile *rp = load(0);
	struct cp_view_opts vo = { .fields = "calls,total,self,name", .sort = CP_SORT_NAME };
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	CHECK_EQ(cp_view_tree(rp, &vo, fp), 0);
	fclose(fp);
	/*
	 * P lost 330 of 1000 (total) and 225 of its raw 300 self: self marked,
	 * total not.  C lost 50 of 300: not marked.
	 */
	CHECK(strstr(buf, "           1       670ns       ~75ns  [unknown]+0x100\n") != NULL);
	CHECK(strstr(buf, "          10       250ns       250ns    [unknown]+0x200\n") != NULL);
	free(buf);
	cp_report_profile__free(rp);
}

TEST(flat_total_counts_recursion_once)
{
	struct cp_report_profile *rp = load(1);
	struct cp_view_opts vo = { .fields = "calls,total,self,name", .sort = CP_SORT_NAME };
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	CHECK_EQ(cp_view_flat(rp, &vo, fp), 0);
	fclose(fp);
	/* R: 3 calls; total only from the outer activation (400ns), self 300 + 100. */
	CHECK(strstr(buf, "           3       400ns       400ns  [unknown]+0x300\n") != NULL);
	CHECK(strstr(buf, "           1      1.00us       300ns  [unknown]+0x100\n") != NULL);
	free(buf);
	cp_report_profile__free(rp);
}

TEST(html_nodes_are_depth_first_by_name)
{
	struct cp_report_profile *rp = load(1);
	char *buf = NULL, *data;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	CHECK_EQ(cp_export_html(rp, NULL, cp_report_profile__weight(rp, NULL, 0), fp), 0);
	fclose(fp);
	data = strstr(buf, "<script type=\"application/json\" id=\"profile\">{");
	CHECK(data != NULL);
	*strstr(data, "</script>") = '\0';
	/* The model has R (400) before C (300) under P; the page gets C, R, R's R. */
	CHECK(strstr(data, "\"parent\":[-1,0,1,1,3],\"fn\":[") != NULL);
	CHECK(strstr(data, "\"calls\":[0,1,10,1,2],\"total\":[1100,1000,300,400,100],") != NULL);
	CHECK(strstr(data, "\"self\":[100,300,300,300,100],") != NULL);
	free(buf);
	cp_report_profile__free(rp);
}

TEST(json_for_html_writes_no_angle_bracket)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct cp_json *j = cp_json__new(fp, CP_JSON_HTML);

	cp_json__arr(j);
	cp_json__str(j, "operator</script><!--");
	cp_json__i64(j, -1);
	cp_json__end_arr(j);
	CHECK_EQ(cp_json__finish(j), 0);
	fclose(fp);
	CHECK_STR(buf, "[\"operator\\u003c/script>\\u003c!--\",-1]\n");
	free(buf);
}

/*
 * Call-site records (CP_NODE_SITE), two threads:
 *   thread 1: P 0x100 -> C 0x200 from site 0x110 (10 calls, 300 ticks) and,
 *             as a site record, from 0x120 (5 calls, 150); D 0x300 below C
 *             (15 calls, 100)
 *   thread 2: P 0x100 -> C 0x200 from site 0x130 (2 calls, 60)
 * Calibration as above: outside 20, inside 5.
 */
static void make_site_profile(const char *path)
{
	struct cp_meta meta = { 0 };
	struct cp_thread_rec th[2] = { { .tid = 1, .nthreads = 1, .nnodes = 5 },
				       { .tid = 2, .nthreads = 1, .first_node = 5, .nnodes = 3 } };
	struct cp_node_rec n[8] = { 0 };

	CHECK_EQ(cp_writer__begin(&w, path), 0);
	meta.clock = CP_CLOCK_MONOTONIC;
	meta.ticks_per_sec = 1000000000u;
	meta.overhead_ticks = 20;
	meta.self_overhead_ticks = 5;
	cp_writer__section(&w, CP_SEC_META, sizeof(meta));
	cp_writer__put(&w, &meta, sizeof(meta));
	n[0] = (struct cp_node_rec){ .parent = CP_NO_PARENT, .calls = 1, .ticks = 1100 };
	n[1] = (struct cp_node_rec){ .fn = 0x100, .site = 0x10, .parent = 0, .calls = 1, .ticks = 1000 };
	n[2] = (struct cp_node_rec){ .fn = 0x200, .site = 0x110, .parent = 1, .calls = 10, .ticks = 300 };
	n[3] = (struct cp_node_rec){ .fn = 0x200, .site = 0x120, .parent = 1, .calls = 5, .ticks = 150,
				     .flags = CP_NODE_SITE };
	n[4] = (struct cp_node_rec){ .fn = 0x300, .site = 0x210, .parent = 2, .calls = 15, .ticks = 100 };
	n[5] = (struct cp_node_rec){ .parent = CP_NO_PARENT, .calls = 1, .ticks = 600 };
	n[6] = (struct cp_node_rec){ .fn = 0x100, .site = 0x10, .parent = 0, .calls = 1, .ticks = 500 };
	n[7] = (struct cp_node_rec){ .fn = 0x200, .site = 0x130, .parent = 1, .calls = 2, .ticks = 60 };
	cp_writer__section(&w, CP_SEC_NODES, sizeof(n[0]));
	cp_writer__put(&w, n, sizeof(n));
	th[0].name = cp_writer__string(&w, "one");
	th[1].name = cp_writer__string(&w, "two");
	cp_writer__section(&w, CP_SEC_THREADS, sizeof(th[0]));
	cp_writer__put(&w, th, sizeof(th));
	CHECK_EQ(cp_writer__finish(&w, CP_FEAT_TIMING), 0);
}

/* Sites of node n: count, and the calls and total of the one at site. */
static uint32_t site_of(const struct cp_rtree *t, const struct cp_rnode *n, uint64_t site,
			uint64_t *calls, uint64_t *total)
{
	uint32_t k = 0;

	*calls = *total = UINT64_MAX;
	for (uint32_t s = n->sites; s != CP_NONE; s = t->sites[s].next, k++)
		if (t->sites[s].site == site)
			*calls = t->sites[s].calls, *total = t->sites[s].total_ns;
	return k;
}

TEST(call_site_records_add_into_their_context)
{
	struct cp_report_opts o = { .threads = CP_THREADS_MERGED, .no_compensate = 1 };
	struct cp_report_profile *rp;
	const struct cp_rtree *t;
	const struct cp_rnode *p, *c;
	uint64_t calls, total;

	make_site_profile("s.cprof");
	rp = cp_report_profile__load("s.cprof", &o);
	CHECK(rp != NULL);
	t = &rp->trees[0];
	p = find(rp, t, 0, 0x100);
	c = find(rp, t, (uint32_t)(p - t->n), 0x200);
	/* One context, whatever the sites and threads; its children stay below it. */
	CHECK_EQ(c->calls, 17);
	CHECK_EQ(c->total_ns, 510);
	CHECK_EQ(find(rp, t, (uint32_t)(c - t->n), 0x300)->calls, 15);
	CHECK_EQ(rp->paths, 5); /* the site record is not a path of its own */
	CHECK_EQ(rp->calls, 34);
	CHECK_EQ(site_of(t, c, 0x110, &calls, &total), 3);
	CHECK_EQ(calls, 10);
	CHECK_EQ(total, 300);
	site_of(t, c, 0x120, &calls, &total);
	CHECK_EQ(calls, 5);
	CHECK_EQ(total, 150);
	site_of(t, c, 0x130, &calls, &total);
	CHECK_EQ(calls, 2);
	CHECK_EQ(total, 60);
	/* A context with one site keeps it in the node, no list. */
	CHECK_EQ(p->sites, CP_NONE);
	CHECK_EQ(p->site, 0x10);
	cp_report_profile__free(rp);

	o.threads = CP_THREADS_EACH;
	rp = cp_report_profile__load("s.cprof", &o);
	CHECK(rp != NULL);
	t = &rp->trees[1];
	c = find(rp, t, (uint32_t)(find(rp, t, 0, 0x100) - t->n), 0x200);
	CHECK_EQ(c->sites, CP_NONE);
	CHECK_EQ(c->site, 0x130);
	cp_report_profile__free(rp);
	unlink("s.cprof");
}

TEST(compensation_is_shared_among_call_sites)
{
	struct cp_report_opts o = { .threads = CP_THREADS_MERGED };
	struct cp_report_profile *rp;
	const struct cp_rtree *t;
	const struct cp_rnode *c;
	uint64_t sum_calls = 0, sum_total = 0;

	make_site_profile("s.cprof");
	rp = cp_report_profile__load("s.cprof", &o);
	CHECK(rp != NULL);
	t = &rp->trees[0];
	c = find(rp, t, (uint32_t)(find(rp, t, 0, 0x100) - t->n), 0x200);
	/*
	 * D: 100 - 15 x 5 = 25.  C: self 410 - (17 x 5 inside + 15 x 20
	 * outside) = 25, total 25 + 25 = 50, so 460 of its raw 510 go.
	 */
	CHECK_EQ(c->total_ns, 50);
	for (uint32_t s = c->sites; s != CP_NONE; s = t->sites[s].next) {
		CHECK(t->sites[s].overhead_ns <= 460);
		sum_calls += t->sites[s].calls;
		sum_total += t->sites[s].total_ns;
	}
	CHECK_EQ(sum_calls, 17);
	CHECK_EQ(sum_total, 50);
	cp_report_profile__free(rp);
	unlink("s.cprof");
}

/*
 * The verdict's figures on the hand-made profile: 350 of 1100 ns
 * subtracted; each call costs 25 ns (outside + inside), so C's 10 calls
 * are 250 of the 350 estimated, R's 3 are 75 and P's one 25.  C and R
 * cover 93% (over CP_OVERHEAD_COVERED), so P is not named.
 */
TEST(overhead_names_the_functions_whose_calls_cost_it)
{
	struct cp_report_profile *rp = load(0);
	struct cp_overhead ov;

	CHECK_EQ(cp_report_overhead(rp, &ov), 0);
	CHECK(ov.share > 0.318 && ov.share < 0.319); /* 350 / 1100 */
	CHECK_EQ(ov.ntop, 2);
	CHECK_EQ(rp->fns[ov.top[0].fn].addr, 0x200);
	CHECK_EQ(ov.top[0].calls, 10);
	CHECK_EQ(ov.top[0].own_ns, 250);
	CHECK(ov.top[0].share > 0.714 && ov.top[0].share < 0.715);
	CHECK_EQ(rp->fns[ov.top[1].fn].addr, 0x300);
	CHECK_EQ(ov.top[1].calls, 3);
	CHECK(ov.producer == NULL); /* no module, no DWARF */
	cp_report_profile__free(rp);
	/* Raw times: how much was the hooks' is not known. */
	rp = load(1);
	CHECK_EQ(cp_report_overhead(rp, &ov), -1);
	CHECK_EQ(ov.ntop, 0);
	cp_report_profile__free(rp);
	unlink("r.cprof");
}

/*
 * An excluded function has no context, but its calls run the hooks: X's 40
 * calls in P's context cost 40 x 10 (a count-only call's cost) = 400 of
 * the 750 estimated, more than C's 250, and X is named first, as excluded
 * (its own time is P's, not known).  Its caller P, with one call, is not
 * blamed for them.
 */
TEST(overhead_counts_the_calls_of_excluded_functions)
{
	struct cp_report_opts o = { .threads = CP_THREADS_MERGED };
	struct cp_report_profile *rp;
	struct cp_overhead ov;

	make_profile_excluding("x.cprof", 1);
	rp = cp_report_profile__load("x.cprof", &o);
	CHECK(rp != NULL);
	CHECK_EQ(rp->excluded_calls, 40);
	CHECK_EQ(cp_report_overhead(rp, &ov), 0);
	CHECK_EQ(ov.ntop, 2);
	CHECK(ov.top[0].excluded);
	CHECK_EQ(ov.top[0].fn, CP_NONE);
	CHECK_EQ(ov.top[0].addr, 0x400);
	CHECK_EQ(ov.top[0].calls, 40);
	CHECK(ov.top[0].name != NULL);
	CHECK(ov.top[0].share > 0.533 && ov.top[0].share < 0.534); /* 400 / 750 */
	CHECK(!ov.top[1].excluded);
	CHECK_EQ(ov.top[1].addr, 0x200);
	CHECK_EQ(rp->fns[ov.top[1].fn].addr, 0x200);
	CHECK(ov.top[1].share > 0.333 && ov.top[1].share < 0.334); /* 250 / 750 */
	cp_report_profile__free(rp);
	unlink("x.cprof");
}

static void check_exclude(const char *name, const char *want)
{
	char *got = cp_exclude_name(name);

	if (!want)
		CHECK(got == NULL);
	else
		CHECK_STR(got, want);
	free(got);
}

/* gcc matches substrings of its own printable name: qualified, no types, no arguments. */
TEST(exclude_names_are_what_gcc_matches)
{
	check_exclude("bump", "bump");
	check_exclude("bump.part.0", "bump");
	check_exclude("ns::tiny(int)", "ns::tiny");
	check_exclude("long ns::twice<long>(long, int)", "ns::twice");
	check_exclude("ns::Vec<int, 3>::at(unsigned long) const", "at");
	check_exclude("std::vector<int, std::allocator<int> > ns::Box<int>::get<2>()", "get");
	check_exclude("f(int) [clone .isra.0]", "f");
	check_exclude("(anonymous namespace)::helper(int)", "helper");
	check_exclude("ns::A::operator<(ns::A const&) const", NULL);
	check_exclude("main::{lambda(int)#1}::operator()(int) const", NULL);
}

TEST(function_names_match_with_or_without_their_file)
{
	CHECK_EQ(cp_fn_name_bare_len("helper (a.c)"), 6);
	CHECK_EQ(cp_fn_name_bare_len("helper"), 6);
	/* A C++ parameter list is not a file. */
	CHECK_EQ(cp_fn_name_bare_len("f(int)"), 6);
	CHECK_EQ(cp_fn_name_bare_len("g(void (*)(int))"), 16);
	CHECK_EQ(cp_fn_name_bare_len("f(int) (a.cc)"), 6);
	CHECK(cp_fn_name_matches("helper (a.c)", "helper"));
	CHECK(cp_fn_name_matches("helper (a.c)", "helper (a.c)"));
	CHECK(!cp_fn_name_matches("helper (a.c)", "helper (b.c)"));
	CHECK(!cp_fn_name_matches("helper (a.c)", "help"));
	CHECK(!cp_fn_name_matches("helpers", "helper"));
}

/*
 * Shortened names keep the method (cp_short_name): templates, the
 * parameters, the qualifiers from the left, "...::" and "(...)", and only
 * then the end; widths in characters, never a cut inside a UTF-8 one.
 */
TEST(short_names_keep_the_method)
{
	static const struct {
		const char *name;
		int width;
		const char *want;
	} cases[] = {
		{ "main", 10, "main" },
		{ "shapes::operator<(shapes::Circle const&, shapes::Circle const&)", 30,
		  "shapes::operator<(...)" },
		{ "double shapes::twice<double>(double, int)", 30, "double shapes::twice<...>(...)" },
		{ "leveldb::(anonymous namespace)::MergingIterator::FindSmallest()", 40,
		  "...::MergingIterator::FindSmallest()" },
		{ "leveldb::(anonymous namespace)::MergingIterator::FindSmallest()", 26,
		  "...::FindSmallest()" },
		{ "leveldb::(anonymous namespace)::MergingIterator::FindSmallest()", 14,
		  "FindSmallest()" },
		{ "a::b::c::add_every_value_of_the_buffer_in_place(std::map<int, int> const&, unsigned)", 38,
		  "add_every_value_of_the_buffer_in_place" },
		{ "a::b::c::add_every_value_of_the_buffer_in_place(int)", 20, "add_every_value_o..." },
		{ "a_very_long_c_function_name_without_any_qualifier_at_all", 26,
		  "a_very_long_c_function_..." },
		{ "grüße::überlang::Funktion(int)", 19, "...::Funktion(int)" },
		{ "grüßeüberlangerfunktionsname", 10, "grüßeüb..." },
	};
	char buf[1024];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = cp_short_name(cases[i].name, cases[i].width, buf, sizeof(buf));

		CHECK_STR(got, cases[i].want);
		CHECK_LE(cp_text_width(got), (size_t)cases[i].width);
	}
	CHECK_STR(cp_short_name("anything::at::all()", 0, buf, sizeof(buf)), "anything::at::all()");
}

/* How pattern names name (enum cp_name_rank). */
static int rank(const char *pattern, const char *name)
{
	struct cp_name_pattern *p = cp_name_pattern__new(pattern, 0, NULL, 0);
	int r = (int)cp_name_pattern__rank(p, name);

	cp_name_pattern__free(p);
	return r;
}

TEST(names_exactly_without_parameters_by_their_last_parts_or_by_globs)
{
	const char *seek = "leveldb::Block::Iter::Seek(leveldb::Slice const&)";
	const char *twice = "int shapes::twice<int>(int)";
	const char *reg = "ns::Registry<std::map<int, int>, long>::add(int) const";

	CHECK_EQ(rank(seek, seek), CP_NAME_EXACT);
	CHECK_EQ(rank("leveldb::Block::Iter::Seek(leveldb::Slice const &)", seek), CP_NAME_EXACT);
	CHECK_EQ(rank("leveldb::Block::Iter::Seek", seek), CP_NAME_NOPARAMS);
	CHECK_EQ(rank("Block::Iter::Seek", seek), CP_NAME_SUFFIX);
	CHECK_EQ(rank("Seek", seek), CP_NAME_SUFFIX);
	CHECK_EQ(rank("Seek(leveldb::Slice const&)", seek), CP_NAME_SUFFIX);
	CHECK_EQ(rank("*Seek*", seek), CP_NAME_GLOB);
	CHECK_EQ(rank("Iter::*", seek), CP_NAME_GLOB);
	CHECK_EQ(rank("eek", seek), CP_NAME_NONE);
	CHECK_EQ(rank("Slice const&)", seek), CP_NAME_NONE);
	CHECK_EQ(rank("shapes::twice<int>", twice), CP_NAME_NOPARAMS);
	CHECK_EQ(rank("shapes::twice", twice), CP_NAME_NOPARAMS);
	CHECK_EQ(rank("twice", twice), CP_NAME_SUFFIX);
	CHECK_EQ(rank("ns::Registry::add", reg), CP_NAME_NOPARAMS);
	CHECK_EQ(rank("Registry::add", reg), CP_NAME_SUFFIX);
	CHECK_EQ(rank("int, int>, long>::add", reg), CP_NAME_NONE);
	CHECK_EQ(rank("helper", "helper (a.c)"), CP_NAME_EXACT);
	CHECK_EQ(rank("helper (a.c)", "helper (a.c)"), CP_NAME_EXACT);
	CHECK_EQ(rank("helper (b.c)", "helper (a.c)"), CP_NAME_NONE);
	CHECK_EQ(rank("helper*", "helper (b.c)"), CP_NAME_GLOB);
	CHECK_EQ(rank("[kernel]", "[kernel]"), CP_NAME_EXACT);
	CHECK_EQ(rank("f", "f.part.0"), CP_NAME_NOPARAMS);
	CHECK_EQ(rank("f", "ns::f(int) [clone .isra.0]"), CP_NAME_SUFFIX);
	CHECK_EQ(rank("operator<", "ns::A::operator<(ns::A const&) const"), CP_NAME_SUFFIX);
	CHECK_EQ(rank("A::operator()", "ns::A::operator()(int)"), CP_NAME_SUFFIX);
	CHECK_EQ(rank("operator long", "ns::A::operator long() const"), CP_NAME_SUFFIX);
	CHECK_EQ(rank("operator\\*", "ns::A::operator*()"), CP_NAME_SUFFIX);
	CHECK_EQ(rank("\\[kernel\\]", "[kernel]"), CP_NAME_EXACT);
	CHECK_EQ(rank("\\[kernel\\]", "k"), CP_NAME_NONE);
	CHECK_EQ(rank("main", "domain"), CP_NAME_NONE);
}

TEST(a_name_names_the_functions_of_the_best_rank_only)
{
	const char *names[] = { "f", "ns::f(int)", "ns::f(double)", "g", NULL };
	struct cp_name_pattern *p = cp_name_pattern__new("f", 0, NULL, 0);
	uint8_t hit[5];
	char *close;

	CHECK_EQ(cp_name_pattern__select(p, names, 5, hit), 1);
	CHECK(hit[0] && !hit[1] && !hit[2]);
	names[0] = "h";
	CHECK_EQ(cp_name_pattern__select(p, names, 5, hit), 2);
	CHECK(!hit[0] && hit[1] && hit[2] && !hit[3]);
	cp_name_pattern__free(p);
	/* Nothing named: the closest names, in any case, a part, or a few letters off. */
	p = cp_name_pattern__new("seek", 0, NULL, 0);
	{
		const char *more[] = { "unrelated", "leveldb::DBIter::SeekToFirst()", "Sek",
				       "leveldb::Block::Iter::Seek(leveldb::Slice const&)", "Skew" };

		CHECK_EQ(cp_name_pattern__select(p, more, 5, hit), 0);
		close = cp_name_pattern__suggest(p, more, 5, 5);
		CHECK_STR(close, "leveldb::Block::Iter::Seek(leveldb::Slice const&), "
				 "leveldb::DBIter::SeekToFirst(), Sek");
		free(close);
		close = cp_name_pattern__suggest(p, more, 5, 1);
		CHECK_STR(close, "leveldb::Block::Iter::Seek(leveldb::Slice const&), ...");
		free(close);
	}
	cp_name_pattern__free(p);
	p = cp_name_pattern__new("*nothing like it*", 0, NULL, 0);
	CHECK(cp_name_pattern__suggest(p, names, 5, 5) == NULL);
	cp_name_pattern__free(p);
}
