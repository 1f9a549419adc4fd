/*
 * diff.c - compare two profiles call path by call path (see diff.h).
 *
 * Both merged trees are folded into one table of paths.  A path is the
 * pair (the path one frame shorter, a function name), so it is found by
 * hashing two numbers, never by building or comparing strings: matching is
 * linear in the trees' sizes.  Names are interned once per function of
 * each profile.  Whole path strings are made only for the rows printed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "report/diff.h"
#include "report/internal.h"
#include "report/report.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

struct dpath {
	uint32_t parent;      /* the path one frame shorter; CP_NONE at top level */
	uint32_t name;	      /* index into cp_diff.names */
	uint32_t first_child; /* first longer path by one frame, CP_NONE if none */
	uint32_t next;	      /* next sibling, CP_NONE after the last */
	uint32_t rank;	      /* place in name order: parents first, siblings by name */
	uint32_t run;	      /* frames of this name ending here (recursion), 1 or more */
	uint32_t up;	      /* the path before that run of frames, CP_NONE if none */
	uint32_t in;	      /* bit s set: the path is in profile s (0 = A, 1 = B) */
	uint64_t calls[2];    /* per profile, all threads added up */
	uint64_t open_at_start[2]; /* calls open at attach, not in calls */
	uint64_t self_ns[2];
	uint64_t total_ns[2];
	/* Off-CPU time (where measured): inclusive and exclusive. */
	uint64_t wait_ns[2], inactive_ns[2], self_wait_ns[2], self_inactive_ns[2];
	/* Sampled CPU time (cpu-mode profiles): the samples total and self rest on. */
	uint64_t samples[2];
	uint64_t self_samples[2];
	uint32_t counted;     /* bit s set: a call path in profile s (not only sampled
			       * code without hooks, cp_rnode.uninstrumented) */
	/* Compensated profiles: the hook overhead subtracted from total and self. */
	uint64_t overhead_ns[2];
	uint64_t self_overhead_ns[2];
};

struct cp_diff {
	const struct cp_report_profile *rp[2]; /* A and B */
	struct dpath *p;		       /* every path of A or B */
	uint32_t np, palloc;
	struct cp_u64map paths;		       /* parent << 32 | name -> index into p */
	struct cp_strtab names;		       /* distinct function names */
	uint32_t top;			       /* first top-level path */
	int timed;			       /* both profiles have times */
	int cpu[2];			       /* profile s's CPU time is sampled (cpu mode) */
	enum cp_metric weight;		       /* inclusive: what orders the table and sets
						* the floor (cp_report_profile__weight) */
	double min_percent;		       /* the floor as a share of the larger root */
	uint64_t floor_ns;		       /* smaller time changes count as none */
	uint64_t root_ns[2];		       /* the roots' totals: all threads' lifetimes */
	uint64_t root_weight[2];	       /* the roots' weights */
	uint32_t count[4];		       /* call paths by enum cp_diff_status */
	uint32_t scount[4];		       /* sampled-only paths (sampled_only) by status */
};

/*
 * Whether q is no call path but sampled code without hooks under one (a
 * library function, [kernel]: cpu mode's 0-call contexts): no calls on
 * either side, some samples.  Whether such a context exists at all is up
 * to the sampling, so it is no new or gone call path; only its time
 * compares.
 */
static int sampled_only(const struct dpath *q)
{
	return !q->counted && (q->samples[0] || q->samples[1]);
}

/* The path (parent, name), added (with no calls, in neither profile) if new. */
static uint32_t path_get(struct cp_diff *d, uint32_t parent, uint32_t name)
{
	uint32_t k = cp_u64map__get_or_add(&d->paths, (uint64_t)parent << 32 | name, d->np);
	struct dpath *q;

	if (k != d->np)
		return k;
	ALLOC_GROW(d->p, d->np + 1, d->palloc);
	q = &d->p[d->np];
	memset(q, 0, sizeof(*q));
	q->parent = parent;
	q->name = name;
	q->first_child = CP_NONE;
	if (parent == CP_NONE) {
		q->next = d->top;
		d->top = d->np;
	} else {
		q->next = d->p[parent].first_child;
		d->p[parent].first_child = d->np;
	}
	return d->np++;
}

/*
 * Add profile s's merged tree.  Children come after their parents in it,
 * so one forward pass with a map from tree nodes to paths does it.  Nodes
 * of equal name under one parent (two functions of one name) add up.
 */
static void add_profile(struct cp_diff *d, int s)
{
	const struct cp_report_profile *rp = d->rp[s];
	const struct cp_rtree *t = &rp->trees[0];
	uint32_t *fname = xmalloc((rp->nfns ? rp->nfns : 1) * sizeof(*fname));
	uint32_t *map = xmalloc(t->nn * sizeof(*map));

	if (rp->ntrees != 1 || rp->threads != CP_THREADS_MERGED)
		BUG("diff wants profiles loaded with threads merged");
	for (uint32_t f = 0; f < rp->nfns; f++)
		fname[f] = cp_strtab__add(&d->names, rp->fns[f].name ? rp->fns[f].name : "?");
	map[0] = CP_NONE;
	for (uint32_t i = 1; i < t->nn; i++) {
		const struct cp_rnode *n = &t->n[i];
		uint32_t k;
		struct dpath *q;

		if (!d->timed && n->uninstrumented) {
			/* Sampled code without hooks: nothing to compare in calls. */
			map[i] = map[n->parent];
			continue;
		}
		k = path_get(d, map[n->parent], fname[n->fn]);
		q = &d->p[k];

		q->in |= 1u << s;
		if (!n->uninstrumented)
			q->counted |= 1u << s;
		CP_ADD_SAT(q->calls[s], n->calls);
		CP_ADD_SAT(q->open_at_start[s], n->open_at_start);
		CP_ADD_SAT(q->self_ns[s], n->self_ns);
		CP_ADD_SAT(q->total_ns[s], n->total_ns);
		CP_ADD_SAT(q->wait_ns[s], n->wait_ns);
		CP_ADD_SAT(q->inactive_ns[s], n->inactive_ns);
		CP_ADD_SAT(q->self_wait_ns[s], n->self_wait_ns);
		CP_ADD_SAT(q->self_inactive_ns[s], n->self_inactive_ns);
		CP_ADD_SAT(q->samples[s], n->samples);
		CP_ADD_SAT(q->self_samples[s], n->self_samples);
		CP_ADD_SAT(q->overhead_ns[s], n->overhead_ns);
		CP_ADD_SAT(q->self_overhead_ns[s], n->self_overhead_ns);
		map[i] = k;
	}
	d->root_ns[s] = t->n[0].total_ns;
	d->root_weight[s] = cp_rnode__metric(&t->n[0], d->weight);
	free(map);
	free(fname);
}

