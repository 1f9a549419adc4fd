/*
 * fuzz-report.c - the reader, then the report: cp_report_profile__from_file()
 * and every view (tree, flat, callers, callees, plist, lines) written to
 * /dev/null.
 *
 * Each accepted input is loaded with all threads merged, for every view;
 * then again, through the hide filter, for `callprof diff` of the two; then
 * with one tree per thread, through the report-time filters (hide, focus,
 * min-percent).  Symbols come from the profile alone (no_files), so a run
 * reads no file an input names.
 */
#include "format/format.h"
#include "report/diff.h"
#include "report/report.h"
#include "tests/fuzz/fuzz.h"

/* Every column there is, so each formatter runs. */
static const char all_fields[] =
	"calls,total,self,percent,self-percent,avg,min,max,site,calls-min,calls-max,calls-mean,"
	"total-min,total-max,total-mean,cpu,wait,inactive,self-cpu,self-wait,self-inactive,"
	"cpu-percent,switches-vol,switches-invol,self-switches-vol,self-switches-invol,name";

/* A function of rp to ask views about: the one at the middle, or NULL. */
static const char *some_function(const struct cp_report_profile *rp)
{
	return rp->nfns ? rp->fns[rp->nfns / 2].name : NULL;
}

/* callprof diff of a against the same input with its first function hidden. */
static void diff(struct cp_report_profile *a, const uint8_t *data, size_t size)
{
	static const char *const conds[] = { "calls-changed", "paths-changed", "calls>+10%",
					     "total>+1ms", "self<-5%" };
	struct cp_report_opts ro = { .threads = CP_THREADS_MERGED, .no_files = 1 };
	struct cp_diff_print_opts po = { .all = 1 };
	struct cp_profile_file *pf;
	struct cp_report_profile *b;
	struct cp_view_filter *f;
	struct cp_diff *d;
	FILE *fp = cp_fuzz__sink();
	char err[256];

	if (a->pf->meta.mode == CP_MODE_COVERAGE) /* diff refuses those */
		return;
	pf = cp_fuzz__open(data, size);
	CP_FUZZ_CHECK(pf != NULL); /* it was accepted the first time */
	b = cp_report_profile__from_file(pf, &ro);
	f = cp_view_filter__new(0, 0);
	if (b->nfns)
		CP_FUZZ_CHECK(!cp_view_filter__add(f, 0, b->fns[0].name, err, sizeof(err)));
	CP_FUZZ_CHECK(!cp_view_filter__apply(f, b));
	d = cp_diff__new(a, b, 1.0);
	cp_diff__print(d, &po, fp);
	po = (struct cp_diff_print_opts){ .limit = 3, .fields = "calls-a,calls-b,calls-delta,"
		"self-a,self-b,self-delta,self-ratio,total-a,total-b,total-delta,total-ratio,status,"
		"path" };
	cp_diff__print(d, &po, fp);
	for (size_t i = 0; i < sizeof(conds) / sizeof(conds[0]); i++) {
		struct cp_diff_cond c;
		const char *why;

		CP_FUZZ_CHECK(!cp_diff_cond__parse(&c, conds[i], &why));
		if (!cp_diff_cond__timed(&c) || (a->timed && b->timed))
			cp_diff__check(d, &c, fp);
	}
	cp_diff__free(d);
	cp_view_filter__free(f);
	cp_report_profile__free(b);
}

static void views_merged(const uint8_t *data, size_t size)
{
	struct cp_report_opts ro = { .threads = CP_THREADS_MERGED, .no_files = 1 };
	struct cp_view_opts vo = { .sort = CP_SORT_TOTAL };
	struct cp_profile_file *pf = cp_fuzz__open(data, size);
	struct cp_report_profile *rp;
	FILE *fp = cp_fuzz__sink();

	if (!pf)
		return;
	rp = cp_report_profile__from_file(pf, &ro);
	CP_FUZZ_CHECK(rp != NULL);
	cp_view_tree(rp, &vo, fp);
	vo.fields = all_fields;
	vo.srcline = 1;
	vo.name_width = 12;
	vo.sort = CP_SORT_CALLS;
	cp_view_tree(rp, &vo, fp);
	vo = (struct cp_view_opts){ .sort = CP_SORT_SELF };
	cp_view_flat(rp, &vo, fp);
	vo.fields = all_fields;
	vo.sort = CP_SORT_NAME;
	cp_view_flat(rp, &vo, fp);
	vo = (struct cp_view_opts){ .sort = CP_SORT_TOTAL, .function = some_function(rp) };
	if (vo.function) {
		cp_view_callers(rp, &vo, fp);
		cp_view_callees(rp, &vo, fp);
		vo.srcline = 1;
		cp_view_callees(rp, &vo, fp);
	}
	vo = (struct cp_view_opts){ .sort = CP_SORT_TOTAL };
	cp_view_plist(rp, &vo, fp);
	if (pf->nlines) {
		/* The function of a sampled line, so the view has something to show. */
		uint32_t id = rp->node_map[pf->lines[0].node];

		vo.function = id != CP_NONE && rp->trees[0].n[id].fn != CP_NONE ?
			rp->fns[rp->trees[0].n[id].fn].name : some_function(rp);
		if (vo.function)
			cp_view_lines(rp, &vo, fp);
	}
	diff(rp, data, size);
	cp_report_profile__free(rp);
}

static void views_each(const uint8_t *data, size_t size)
{
	struct cp_report_opts ro = { .threads = CP_THREADS_EACH, .no_files = 1 };
	struct cp_view_opts vo = { .sort = CP_SORT_TOTAL, .min_percent = 0.5 };
	struct cp_profile_file *pf = cp_fuzz__open(data, size);
	struct cp_report_profile *rp;
	struct cp_view_filter *f;
	FILE *fp = cp_fuzz__sink();
	char err[256];

	if (!pf)
		return;
	rp = cp_report_profile__from_file(pf, &ro);
	CP_FUZZ_CHECK(rp != NULL);
	f = cp_view_filter__new(0, 1.0);
	if (rp->nfns) {
		CP_FUZZ_CHECK(!cp_view_filter__add(f, 0, rp->fns[0].name, err, sizeof(err)));
		CP_FUZZ_CHECK(
			!cp_view_filter__add(f, 1, rp->fns[rp->nfns - 1].name, err, sizeof(err)));
	}
	if (!cp_view_filter__apply(f, rp)) {
		cp_view_tree(rp, &vo, fp);
		cp_view_flat(rp, &vo, fp);
		vo.function = some_function(rp);
		if (vo.function)
			cp_view_callers(rp, &vo, fp);
	}
	cp_view_filter__free(f);
	cp_report_profile__free(rp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	views_merged(data, size);
	views_each(data, size);
	return 0;
}
