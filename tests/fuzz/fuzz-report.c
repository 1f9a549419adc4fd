/*
 * fuzz-report.c - the reader, then the report: cp_report_profile__from_file()
 * and every view (tree, flat, callers, callees, plist, lines) written to
 * /dev/null.
 *
 * Each accepted input is loaded twice: with all threads merged and every
 * view; then one tree per thread, through the report-time filters (hide,
 * focus, min-percent).  Symbols come from the profile alone (no_files), so
 * a run reads no file an input names.
 */
#include "format/format.h"
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
	cp_report_profile__free(rp);
}

static void views_each(const uint8_t *data, size_t size)
{
	struct cp_report_opts ro = { .threads = CP_THREADS_EACH, .no_files = 1 };
	struct cp_view_opts vo = { .sort = CP_SORT_TOTAL, .min_percent = 0.5 };
	struct cp_profile_file *pf = cp_fuzz__open(data, size);
	struct cp_report_profile *rp;
	struct cp_filter *f;
	FILE *fp = cp_fuzz__sink();
	char err[256];

	if (!pf)
		return;
	rp = cp_report_profile__from_file(pf, &ro);
	CP_FUZZ_CHECK(rp != NULL);
	f = cp_filter__new(0, 1.0);
	if (rp->nfns) {
		CP_FUZZ_CHECK(!cp_filter__add(f, 0, rp->fns[0].name, err, sizeof(err)));
		CP_FUZZ_CHECK(!cp_filter__add(f, 1, rp->fns[rp->nfns - 1].name, err, sizeof(err)));
	}
	if (!cp_filter__apply(f, rp)) {
		cp_view_tree(rp, &vo, fp);
		cp_view_flat(rp, &vo, fp);
		vo.function = some_function(rp);
		if (vo.function)
			cp_view_callers(rp, &vo, fp);
	}
	cp_filter__free(f);
	cp_report_profile__free(rp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	views_merged(data, size);
	views_each(data, size);
	return 0;
}