/* qsort_r order of path indexes of the struct cp_diff arg by name. */
static int name_cmp(const void *pa, const void *pb, void *arg)
{
	const struct cp_diff *d = arg;
	const struct dpath *a = &d->p[*(const uint32_t *)pa];
	const struct dpath *b = &d->p[*(const uint32_t *)pb];

	return strcmp(d->names.s[a->name], d->names.s[b->name]);
}

/* Put the list starting at *head in name order; kids is scratch space. */
static void sort_siblings(struct cp_diff *d, uint32_t *head, uint32_t **kids, size_t *alloc)
{
	uint32_t nk = 0;

	for (uint32_t c = *head; c != CP_NONE; c = d->p[c].next) {
		ALLOC_GROW(*kids, nk + 1, *alloc);
		(*kids)[nk++] = c;
	}
	if (nk < 2)
		return;
	qsort_r(*kids, nk, sizeof(**kids), name_cmp, d);
	*head = (*kids)[0];
	for (uint32_t k = 0; k + 1 < nk; k++)
		d->p[(*kids)[k]].next = (*kids)[k + 1];
	d->p[(*kids)[nk - 1]].next = CP_NONE;
}

/*
 * Number the paths in name order (a path before the longer ones, siblings
 * by name): the last tie-break of the table, so that equal changes list in
 * an order that does not depend on addresses or on which profile came
 * first.  Depth first without recursion: paths can be a million deep.
 */
static void rank_paths(struct cp_diff *d)
{
	uint32_t *kids = NULL, r = 0, c;
	size_t alloc = 0;

	sort_siblings(d, &d->top, &kids, &alloc);
	for (uint32_t i = 0; i < d->np; i++)
		sort_siblings(d, &d->p[i].first_child, &kids, &alloc);
	free(kids);
	for (c = d->top; c != CP_NONE;) {
		d->p[c].rank = r++;
		if (d->p[c].first_child != CP_NONE) {
			c = d->p[c].first_child;
			continue;
		}
		while (c != CP_NONE && d->p[c].next == CP_NONE)
			c = d->p[c].parent;
		if (c != CP_NONE)
			c = d->p[c].next;
	}
}

static uint64_t absdiff(const uint64_t v[2])
{
	return v[0] > v[1] ? v[0] - v[1] : v[1] - v[0];
}

/* q's values of metric m in A and B, into v. */
static const uint64_t *values(const struct dpath *q, enum cp_metric m, uint64_t v[2])
{
	for (int s = 0; s < 2; s++) {
		const struct cp_figures f = {
			.calls = q->calls[s], .total_ns = q->total_ns[s], .self_ns = q->self_ns[s],
			.wait_ns = q->wait_ns[s], .inactive_ns = q->inactive_ns[s],
			.self_wait_ns = q->self_wait_ns[s], .self_inactive_ns = q->self_inactive_ns[s],
			.samples = q->samples[s], .self_samples = q->self_samples[s],
		};

		v[s] = cp_figures__metric(&f, m);
	}
	return v;
}

static int time_changed(const struct cp_diff *d, const uint64_t v[2])
{
	uint64_t delta = absdiff(v);

	return delta && delta >= d->floor_ns;
}

static enum cp_diff_status status_of(const struct cp_diff *d, const struct dpath *q)
{
	if (q->in == 2)
		return CP_DIFF_NEW;
	if (q->in == 1)
		return CP_DIFF_GONE;
	if (q->calls[0] != q->calls[1])
		return CP_DIFF_CHANGED;
	if (d->timed) {
		uint64_t in[2], ex[2];

		if (time_changed(d, values(q, cp_metric__exclusive(d->weight), ex)) ||
		    time_changed(d, values(q, d->weight, in)))
			return CP_DIFF_CHANGED;
	}
	return CP_DIFF_SAME;
}

