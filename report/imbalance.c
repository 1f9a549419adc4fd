/*
 * imbalance.c - `callprof report --imbalance`: the call paths of a merged
 * profile (the ranks of a job, runs on many machines) ranked by the time
 * the other inputs lost waiting for the slowest one.
 *
 * A parallel job moves at the pace of its slowest rank: where rank 3 spends
 * twice the others' time in one context, the others wait for it at the
 * next synchronisation.  Per context the loss is the sum over the inputs
 * of (max - value) = n * max - sum, an input that never entered the
 * context counting 0.  The value is self CPU time (the exclusive part of
 * the default weight, cp_report_profile__weight): work the input did
 * itself in that context, not time it spent blocked, which is the waiting
 * the imbalance causes, nor its callees' work, which their own contexts
 * show.  Counting profiles (no times) rank by calls.  Everything comes
 * from the SPREAD records' distribution (struct cp_rspread, dist): exact
 * sums and sums of squares, the input holding each extreme.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

int cp_rspread__imbalance(const struct cp_report_profile *rp, const struct cp_rnode *n,
			  const struct cp_rspread *s, struct cp_imbalance *im)
{
	uint32_t k = rp->ninputs;
	unsigned __int128 loss, sumsq;
	long double mean, var;

	memset(im, 0, sizeof(*im));
	if (!s || !s->inputs || !s->dist || !k)
		return 0;
	if (rp->timed) {
		im->sum = s->sum_cpu_ns;
		im->max = s->max_cpu_ns;
		im->max_in = s->max_cpu_in;
		im->min = cp_rspread_min(s, k, s->min_cpu_ns);
		im->min_in = cp_rspread_min_input(s, k, s->min_cpu_ns, s->min_cpu_in);
		sumsq = s->sumsq_cpu;
	} else {
		im->sum = n->calls;
		im->max = s->max_calls;
		im->max_in = s->max_calls_in;
		im->min = cp_rspread_min(s, k, s->min_calls);
		im->min_in = cp_rspread_min_input(s, k, s->min_calls, s->min_calls_in);
		sumsq = s->sumsq_calls;
	}
	loss = (unsigned __int128)k * im->max;
	loss = loss > im->sum ? loss - im->sum : 0;
	im->imbalance = loss > UINT64_MAX ? UINT64_MAX : (uint64_t)loss;
	mean = (long double)im->sum / k;
	var = (long double)sumsq / k - mean * mean;
	im->mean = (double)mean;
	im->stddev = var > 0 ? (double)sqrtl(var) : 0;
	return 1;
}

void cp_input_name(const struct cp_profile_file *pf, uint32_t i, char *buf, size_t size)
{
	const char *path;

	if (i >= pf->ninputs) {
		snprintf(buf, size, "-");
		return;
	}
	if (pf->inputs[i].rank != CP_NO_RANK) {
		snprintf(buf, size, "rank %u", pf->inputs[i].rank);
		return;
	}
	path = cp_profile_file__str(pf, pf->inputs[i].path);
	snprintf(buf, size, "input %u (%s)", i, path ? cp_visible(path) : "?");
}

static int by_imbalance(const void *pa, const void *pb)
{
	const struct cp_imbalance_row *a = pa, *b = pb;

	if (a->im.imbalance != b->im.imbalance)
		return a->im.imbalance > b->im.imbalance ? -1 : 1;
	return (a->node > b->node) - (a->node < b->node);
}

int cp_imbalance_available(const struct cp_report_profile *rp)
{
	return rp->ninputs >= 2 && rp->ntrees == 1 && rp->trees[0].spread;
}

void cp_imbalance_rank(const struct cp_report_profile *rp, struct cp_imbalance_row **rowsp,
		       uint32_t *nrowsp, uint32_t *unknownp, uint64_t *wholep)
{
	const struct cp_rtree *t = &rp->trees[0];
	struct cp_imbalance_row *rows = xcalloc(t->nn + 1, sizeof(*rows));
	uint32_t nrows = 0, unknown = 0;
	uint64_t whole = 0;

	for (uint32_t i = 1; i < t->nn && i < t->nspread; i++) {
		if (!t->spread[i].inputs)
			continue;
		if (!cp_rspread__imbalance(rp, &t->n[i], &t->spread[i], &rows[nrows].im)) {
			unknown++;
			continue;
		}
		CP_ADD_SAT(whole, rows[nrows].im.sum);
		rows[nrows++].node = i;
	}
	qsort(rows, nrows, sizeof(*rows), by_imbalance);
	*rowsp = rows;
	*nrowsp = nrows;
	*unknownp = unknown;
	*wholep = whole;
}

/* A time, or calls for a profile without times. */
static void fmt_value(const struct cp_report_profile *rp, char *buf, size_t size, double v)
{
	if (rp->timed)
		cp_fmt_ns(buf, size, cp_ns_from_double(v + 0.5));
	else
		snprintf(buf, size, "%.1f", v);
}

