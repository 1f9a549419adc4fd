/*
 * plist.c - the PLIST formats of the Windows NT profiler (CAP's and the
 * Visual C++ profiler's report tool): `export -f plist` writes the
 * tab-delimited records (PLIST /T), `report --plist` the readable listing.
 * docs/plist-format.md gives the exact layout.
 *
 * Records, one per line, fields separated by tabs, the tag first:
 *   0 version banner        1 method description
 *   2 total outside depth   3 hits functions functions-hit
 *   4 date command-line     5 starting-function
 *   6 module source calls time func+child-time function   (per function)
 *   8 stacks                                               (then per stack:)
 *   9 size calls self-time child-time, and `size` records 10 function
 * Times in milliseconds with six decimals (whole nanoseconds).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "util/text.h"
#include "util/util.h"

#define PLIST_VERSION "1.0"

/* qsort_r order of function indexes by name; arg is the struct cp_report_profile. */
static int by_name(const void *pa, const void *pb, void *arg)
{
	const struct cp_report_profile *rp = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = strcmp(rp->fns[a].name, rp->fns[b].name);

	return c ? c : (a > b) - (a < b);
}

static uint32_t method(const struct cp_report_profile *rp, const char **what)
{
	switch (rp->pf->meta.mode) {
	case CP_MODE_COUNTING:
		*what = "Function counting";
		return 521;
	case CP_MODE_COVERAGE:
		*what = "Function coverage";
		return 524;
	default:
		*what = "Function timing";
		return 522;
	}
}

/*
 * Per function: calls, self, and total counted once per outermost
 * activation (as in the flat profile); *depth: the deepest context.
 */
static struct cp_agg *sums(const struct cp_report_profile *rp, uint32_t *depth)
{
	struct cp_agg *s = xcalloc(rp->nfns + 1, sizeof(*s));
	uint32_t *active = xcalloc(rp->nfns + 1, sizeof(*active));

	*depth = 0;
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		cp_flat_walk(&rp->trees[ti], s, active);
		for (uint32_t i = 1; i < rp->trees[ti].nn; i++)
			if (rp->trees[ti].n[i].depth > *depth)
				*depth = rp->trees[ti].n[i].depth;
	}
	free(active);
	return s;
}

static void ms(FILE *fp, uint64_t ns)
{
	fprintf(fp, "%" PRIu64 ".%06" PRIu64, ns / 1000000, ns % 1000000);
}

static void date_str(const struct cp_report_profile *rp, char *buf, size_t size)
{
	time_t secs = (time_t)(rp->pf->meta.start_realtime_ns / 1000000000u);
	struct tm tm;

	if (!localtime_r(&secs, &tm) || !strftime(buf, size, "%a %b %d %H:%M:%S %Y", &tm))
		snprintf(buf, size, "?");
}

/*
 * The starting function: what `record --start` named, else the top-level
 * function with the most time (calls).
 */
static const char *starting_function(const struct cp_report_profile *rp)
{
	const struct cp_rnode *best = NULL;
	const char *start = cp_profile_file__str(rp->pf, rp->pf->meta.start);

	if (start && *start)
		return start;
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		const struct cp_rtree *t = &rp->trees[ti];

		for (uint32_t k = t->n[0].first_child; k != CP_NONE; k = t->n[k].next)
			if (!best || t->n[k].total_ns > best->total_ns ||
			    (t->n[k].total_ns == best->total_ns && t->n[k].calls > best->calls))
				best = &t->n[k];
	}
	return best ? rp->fns[best->fn].name : "";
}

static void totals(const struct cp_report_profile *rp, uint64_t *total, uint64_t *outside,
		   uint64_t *hits)
{
	*total = *outside = *hits = 0;
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		CP_ADD_SAT(*total, rp->trees[ti].n[0].total_ns);
		*outside += rp->trees[ti].n[0].self_ns;
	}
	*hits = rp->calls;
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "?";
}