struct cp_diff *cp_diff__new(const struct cp_report_profile *a, const struct cp_report_profile *b,
			     double min_percent)
{
	struct cp_diff *d = xcalloc(1, sizeof(*d));
	uint64_t larger;

	d->rp[0] = a;
	d->rp[1] = b;
	d->top = CP_NONE;
	cp_u64map__init(&d->paths, 1024);
	d->timed = a->timed && b->timed;
	d->cpu[0] = a->cpu_sampled;
	d->cpu[1] = b->cpu_sampled;
	/* CPU time where both have it: preempted time is no change of the program's. */
	d->weight = cp_report_profile__pair_weight(a, b);
	add_profile(d, 0);
	add_profile(d, 1);
	rank_paths(d);
	/* Parents come first in p[]: their runs are known. */
	for (uint32_t k = 0; k < d->np; k++) {
		struct dpath *q = &d->p[k];
		const struct dpath *parent = q->parent == CP_NONE ? NULL : &d->p[q->parent];

		q->run = parent && parent->name == q->name ? parent->run + 1 : 1;
		q->up = parent && parent->name == q->name ? parent->up : q->parent;
	}
	larger = d->root_weight[0] > d->root_weight[1] ? d->root_weight[0] : d->root_weight[1];
	d->min_percent = min_percent;
	d->floor_ns = (uint64_t)(min_percent / 100.0 * (double)larger);
	for (uint32_t k = 0; k < d->np; k++) {
		if (sampled_only(&d->p[k]))
			d->scount[status_of(d, &d->p[k])]++;
		else
			d->count[status_of(d, &d->p[k])]++;
	}
	return d;
}

void cp_diff__free(struct cp_diff *d)
{
	if (!d)
		return;
	free(d->p);
	cp_u64map__release(&d->paths);
	cp_strtab__release(&d->names);
	free(d);
}

int cp_diff__timed(const struct cp_diff *d)
{
	return d->timed;
}

int cp_diff__weight(const struct cp_diff *d)
{
	return d->weight;
}

/*
 * The order of the table: the largest change first, by |delta| of the
 * weight's exclusive part (self, self-cpu) when timed, then by |delta
 * calls|, then in name order.
 */
static int impact_cmp(const struct cp_diff *d, const struct dpath *a, const struct dpath *b)
{
	uint64_t va, vb, v[2];

	if (d->timed) {
		va = absdiff(values(a, cp_metric__exclusive(d->weight), v));
		vb = absdiff(values(b, cp_metric__exclusive(d->weight), v));
		if (va != vb)
			return va > vb ? -1 : 1;
	}
	va = absdiff(a->calls);
	vb = absdiff(b->calls);
	if (va != vb)
		return va > vb ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* qsort_r order of path indexes of the struct cp_diff arg by impact. */
static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct cp_diff *d = arg;

	return impact_cmp(d, &d->p[*(const uint32_t *)pa], &d->p[*(const uint32_t *)pb]);
}

/* ---- printing ---- */

/*
 * A column: a metric's value in A or B, its change or its ratio
 * ("self-cpu-delta"), the status or the path.
 */
enum dpart { P_A, P_B, P_DELTA, P_RATIO, P_STATUS, P_PATH };

static const char *const part_names[] = { "a", "b", "delta", "ratio" };

struct dcol {
	enum dpart part;
	enum cp_metric m; /* P_A to P_RATIO */
};

#define MAX_DCOLS (4 * CP_METRIC_NR + 2)

/*
 * The default columns: the weight's change first (delta and ratio), then
 * its two values, the calls' change, the status and the path, so that the
 * path - whose last function is what changed - starts before column 100
 * rather than at 170 (a wider table put it past a screen's width).  The
 * other columns are a --fields away.
 */
#define TIMED_FIELDS "self-delta,self-ratio,self-a,self-b,calls-delta,total-delta,status,path"
#define CALLS_FIELDS "calls-a,calls-b,calls-delta,status,path"
/* A cpu-mode side: its times rest on samples, marked '?' where few. */
#define CPU_FIELDS TIMED_FIELDS
/* Weighed by CPU time (cp_diff__weight). */
#define CPU_WEIGHT_FIELDS "self-cpu-delta,self-cpu-ratio,self-cpu-a,self-cpu-b,calls-delta,cpu-delta,status,path"
#define CPU_WEIGHT_SAMPLED_FIELDS CPU_WEIGHT_FIELDS

struct dcols {
	struct dcol c[MAX_DCOLS]; /* columns in order, the path last */
	int n;
};

/* Column c's title ("self-cpu-delta"), into buf. */
static const char *col_title(const struct dcol *c, char *buf, size_t size)
{
	if (c->part == P_STATUS)
		return "status";
	if (c->part == P_PATH)
		return "path";
	snprintf(buf, size, "%s-%s", cp_metric__name(c->m), part_names[c->part]);
	return buf;
}

/* Its width: negative for left-aligned. */
static int col_width(const struct dcol *c)
{
	char buf[64];
	int len = (int)strlen(col_title(c, buf, sizeof(buf)));

	if (c->part == P_STATUS)
		return -7;
	return len > 9 ? len : c->m == CP_METRIC_CALLS ? 10 : 9;
}

/*
 * One --fields name into the struct dcol *col (zeroed): 0, 1 for the path
 * (always last), or -1.
 */
static int parse_col(const char *tok, void *col, void *arg)
{
	struct dcol *c = col;
	const char *dash = strrchr(tok, '-');
	char name[64];

	if (!strcmp(tok, "status") || !strcmp(tok, "path")) {
		c->part = tok[0] == 's' ? P_STATUS : P_PATH;
		return c->part == P_PATH;
	}
	if (!dash || (size_t)(dash - tok) >= sizeof(name))
		return -1;
	for (c->part = P_A; c->part <= P_RATIO; c->part++)
		if (!strcmp(dash + 1, part_names[c->part]))
			break;
	if (c->part > P_RATIO)
		return -1;
	memcpy(name, tok, (size_t)(dash - tok));
	name[dash - tok] = '\0';
	if (cp_metric__lookup(name) < 0)
		return -1;
	c->m = (enum cp_metric)cp_metric__lookup(name);
	return 0;
}