/* "main > solve > f", names shortened to width (0: never). */
static void path_str(const struct cp_report_profile *rp, const struct cp_rtree *t, uint32_t i,
		     int width, struct strbuf *sb, uint32_t **path, size_t *alloc)
{
	uint32_t d = cp_rtree__path(t, i, path, alloc);
	char buf[256];

	strbuf_reset(sb);
	while (d--) {
		const char *name = cp_rnode__name(rp, &t->n[(*path)[d]]);

		strbuf_addf(sb, "%s%s", sb->len ? " > " : "",
			    cp_visible(cp_short_name(name, width, buf, sizeof(buf))));
	}
}

/* Its share of all the inputs' time (calls) in the tree: the imb% column. */
static double percent(const struct cp_imbalance *im, uint64_t whole)
{
	return whole ? 100.0 * (double)im->imbalance / (double)whole : 0;
}

/* Rows below --min-percent are left out. */
static int shown(const struct cp_imbalance *im, uint64_t whole, double min_percent)
{
	return min_percent <= 0 || percent(im, whole) >= min_percent;
}

int cp_view_imbalance(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp)
{
	const struct cp_rtree *t;
	struct cp_imbalance_row *rows;
	uint32_t nrows = 0, unknown = 0, *path = NULL;
	size_t alloc = 0;
	uint64_t whole = 0;
	struct strbuf sb = STRBUF_INIT;
	char v[5][32], maxin[320], minin[320];
	int wmax = 6, wmin = 6;
	const char *unit = rp->timed ? "self CPU time" : "calls";

	if (!cp_imbalance_available(rp))
		return cp_error("--imbalance needs a merged profile of several runs or ranks: '%s' "
				"is not one (callprof merge makes one)", cp_visible(rp->pf->path));
	t = &rp->trees[0];
	cp_imbalance_rank(rp, &rows, &nrows, &unknown, &whole);
	if (!nrows && unknown) {
		free(rows);
		return cp_error("profile '%s' holds no per-input distribution (merged by a callprof "
				"before format version 9): merge its inputs again",
				cp_visible(rp->pf->path));
	}
	cp_report_banner(rp, "imbalance", fp);
	fprintf(fp, "# imbalance: what the other inputs lost waiting for the slowest, per call "
		    "path: the sum over the %u inputs of (max - value), on %s%s\n", rp->ninputs,
		unit, rp->timed ? " (the work each input did itself in the context)" : "");
	if (unknown)
		fprintf(fp, "# %u call path%s without the per-input distribution left out (folded by "
			    "a filter, or merged by an older callprof)\n", unknown,
			unknown == 1 ? "" : "s");
	if (o->min_percent > 0)
		fprintf(fp, "# call paths below %g%% of the inputs' %s are hidden (--min-percent=0 "
			    "shows all)\n", o->min_percent, unit);
	/* The holders' columns as wide as their widest name shown. */
	for (uint32_t r = 0; r < nrows; r++) {
		if (!shown(&rows[r].im, whole, o->min_percent))
			continue;
		cp_input_name(rp->pf, rows[r].im.max_in, maxin, sizeof(maxin));
		cp_input_name(rp->pf, rows[r].im.min_in, minin, sizeof(minin));
		if ((int)strlen(maxin) > wmax)
			wmax = (int)strlen(maxin);
		if ((int)strlen(minin) > wmin)
			wmin = (int)strlen(minin);
	}
	fprintf(fp, "%11s %7s %11s %11s %11s %11s %11s  %-*s  %-*s  %s\n", "imbalance", "imb%",
		"mean", "stddev", "min", "max", "calls", wmax, "max-at", wmin, "min-at", "call path");
	for (uint32_t r = 0; r < nrows; r++) {
		const struct cp_imbalance *im = &rows[r].im;

		if (!shown(im, whole, o->min_percent))
			continue;
		fmt_value(rp, v[0], sizeof(v[0]), (double)im->imbalance);
		fmt_value(rp, v[1], sizeof(v[1]), im->mean);
		fmt_value(rp, v[2], sizeof(v[2]), im->stddev);
		fmt_value(rp, v[3], sizeof(v[3]), (double)im->min);
		fmt_value(rp, v[4], sizeof(v[4]), (double)im->max);
		if (!rp->timed) {
			snprintf(v[0], sizeof(v[0]), "%" PRIu64, im->imbalance);
			snprintf(v[3], sizeof(v[3]), "%" PRIu64, im->min);
			snprintf(v[4], sizeof(v[4]), "%" PRIu64, im->max);
		}
		cp_input_name(rp->pf, im->max_in, maxin, sizeof(maxin));
		cp_input_name(rp->pf, im->min_in, minin, sizeof(minin));
		path_str(rp, t, rows[r].node, o->name_width, &sb, &path, &alloc);
		fprintf(fp, "%11s %7.2f %11s %11s %11s %11s %11" PRIu64 "  %-*s  %-*s  %s\n", v[0],
			percent(im, whole), v[1], v[2], v[3], v[4], t->n[rows[r].node].calls, wmax,
			maxin, wmin, minin, sb.buf);
	}
	strbuf_release(&sb);
	free(path);
	free(rows);
	return 0;
}