int cp_export_plist(struct cp_report_profile *rp, FILE *fp)
{
	uint32_t depth, *order = xmalloc((rp->nfns + 1) * sizeof(*order)), nhit = 0;
	struct cp_agg *s = sums(rp, &depth);
	uint64_t total, outside, hits, nstacks = 0;
	uint32_t *stack = NULL; /* a context's path */
	size_t alloc = 0;
	const char *what;
	uint32_t m = method(rp, &what);
	char date[64];

	totals(rp, &total, &outside, &hits);
	if (!rp->timed)
		total = outside = 0;
	for (uint32_t f = 0; f < rp->nfns; f++)
		if (!(rp->fns[f].flags & CP_RFN_PSEUDO))
			order[nhit++] = f;
	qsort_r(order, nhit, sizeof(*order), by_name, (void *)rp);
	date_str(rp, date, sizeof(date));

	fprintf(fp, "0\t%s\tcallprof call-attributed profile\n", PLIST_VERSION);
	fprintf(fp, "1\t%u\tProfile: %s, sorted by function name\n", m, what);
	fprintf(fp, "2\t");
	ms(fp, total);
	fputc('\t', fp);
	ms(fp, outside);
	fprintf(fp, "\t%u\n", depth);
	fprintf(fp, "3\t%" PRIu64 "\t%u\t%u\n", rp->pf->meta.mode == CP_MODE_COVERAGE ? nhit : hits,
		nhit, nhit);
	fprintf(fp, "4\t%s\t", date);
	for (uint32_t i = 0; i < rp->pf->argc; i++)
		fprintf(fp, "%s%s", i ? " " : "", cp_visible_arg(rp->pf->argv[i]));
	fprintf(fp, "\n5\t%s\n", cp_visible(starting_function(rp)));
	for (uint32_t k = 0; k < nhit; k++) {
		uint32_t f = order[k];
		struct cp_fn_where w;

		cp_report_profile__fn_where(rp, f, &w);
		fprintf(fp, "6\t%s\t%s\t%" PRIu64 "\t", cp_visible(base_name(w.module)),
			cp_visible(w.file ? w.file : "?"),
			rp->pf->meta.mode == CP_MODE_COVERAGE ? 1 : s[f].calls);
		ms(fp, rp->timed ? s[f].self_ns : 0);
		fputc('\t', fp);
		ms(fp, rp->timed ? s[f].total_ns : 0);
		fprintf(fp, "\t%s\n", cp_visible(rp->fns[f].name));
	}
	/* Function-attribution stacks: one per calling context, outermost first. */
	for (uint32_t ti = 0; ti < rp->ntrees; ti++)
		nstacks += rp->trees[ti].nn - 1;
	fprintf(fp, "8\t%" PRIu64 "\n", nstacks);
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		const struct cp_rtree *t = &rp->trees[ti];

		for (uint32_t i = 1; i < t->nn; i++) {
			const struct cp_rnode *n = &t->n[i];
			uint32_t d = cp_rtree__path(t, i, &stack, &alloc);

			fprintf(fp, "9\t%u\t%" PRIu64 "\t", d, n->calls);
			ms(fp, rp->timed ? n->self_ns : 0);
			fputc('\t', fp);
			ms(fp, rp->timed ? n->total_ns - n->self_ns : 0);
			fputc('\n', fp);
			while (d--)
				fprintf(fp, "10\t%s\n", cp_visible(cp_rnode__name(rp, &t->n[stack[d]])));
		}
	}
	free(stack);
	free(order);
	free(s);
	return ferror(fp) ? cp_error("cannot write the PLIST output") : 0;
}

/* The readable listing: PLIST's default report, by function. */
int cp_view_plist(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp)
{
	uint32_t depth, *order = xmalloc((rp->nfns + 1) * sizeof(*order)), n = 0;
	struct cp_agg *s = sums(rp, &depth);
	uint64_t total, outside, hits;
	const char *what;
	char date[64];

	method(rp, &what);
	totals(rp, &total, &outside, &hits);
	date_str(rp, date, sizeof(date));
	for (uint32_t f = 0; f < rp->nfns; f++)
		if (!(rp->fns[f].flags & CP_RFN_PSEUDO))
			order[n++] = f;
	qsort_r(order, n, sizeof(*order), by_name, (void *)rp);

	fprintf(fp, "Profile: %s, sorted by function name\nDate:    %s\n\n", what, date);
	fprintf(fp, "Program Statistics\n------------------\n");
	fprintf(fp, "    Command line: ");
	for (uint32_t i = 0; i < rp->pf->argc; i++)
		fprintf(fp, "%s%s", i ? " " : "", cp_visible_arg(rp->pf->argv[i]));
	fputc('\n', fp);
	if (rp->cpu_sampled) {
		struct cp_sample_tally sh;

		cp_report_profile__sample_tally(rp, &sh);
		fprintf(fp, "    Time source: CPU time sampled at %u Hz, %" PRIu64 " samples "
			    "(hit counts exact)\n", rp->pf->meta.sample_hz, sh.program);
	}
	if (rp->timed) {
		fprintf(fp, "    Total time: ");
		ms(fp, total);
		fprintf(fp, " millisecond\n    Time outside of functions: ");
		ms(fp, outside);
		fprintf(fp, " millisecond\n");
	}
	fprintf(fp, "    Call depth: %u\n    Total functions: %u\n    Total hits: %" PRIu64 "\n",
		depth, n, hits);
	fprintf(fp, "    Starting function: %s\n\n", cp_visible(starting_function(rp)));
	if (rp->timed)
		fprintf(fp, "%14s %6s %14s %6s %12s  %s\n%s\n", "Func Time (ms)", "%",
			"Func+Child (ms)", "%", "Hit Count", "Function",
			"---------------------------------------------------------------------------");
	else
		fprintf(fp, "%12s  %s\n%s\n", "Hit Count", "Function",
			"------------------------------");
	for (uint32_t k = 0; k < n; k++) {
		uint32_t f = order[k];

		if (rp->timed) {
			fprintf(fp, "%10" PRIu64 ".%03" PRIu64 " %6.1f %11" PRIu64 ".%03" PRIu64
				    " %6.1f %12" PRIu64 "  %s\n",
				s[f].self_ns / 1000000, s[f].self_ns / 1000 % 1000,
				total ? 100.0 * (double)s[f].self_ns / (double)total : 0.0,
				s[f].total_ns / 1000000, s[f].total_ns / 1000 % 1000,
				total ? 100.0 * (double)s[f].total_ns / (double)total : 0.0,
				s[f].calls, cp_visible(rp->fns[f].name));
		} else {
			fprintf(fp, "%12" PRIu64 "  %s\n",
				rp->pf->meta.mode == CP_MODE_COVERAGE ? 1 : s[f].calls,
				cp_visible(rp->fns[f].name));
		}
	}
	(void)o;
	free(order);
	free(s);
	return 0;
}