static void col_known(struct strbuf *sb, void *arg)
{
	char all[256];

	cp_metric__list(NULL, all, sizeof(all));
	strbuf_addf(sb, "METRIC-a, METRIC-b, METRIC-delta, METRIC-ratio, status, path; "
			"METRIC one of %s", all);
}

static int parse_fields(struct dcols *f, const char *spec)
{
	struct cp_columns c = { .cols = f->c, .size = sizeof(f->c[0]), .max = MAX_DCOLS - 1,
				.lookup = parse_col, .known = col_known };

	f->n = 0;
	if (cp_columns__parse(&c, spec))
		return -1;
	f->n = c.n;
	f->c[f->n++] = (struct dcol){ .part = P_PATH }; /* always, last */
	return 0;
}

int cp_diff_check_fields(const char *fields)
{
	struct dcols f;

	return fields ? parse_fields(&f, fields) : 0;
}

static const char *status_name(enum cp_diff_status s)
{
	static const char *const names[] = { "same", "changed", "new", "gone" };

	return names[s];
}

/* "+12", "-3" or "0". */
static void fmt_delta_calls(char *buf, size_t size, const uint64_t v[2])
{
	if (v[1] == v[0])
		snprintf(buf, size, "0");
	else
		snprintf(buf, size, "%c%" PRIu64, v[1] > v[0] ? '+' : '-', absdiff(v));
}

/* "+1.20ms", "-300ns" or "0ns". */
static void fmt_delta_ns(char *buf, size_t size, const uint64_t v[2])
{
	char dur[32];

	cp_fmt_ns(dur, sizeof(dur), absdiff(v));
	snprintf(buf, size, "%s%s", v[1] > v[0] ? "+" : v[1] < v[0] ? "-" : "", dur);
}

/* B/A as "3.00x"; "new" or "gone" for a path in one profile only; "-" if A is 0. */
static void fmt_ratio(char *buf, size_t size, const struct dpath *q, const uint64_t v[2])
{
	if (q->in == 2)
		snprintf(buf, size, "new");
	else if (q->in == 1)
		snprintf(buf, size, "gone");
	else if (!v[0])
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.2fx", (double)v[1] / (double)v[0]);
}

/*
 * The path's names from its top-level function down, joined by " > ".  A
 * run of N > 1 frames of one function (recursion) is written NAME^N, and
 * is stepped over in one go: a path a million calls deep is one short
 * line, made in time proportional to its runs, not its depth.
 */
static void path_str(const struct cp_diff *d, uint32_t k, struct strbuf *sb, uint32_t **stack,
		     size_t *alloc)
{
	uint32_t nruns = 0;

	for (uint32_t c = k; c != CP_NONE; c = d->p[c].up) {
		ALLOC_GROW(*stack, nruns + 1, *alloc);
		(*stack)[nruns++] = c;
	}
	strbuf_reset(sb);
	while (nruns) {
		const struct dpath *q = &d->p[(*stack)[--nruns]];

		if (sb->len)
			strbuf_addstr(sb, " > ");
		strbuf_add_visible(sb, d->names.s[q->name], strlen(d->names.s[q->name]));
		if (q->run > 1)
			strbuf_addf(sb, "^%u", q->run);
	}
}

static void print_title(const struct dcols *f, FILE *fp)
{
	char buf[64];

	for (int k = 0; k < f->n; k++) {
		const struct dcol *c = &f->c[k];

		if (c->part == P_PATH)
			fprintf(fp, "path\n");
		else
			fprintf(fp, "%*s  ", col_width(c), col_title(c, buf, sizeof(buf)));
	}
}

/*
 * Whether side s's value of m (a time) rests on fewer than CP_FEW_SAMPLES
 * samples of a cpu-mode profile: it is marked '?', as in the report (none
 * at all is a time below a period, not a guess).  Wait and inactive time
 * are measured, not sampled.
 */
static int few_samples(const struct cp_diff *d, const struct dpath *q, int s, enum cp_metric m)
{
	uint64_t n = m == CP_METRIC_SELF || m == CP_METRIC_SELF_CPU ? q->self_samples[s] :
		     m == CP_METRIC_TOTAL || m == CP_METRIC_CPU	    ? q->samples[s] :
									      CP_FEW_SAMPLES;

	return d->cpu[s] && n && n < CP_FEW_SAMPLES;
}

/* Whether side s has metric m (times only where both sides have them). */
static int side_has(const struct cp_diff *d, int s, enum cp_metric m)
{
	return cp_metric__available(d->rp[s], m) && (!cp_metric__is_time(m) || d->timed);
}

/*
 * Whether side s's time (self or total of q) is mostly hook overhead:
 * compensation took over half of it, and what is left is the least
 * trustworthy figure of the profile (marked '~', as in the report).
 */
static int mostly_overhead(const struct cp_diff *d, const struct dpath *q, int s, int self)
{
	return d->rp[s]->compensated && !d->cpu[s] &&
	       (self ? cp_mostly_overhead(q->self_ns[s], q->self_overhead_ns[s]) :
		       cp_mostly_overhead(q->total_ns[s], q->overhead_ns[s]));
}

/* Whether m's value carries the compensation of self (1) or total (0) time, or none (-1). */
static int overhead_of(enum cp_metric m)
{
	return m == CP_METRIC_SELF || m == CP_METRIC_SELF_CPU ? 1 :
	       m == CP_METRIC_TOTAL || m == CP_METRIC_CPU     ? 0 :
								-1;
}

/* Side s's value of m: its mark, '?' (too few samples), '~' (mostly overhead), or none. */
static const char *time_mark(const struct cp_diff *d, const struct dpath *q, int s, enum cp_metric m)
{
	if (!cp_metric__is_time(m))
		return "";
	if (few_samples(d, q, s, m))
		return "?";
	return overhead_of(m) >= 0 && mostly_overhead(d, q, s, overhead_of(m)) ? "~" : "";
}

/* Whether q's time (self or total) is mostly overhead on either side: the row is marked. */
static int marked_overhead(const struct cp_diff *d, const struct dpath *q)
{
	for (int s = 0; s < 2; s++)
		if (mostly_overhead(d, q, s, 1) || mostly_overhead(d, q, s, 0))
			return 1;
	return 0;
}

static void print_row(const struct cp_diff *d, const struct dcols *f, uint32_t k, const char *path,
		      FILE *fp)
{
	const struct dpath *q = &d->p[k];
	char buf[64];
	uint64_t v[2];

	for (int i = 0; i < f->n; i++) {
		const struct dcol *c = &f->c[i];
		int w = col_width(c);

		if (c->part == P_PATH) {
			fprintf(fp, "%s", path);
			/* Calls open at attach (not in calls), per side where there are any. */
			if (q->open_at_start[0] || q->open_at_start[1])
				fprintf(fp, " (open at attach: A %" PRIu64 ", B %" PRIu64 ")",
					q->open_at_start[0], q->open_at_start[1]);
			fprintf(fp, "\n");
			continue;
		}
		if (c->part == P_STATUS) {
			fprintf(fp, "%*s  ", w, status_name(status_of(d, q)));
			continue;
		}
		if (c->part == P_A || c->part == P_B ? !side_has(d, c->part == P_B, c->m) :
		    !side_has(d, 0, c->m) || !side_has(d, 1, c->m)) {
			fprintf(fp, "%*s  ", w, "-");
			continue;
		}
		/* Code without hooks has no count: "-", as report and tui show it. */
		if (c->m == CP_METRIC_CALLS &&
		    (sampled_only(q) ||
		     ((c->part == P_A || c->part == P_B) &&
		      (q->in & ~q->counted & (c->part == P_B ? 2u : 1u))))) {
			fprintf(fp, "%*s  ", w, "-");
			continue;
		}
		values(q, c->m, v);
		switch (c->part) {
		case P_A:
		case P_B: {
			int s = c->part == P_B;

			char marked[72];

			if (cp_metric__is_time(c->m))
				cp_fmt_ns(buf, sizeof(buf), v[s]);
			else
				snprintf(buf, sizeof(buf), "%" PRIu64, v[s]);
			snprintf(marked, sizeof(marked), "%s%s", time_mark(d, q, s, c->m), buf);
			fprintf(fp, "%*s  ", w, marked);
			continue;
		}
		case P_DELTA:
			if (cp_metric__is_time(c->m))
				fmt_delta_ns(buf, sizeof(buf), v);
			else
				fmt_delta_calls(buf, sizeof(buf), v);
			break;
		default:
			fmt_ratio(buf, sizeof(buf), q, v);
			break;
		}
		fprintf(fp, "%*s  ", w, buf);
	}
}

static const char *mode_str(const struct cp_report_profile *rp)
{
	switch (rp->pf->meta.mode) {
	case CP_MODE_COUNTING:
		return "counting";
	case CP_MODE_COVERAGE:
		return "coverage";
	case CP_MODE_CPU:
		return "cpu, CPU time sampled";
	default:
		return rp->compensated ? "timing, overhead compensated" : "timing, raw times";
	}
}

static void print_side(const struct cp_diff *d, int s, FILE *fp)
{
	const struct cp_report_profile *rp = d->rp[s];
	const struct cp_profile_file *pf = rp->pf;
	const struct cp_meta *m = &pf->meta;
	uint32_t nthreads = rp->trees[0].nthreads;

	fprintf(fp, "# %c: ", "AB"[s]);
	for (uint32_t i = 0; i < pf->argc; i++)
		fprintf(fp, "%s%s", i ? " " : "", cp_visible_arg(pf->argv[i]));
	fprintf(fp, " (%s), %u thread%s, %" PRIu64 " calls, %" PRIu64 " call paths\n", mode_str(rp),
		nthreads, nthreads == 1 ? "" : "s", rp->calls, rp->paths);
	if ((m->flags & CP_META_ATTACHED) || rp->open_at_start)
		fprintf(fp, "# %c: attached: counts are the calls made in the window; %" PRIu64
			    " call%s already open at attach\n", "AB"[s], rp->open_at_start,
			rp->open_at_start == 1 ? " was" : "s were");
	if (rp->cpu_sampled) {
		struct cp_sample_tally sh;

		cp_report_profile__sample_tally(rp, &sh);

		fprintf(fp, "# %c: CPU time sampled at %u Hz: %" PRIu64 " samples; times are "
			    "sampled CPU time plus off-CPU time, '?' marks those on fewer than %d "
			    "samples\n", "AB"[s], m->sample_hz, sh.program,
			CP_FEW_SAMPLES);
	}
	if (m->lost_calls || m->lost_events || m->unpaired_exits || m->nthreads_lost)
		fprintf(fp, "# warning: %c is incomplete: %" PRIu64 " calls in unrecorded paths, %" PRIu64
			    " events dropped, %" PRIu64 " unpaired exits, %u threads not set up\n",
			"AB"[s], m->lost_calls, m->lost_events, m->unpaired_exits, m->nthreads_lost);
}

/*
 * The header's word on the profiler's own cost: a side whose hooks took
 * CP_OVERHEAD_HIGH of its run or more (verdict.c), and the changed paths
 * whose times are mostly overhead ('~').
 */
static void print_overhead(const struct cp_diff *d, FILE *fp)
{
	uint32_t marked = 0;

	for (int s = 0; s < 2; s++) {
		const struct cp_report_profile *rp = d->rp[s];
		double share = cp_report_profile__overhead_share(rp);

		if (!d->timed || share < CP_OVERHEAD_HIGH)
			continue;
		if (rp->cpu_sampled)
			fprintf(fp, "# warning: %c: callprof's hooks took %.1f%% of the %s: left "
				    "out of the times, but they slowed the run %.1fx and changed it\n",
				"AB"[s], 100.0 * share, cp_report_profile__overhead_base(rp),
				1 / (1 - share));
		else
			fprintf(fp, "# warning: %c: callprof's hooks took %.1f%% of the %s: its "
				    "times are what compensation left of it, a change between them may "
				    "point the wrong way\n", "AB"[s], 100.0 * share,
				cp_report_profile__overhead_base(rp));
	}
	for (uint32_t k = 0; d->timed && k < d->np; k++)
		marked += status_of(d, &d->p[k]) != CP_DIFF_SAME && marked_overhead(d, &d->p[k]);
	if (marked)
		fprintf(fp, "# '~' marks times that are mostly hook overhead (compensation took over "
			    "half): %u changed path%s; --fail-if ignores a time change where both sides "
			    "are such times\n", marked, marked == 1 ? "" : "s");
}

static void print_header(const struct cp_diff *d, uint64_t shown, uint64_t rows, int all, FILE *fp)
{
	uint64_t calls[2] = { d->rp[0]->calls, d->rp[1]->calls };
	uint32_t changed = d->np - d->count[CP_DIFF_SAME] - d->scount[CP_DIFF_SAME];
	uint32_t sampled = d->scount[0] + d->scount[1] + d->scount[2] + d->scount[3];
	char buf[64], a[32], b[32];

	fprintf(fp, "# callprof diff: A = %s (before), B = %s (after)\n",
		cp_visible(d->rp[0]->pf->path), cp_visible(d->rp[1]->pf->path));
	print_side(d, 0, fp);
	print_side(d, 1, fp);
	fprintf(fp, "# call paths matched by function names, threads merged\n");
	for (int s = 0; s < 2; s++)
		if (!d->rp[s]->timed && d->rp[!s]->timed)
			fprintf(fp, "# %c has no times (recorded with --mode=%s): only calls are "
				    "compared\n", "AB"[s], mode_str(d->rp[s]));
	if (d->timed && d->cpu[0] != d->cpu[1])
		fprintf(fp, "# note: %c's times were clocked per call, %c's sampled (cpu mode): "
			    "time changes mix the two ways of measuring\n", "AB"[d->cpu[0]],
			"AB"[d->cpu[1]]);
	print_overhead(d, fp);
	fmt_delta_calls(buf, sizeof(buf), calls);
	fprintf(fp, "# calls: %" PRIu64 " -> %" PRIu64 " (%s)\n", calls[0], calls[1], buf);
	if (d->timed) {
		char ratio[32] = "-";

		cp_fmt_ns(a, sizeof(a), d->root_ns[0]);
		cp_fmt_ns(b, sizeof(b), d->root_ns[1]);
		fmt_delta_ns(buf, sizeof(buf), d->root_ns);
		if (d->root_ns[0])
			snprintf(ratio, sizeof(ratio), "%.2fx", (double)d->root_ns[1] /
				 (double)d->root_ns[0]);
		fprintf(fp, "# total: %s -> %s (%s, %s), %s\n", a, b, buf, ratio,
			d->cpu[0] || d->cpu[1] ? "all threads' CPU and off-CPU time" :
						 "all threads' lifetimes");
		if (d->weight == CP_METRIC_CPU) {
			uint64_t cpu[2] = { d->root_weight[0], d->root_weight[1] };

			cp_fmt_ns(a, sizeof(a), cpu[0]);
			cp_fmt_ns(b, sizeof(b), cpu[1]);
			fmt_delta_ns(buf, sizeof(buf), cpu);
			snprintf(ratio, sizeof(ratio), "-");
			if (cpu[0])
				snprintf(ratio, sizeof(ratio), "%.2fx", (double)cpu[1] / (double)cpu[0]);
			fprintf(fp, "# cpu: %s -> %s (%s, %s); weight: CPU time (blocked and "
				    "preempted time left out): it orders the paths and sets the floor; "
				    "--fields and --fail-if take any metric\n", a, b, buf, ratio);
		}
		cp_fmt_ns(a, sizeof(a), d->floor_ns);
		if (d->floor_ns)
			fprintf(fp, "# time changes below %g%% of the larger %s (%s) count as "
				    "none (--min-percent)\n", d->min_percent,
				cp_metric__name(d->weight), a);
		else
			fprintf(fp, "# every time change counts (--min-percent=%g)\n",
				d->min_percent);
	}
	if (!changed) {
		if (sampled)
			fprintf(fp, "# sampled code without hooks: %u context%s, all the same\n",
				sampled, sampled == 1 ? "" : "s");
		fprintf(fp, "# call paths: %u, all the same: no change\n", d->np - sampled);
		return;
	}
	if (sampled)
		fprintf(fp, "# sampled code without hooks (no calls, no call paths): %u changed, "
			    "%u new, %u gone, %u same\n", d->scount[CP_DIFF_CHANGED],
			d->scount[CP_DIFF_NEW], d->scount[CP_DIFF_GONE], d->scount[CP_DIFF_SAME]);
	fprintf(fp, "# call paths: %u changed, %u new, %u gone, %u same%s\n",
		d->count[CP_DIFF_CHANGED], d->count[CP_DIFF_NEW], d->count[CP_DIFF_GONE],
		d->count[CP_DIFF_SAME],
		all || !(d->count[CP_DIFF_SAME] + d->scount[CP_DIFF_SAME]) ? "" :
			" (not shown; --all shows them)");
	if (shown < rows)
		fprintf(fp, "# showing the first %" PRIu64 " of %" PRIu64 " rows (--limit)\n", shown,
			rows);
}

int cp_diff__print(struct cp_diff *d, const struct cp_diff_print_opts *o, FILE *fp)
{
	struct dcols f;
	uint32_t *rows = xmalloc((d->np ? d->np : 1) * sizeof(*rows)), *stack = NULL, nrows = 0;
	struct strbuf path = STRBUF_INIT;
	uint64_t shown;
	size_t alloc = 0;

	int sampled = d->cpu[0] || d->cpu[1], cpu = d->weight == CP_METRIC_CPU;

	if (parse_fields(&f, o->fields		  ? o->fields :
			     cpu && sampled	  ? CPU_WEIGHT_SAMPLED_FIELDS :
			     cpu		  ? CPU_WEIGHT_FIELDS :
			     d->timed && sampled ? CPU_FIELDS :
			     d->timed		  ? TIMED_FIELDS :
						    CALLS_FIELDS)) {
		free(rows);
		return -1;
	}
	for (uint32_t k = 0; k < d->np; k++)
		if (o->all || status_of(d, &d->p[k]) != CP_DIFF_SAME)
			rows[nrows++] = k;
	qsort_r(rows, nrows, sizeof(*rows), row_cmp, d);
	shown = o->limit && o->limit < nrows ? o->limit : nrows;
	if (!o->fields)
		print_header(d, shown, nrows, o->all, fp);
	if (nrows || o->fields)
		print_title(&f, fp);
	for (uint64_t i = 0; i < shown; i++) {
		path_str(d, rows[i], &path, &stack, &alloc);
		print_row(d, &f, rows[i], path.buf, fp);
	}
	strbuf_release(&path);
	free(stack);
	free(rows);
	return 0;
}

/* ---- --fail-if ---- */

int cp_diff_cond__parse(struct cp_diff_cond *c, const char *text, const char **why)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	const char *p = text, *num;
	char *end;
	size_t len;
	int m;

	memset(c, 0, sizeof(*c));
	c->text = text;
	if (!strcmp(text, "calls-changed") || !strcmp(text, "paths-changed")) {
		c->kind = text[0] == 'c' ? CP_COND_CALLS_CHANGED : CP_COND_PATHS_CHANGED;
		return 0;
	}
	c->kind = CP_COND_METRIC;
	len = strcspn(p, "<>");
	m = -1;
	if (p[len] && len < 32) {
		char name[32];

		memcpy(name, p, len);
		name[len] = '\0';
		m = cp_metric__lookup(name);
	}
	if (m < 0) {
		*why = "want calls-changed, paths-changed, or METRIC>+N or METRIC<-N with METRIC "
		       "calls, self, total, cpu, wait, inactive, samples, self-cpu, self-wait, "
		       "self-inactive or self-samples";
		return -1;
	}
	c->metric = (enum cp_metric)m;
	p += len;
	if (strncmp(p, ">+", 2) && strncmp(p, "<-", 2)) {
		*why = "a comparison is >+N (grew by more than N) or <-N (fell by more than N)";
		return -1;
	}
	c->up = *p == '>';
	num = p + 2;
	if (*num < '0' || *num > '9') {
		*why = "want a number after the sign";
		return -1;
	}
	c->limit = strtod(num, &end);
	if (end == num || !isfinite(c->limit)) {
		*why = "want a number after the sign";
		return -1;
	}
	if (!strcmp(end, "%")) {
		c->percent = 1;
		if (!c->up && c->limit >= 100) {
			*why = "nothing falls by 100% or more: the most is 100% (gone)";
			return -1;
		}
		return 0;
	}
	if (!cp_metric__is_time(c->metric)) {
		if (*end) {
			*why = "calls and samples take a count or a percentage, no unit";
			return -1;
		}
		return 0;
	}
	for (size_t k = 0; k < ARRAY_SIZE(units); k++) {
		if (!strcmp(end, units[k].unit)) {
			c->limit *= units[k].ns;
			return 0;
		}
	}
	*why = "times take a percentage or a unit: ns, us, ms or s";
	return -1;
}

int cp_diff_cond__timed(const struct cp_diff_cond *c)
{
	return c->kind == CP_COND_METRIC && c->metric != CP_METRIC_CALLS;
}

int cp_diff_cond__check(const struct cp_diff *d, const struct cp_diff_cond *c)
{
	for (int s = 0; s < 2 && c->kind == CP_COND_METRIC; s++)
		if (!side_has(d, s, c->metric)) {
			char what[64];

			snprintf(what, sizeof(what), "--fail-if '%s':", c->text);
			return cp_metric__parse(d->rp[s], cp_metric__name(c->metric), what) < 0 ?
				       -1 :
				       cp_error("--fail-if '%s' compares times, but profile '%s' has "
						"none", c->text, d->rp[!s]->pf->path);
		}
	return 0;
}

/* Whether m rests on samples in a cpu-mode profile (wait and inactive are measured). */
static int sampled_metric(enum cp_metric m)
{
	enum cp_metric in = cp_metric__inclusive(m);

	return in == CP_METRIC_TOTAL || in == CP_METRIC_CPU || in == CP_METRIC_SAMPLES;
}

/*
 * Whether q's time change (self or total) rests on nothing firm: each
 * side's time is sampling noise (fewer than CP_FEW_SAMPLES samples) or
 * mostly hook overhead ('~'), and at least one is so for a reason (some
 * samples, or compensation that took over half).  A clocked side that is
 * not mostly overhead, or a sampled one with enough samples, is firm: a
 * path that grew from a few samples to many, or from a tiny call to a
 * real one, did change.  A sampled side without any sample (its time is
 * clocked wait and inactive time) is firm only by itself.
 */
static int unfounded(const struct cp_diff *d, const struct dpath *q, int self)
{
	const uint64_t *n = self ? q->self_samples : q->samples;
	int reason = 0;

	for (int s = 0; s < 2; s++) {
		if (d->cpu[s]) {
			if (n[s] >= CP_FEW_SAMPLES)
				return 0;
			reason |= n[s] > 0;
		} else if (mostly_overhead(d, q, s, self)) {
			reason = 1;
		} else {
			return 0;
		}
	}
	return reason;
}

/*
 * Whether c holds for path q; *how gets how far (the change in percent,
 * INFINITY for a new path, or the change itself), larger being worse.
 */
static int holds(const struct cp_diff *d, const struct cp_diff_cond *c, const struct dpath *q,
		 int guard, double *how)
{
	const uint64_t *v;
	uint64_t delta, buf[2];
	int time = cp_metric__is_time(c->metric);

	switch (c->kind) {
	case CP_COND_CALLS_CHANGED:
		*how = (double)absdiff(q->calls);
		return !sampled_only(q) && (q->in != 3 || q->calls[0] != q->calls[1]);
	case CP_COND_PATHS_CHANGED:
		*how = 0; /* the table's order decides */
		return !sampled_only(q) && q->in != 3;
	case CP_COND_METRIC:
		break;
	}
	v = values(q, c->metric, buf);
	/* Times below the floor are noise; counts are exact. */
	if (time && v[0] < d->floor_ns && v[1] < d->floor_ns)
		return 0;
	/*
	 * So are times (and samples) on too few samples or mostly overhead in
	 * A and in B; wait and inactive are measured, neither.
	 */
	if (guard && sampled_metric(c->metric) &&
	    unfounded(d, q, cp_metric__exclusive(c->metric) == (enum cp_metric)c->metric))
		return 0;
	if (c->up ? v[1] <= v[0] : v[0] <= v[1])
		return 0;
	delta = absdiff(v);
	if (c->percent)
		*how = v[0] ? 100.0 * (double)delta / (double)v[0] : INFINITY;
	else
		*how = (double)delta;
	return *how > c->limit;
}

static void print_value(enum cp_metric m, uint64_t v, char *buf, size_t size)
{
	if (!cp_metric__is_time(m))
		snprintf(buf, size, "%" PRIu64, v);
	else
		cp_fmt_ns(buf, size, v);
}

int cp_diff__check(struct cp_diff *d, const struct cp_diff_cond *c, FILE *err)
{
	enum cp_metric m = c->kind == CP_COND_METRIC ? c->metric : CP_METRIC_CALLS;
	uint32_t n = 0, worst = CP_NONE, ignored = 0;
	double worst_how = 0;
	struct strbuf path = STRBUF_INIT;
	uint32_t *stack = NULL;
	size_t alloc = 0;
	const struct dpath *q;
	const uint64_t *v;
	uint64_t buf[2];
	char a[32], b[32], delta[32], ratio[32];

	for (uint32_t k = 0; k < d->np; k++) {
		double how;

		if (!holds(d, c, &d->p[k], 1, &how)) {
			ignored += holds(d, c, &d->p[k], 0, &how);
			continue;
		}
		n++;
		if (worst == CP_NONE || how > worst_how ||
		    (how == worst_how && impact_cmp(d, &d->p[k], &d->p[worst]) < 0)) {
			worst = k;
			worst_how = how;
		}
	}
	if (ignored)
		fprintf(err, "callprof: fail-if '%s' left out %u call path%s: in A and in B, %s "
			     "on too few samples ('?') or mostly hook overhead ('~')\n", cp_visible(c->text),
			ignored, ignored == 1 ? "" : "s", ignored == 1 ? "its time rests" :
			"their times rest");
	if (!n)
		return 0;
	q = &d->p[worst];
	v = values(q, m, buf);
	path_str(d, worst, &path, &stack, &alloc);
	print_value(m, v[0], a, sizeof(a));
	print_value(m, v[1], b, sizeof(b));
	if (!cp_metric__is_time(m))
		fmt_delta_calls(delta, sizeof(delta), v);
	else
		fmt_delta_ns(delta, sizeof(delta), v);
	fmt_ratio(ratio, sizeof(ratio), q, v);
	fprintf(err, "callprof: fail-if '%s' holds for %u call path%s; worst: %s: %s %s -> %s (",
		cp_visible(c->text), n, n == 1 ? "" : "s", path.buf, cp_metric__name(m), a, b);
	if (q->in != 3)
		fprintf(err, "%s", ratio);
	else if (!cp_metric__is_time(m))
		fprintf(err, "%s", delta);
	else
		fprintf(err, "%s, %s", delta, ratio);
	if (cp_metric__is_time(m) && sampled_metric(m) && (d->cpu[0] || d->cpu[1])) {
		/* The samples a sampled time rests on; "-" for a clocked side. */
		const uint64_t *smp = cp_metric__exclusive(m) == m ? q->self_samples : q->samples;

		fprintf(err, "; samples ");
		for (int s = 0; s < 2; s++) {
			if (d->cpu[s])
				fprintf(err, "%" PRIu64, smp[s]);
			else
				fprintf(err, "-");
			fprintf(err, "%s", s ? "" : " -> ");
		}
	}
	fprintf(err, ")\n");
	strbuf_release(&path);
	free(stack);
	return 1;
}
