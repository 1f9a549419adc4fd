/*
 * flat.c - per-function views: the flat profile and callers/callees.
 *
 * Totals in the flat profile are recursion-aware: a context whose function
 * is already active further up the same path is not added again, so a
 * recursive function's total is the time spent inside its outermost
 * activations, never more than the run.  Callers/callees list the edges
 * into and out of a function; for recursive edges (f calls f) the totals of
 * the nested activations overlap, as in gprof.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "report/internal.h"
#include "util/text.h"
#include "util/util.h"

#define FLAT_FIELDS "calls,self,self-percent,total,percent,avg,name"
/* Where off-CPU time was measured, the self time's split (exclusive, like it). */
#define SPLIT_FLAT_FIELDS "calls,self,self-cpu,self-wait,self-inactive,self-percent,total,percent,avg,name"
#define EDGE_FIELDS "calls,total,self,name"
/* Weighed by CPU time (cp_report_profile__weight): its parts first. */
#define CPU_FLAT_FIELDS "calls,self-cpu,self-percent,cpu,percent,self-wait,self-inactive,avg,name"
#define CPU_EDGE_FIELDS "calls,cpu,self-cpu,total,name"

static const char *agg_name(const struct cp_report_profile *rp, const struct cp_agg *a)
{
	return a->fn == CP_NONE ? "[thread start]" : rp->fns[a->fn].name;
}

/* a's value of metric m (as cp_rnode__metric); total and self where only they are known. */
static uint64_t agg_metric(const struct cp_agg *a, enum cp_metric m)
{
	const struct cp_figures f = {
		.calls = a->calls, .total_ns = a->total_ns, .self_ns = a->self_ns,
		.wait_ns = a->wait_ns, .inactive_ns = a->inactive_ns,
		.self_wait_ns = a->self_wait_ns, .self_inactive_ns = a->self_inactive_ns,
		.samples = a->samples, .self_samples = a->self_samples,
	};

	if (a->only_total && m != CP_METRIC_CALLS)
		return cp_sort_value((enum cp_sort_key)m, a->calls, a->total_ns, a->total_ns);
	return cp_figures__metric(&f, m);
}

/* The qsort_r context of agg_cmp. */
struct agg_order {
	const struct cp_report_profile *rp; /* the functions' names and addresses */
	enum cp_sort_key key;		    /* the order */
};

static int agg_cmp(const void *pa, const void *pb, void *arg)
{
	const struct cp_agg *a = pa, *b = pb;
	const struct agg_order *o = arg;
	uint64_t va = o->key == CP_SORT_NAME ? 0 : agg_metric(a, (enum cp_metric)o->key);
	uint64_t vb = o->key == CP_SORT_NAME ? 0 : agg_metric(b, (enum cp_metric)o->key);
	int c;

	if (va != vb)
		return va > vb ? -1 : 1;
	c = strcmp(agg_name(o->rp, a), agg_name(o->rp, b));
	if (!c && a->fn == b->fn && a->where != b->where)
		return !a->where ? 1 : !b->where ? -1 : strcmp(a->where, b->where);
	if (c || a->fn == b->fn)
		return c;
	return a->fn == CP_NONE ? -1 : b->fn == CP_NONE ? 1 :
	       o->rp->fns[a->fn].addr < o->rp->fns[b->fn].addr ? -1 : 1;
}

static void agg_add(struct cp_agg *a, const struct cp_rnode *n, int with_total)
{
	if (n->calls && (!a->calls || n->min_ns < a->min_ns))
		a->min_ns = n->min_ns;
	if (n->max_ns > a->max_ns)
		a->max_ns = n->max_ns;
	CP_ADD_SAT(a->calls, n->calls);
	CP_ADD_SAT(a->open_at_start, n->open_at_start);
	CP_ADD_SAT(a->self_ns, n->self_ns);
	CP_ADD_SAT(a->self_overhead_ns, n->self_overhead_ns);
	CP_ADD_SAT(a->self_wait_ns, n->self_wait_ns);
	CP_ADD_SAT(a->self_inactive_ns, n->self_inactive_ns);
	CP_ADD_SAT(a->self_switches_vol, n->self_switches_vol);
	CP_ADD_SAT(a->self_switches_invol, n->self_switches_invol);
	CP_ADD_SAT(a->self_samples, n->self_samples);
	if (with_total) {
		CP_ADD_SAT(a->samples, n->samples);
		CP_ADD_SAT(a->total_ns, n->total_ns);
		CP_ADD_SAT(a->overhead_ns, n->overhead_ns);
		CP_ADD_SAT(a->wait_ns, n->wait_ns);
		CP_ADD_SAT(a->inactive_ns, n->inactive_ns);
		CP_ADD_SAT(a->switches_vol, n->switches_vol);
		CP_ADD_SAT(a->switches_invol, n->switches_invol);
	}
}

/* The figures of a, as a row of rp. */
static void agg_row(struct cp_row *r, const struct cp_report_profile *rp, const struct cp_agg *a)
{
	r->calls = a->calls;
	r->open_at_start = a->open_at_start;
	r->total_ns = a->total_ns;
	r->self_ns = a->self_ns;
	r->min_ns = a->min_ns;
	r->max_ns = a->max_ns;
	r->wait_ns = a->wait_ns;
	r->inactive_ns = a->inactive_ns;
	r->self_wait_ns = a->self_wait_ns;
	r->self_inactive_ns = a->self_inactive_ns;
	r->switches_vol = a->switches_vol;
	r->switches_invol = a->switches_invol;
	r->self_switches_vol = a->self_switches_vol;
	r->self_switches_invol = a->self_switches_invol;
	r->untimed = !rp->timed;
	r->no_split = !rp->split;
	r->sampled = rp->sampled;
	r->cpu_sampled = rp->cpu_sampled;
	r->samples = a->samples;
	r->self_samples = a->self_samples;
}

static void print_aggs(struct cp_report_profile *rp, struct cp_agg *a, uint32_t n,
		       const struct cp_fields *f, uint64_t base, int indent, const char *prefix,
		       enum cp_sort_key key, FILE *fp)
{
	struct agg_order order = { rp, key };

	qsort_r(a, n, sizeof(*a), agg_cmp, &order);
	for (uint32_t i = 0; i < n; i++) {
		struct cp_row r = { 0 };

		if (!a[i].calls && !a[i].total_ns && !a[i].open_at_start)
			continue;
		agg_row(&r, rp, &a[i]);
		r.base_ns = base;
		r.name = agg_name(rp, &a[i]);
		r.indent = indent;
		r.prefix = prefix;
		r.site = a[i].where;
		r.only_total = a[i].only_total;
		r.overhead = rp->compensated && cp_mostly_overhead(a[i].total_ns, a[i].overhead_ns);
		r.self_overhead = rp->compensated &&
				  cp_mostly_overhead(a[i].self_ns, a[i].self_overhead_ns);
		cp_fields__row(f, &r, fp);
	}
}

void cp_flat_walk(const struct cp_rtree *t, struct cp_agg *a, uint32_t *active)
{
	uint32_t i = t->n[0].first_child;

	while (i != CP_NONE) {
		const struct cp_rnode *n = &t->n[i];

		agg_add(&a[n->fn], n, active[n->fn] == 0);
		if (n->first_child != CP_NONE) {
			active[n->fn]++;
			i = n->first_child;
			continue;
		}
		/* Leaf: go to the next sibling, climbing out of finished parents. */
		while (i != CP_NONE && t->n[i].next == CP_NONE) {
			i = t->n[i].parent;
			if (i == 0 || i == CP_NONE) {
				i = CP_NONE;
				break;
			}
			active[t->n[i].fn]--;
		}
		if (i != CP_NONE)
			i = t->n[i].next;
	}
}

/*
 * The per-function views work on a group of trees: all of them when
 * threads are merged (there is one), else each thread's tree on its own,
 * under a header naming the thread.
 */
static uint64_t group_base(const struct cp_rtree *t, uint32_t n, enum cp_metric w)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++)
		CP_ADD_SAT(sum, cp_rnode__metric(&t[i].n[0], w));
	return sum;
}

static void flat_group(struct cp_report_profile *rp, const struct cp_rtree *t, uint32_t nt,
		       const struct cp_fields *f, enum cp_sort_key key, FILE *fp)
{
	struct cp_agg *a = xcalloc(rp->nfns + 1, sizeof(*a));
	uint32_t *active = xcalloc(rp->nfns + 1, sizeof(*active));

	for (uint32_t i = 0; i < rp->nfns; i++)
		a[i].fn = i;
	for (uint32_t ti = 0; ti < nt; ti++)
		cp_flat_walk(&t[ti], a, active);
	cp_fields__title(f, fp);
	print_aggs(rp, a, rp->nfns, f, group_base(t, nt, f->weight), 0, NULL, key, fp);
	free(a);
	free(active);
}

/*
 * The default columns d, with open after calls where the profile has calls
 * open at attach: a row adding up a function's contexts counts them there
 * (its name stays the function's; the call tree marks the contexts).  A
 * caller's row counts the function's calls from it that were open.
 */
static const char *with_open(const struct cp_report_profile *rp, const char *d)
{
	static char buf[320];

	if (!rp->open_at_start || strncmp(d, "calls,", 6))
		return d;
	snprintf(buf, sizeof(buf), "calls,open,%s", d + 6);
	return buf;
}

int cp_view_flat(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp)
{
	struct cp_fields f;
	enum cp_metric w = cp_view_weight(rp, o);

	if (cp_fields__parse(&f, o->fields,
			     with_open(rp, cp_default_fields(rp, FLAT_FIELDS,
							     w == CP_METRIC_CPU ? CPU_FLAT_FIELDS :
										  SPLIT_FLAT_FIELDS))))
		return -1;
	cp_fields__apply_view(&f, o);
	f.sampled = rp->sampled;
	f.weight = w;
	if (!f.explicit) {
		cp_report_banner(rp, "flat profile", fp);
		cp_weight_banner(rp, o, fp);
	}
	if (rp->threads != CP_THREADS_EACH) {
		flat_group(rp, rp->trees, rp->ntrees, &f, o->sort, fp);
		return 0;
	}
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		cp_tree_header(rp, &rp->trees[ti], ti || !f.explicit, fp);
		flat_group(rp, &rp->trees[ti], 1, &f, o->sort, fp);
	}
	return 0;
}

/*
 * Edges by call-site line.  A context's call sites are lines in its
 * caller; where all of a context's sites are on one line, the whole
 * context (self time, min, max) belongs to that line's edge, else each
 * line gets the calls and inclusive time of its sites only.
 */
/* Add edge a into d (the same peer). */
static void agg_merge(struct cp_agg *d, const struct cp_agg *a)
{
	if (a->calls && !a->only_total && (!d->calls || a->min_ns < d->min_ns))
		d->min_ns = a->min_ns;
	if (a->max_ns > d->max_ns)
		d->max_ns = a->max_ns;
	CP_ADD_SAT(d->calls, a->calls);
	CP_ADD_SAT(d->open_at_start, a->open_at_start);
	CP_ADD_SAT(d->total_ns, a->total_ns);
	CP_ADD_SAT(d->self_ns, a->self_ns);
	CP_ADD_SAT(d->wait_ns, a->wait_ns);
	CP_ADD_SAT(d->inactive_ns, a->inactive_ns);
	CP_ADD_SAT(d->switches_vol, a->switches_vol);
	CP_ADD_SAT(d->switches_invol, a->switches_invol);
	CP_ADD_SAT(d->self_wait_ns, a->self_wait_ns);
	CP_ADD_SAT(d->self_inactive_ns, a->self_inactive_ns);
	CP_ADD_SAT(d->self_switches_vol, a->self_switches_vol);
	CP_ADD_SAT(d->self_switches_invol, a->self_switches_invol);
	CP_ADD_SAT(d->overhead_ns, a->overhead_ns);
	CP_ADD_SAT(d->self_overhead_ns, a->self_overhead_ns);
	CP_ADD_SAT(d->samples, a->samples);
	CP_ADD_SAT(d->self_samples, a->self_samples);
	d->only_total |= a->only_total;
}

struct line_edges {
	struct cp_agg *e;
	uint32_t n;
	size_t alloc;
};

static struct cp_agg *line_edge(struct line_edges *le, uint32_t peer, const char *where)
{
	struct cp_agg *a;

	ALLOC_GROW(le->e, le->n + 1, le->alloc);
	a = &le->e[le->n++];
	memset(a, 0, sizeof(*a));
	a->fn = peer;
	a->where = where ? xstrdup(where) : NULL;
	return a;
}

static void add_line_edges(struct cp_report_profile *rp, const struct cp_rtree *t,
			   const struct cp_rnode *c, uint32_t peer, struct line_edges *le)
{
	const char *one = NULL;
	int split = 0;

	for (uint32_t k = c->sites; k != CP_NONE && !split; k = t->sites[k].next) {
		const char *w = cp_site_str_at(rp, t->sites[k].site);

		if (k == c->sites)
			one = w ? xstrdup(w) : NULL;
		else
			split = !w != !one || (w && strcmp(w, one)); /* all unknown: one "line" */
	}
	if (c->sites == CP_NONE || !split) {
		const char *w = c->sites == CP_NONE ? cp_site_str(rp, c) : one;

		agg_add(line_edge(le, peer, w), c, 1);
		free((char *)one);
		return;
	}
	free((char *)one);
	for (uint32_t k = c->sites; k != CP_NONE; k = t->sites[k].next) {
		const struct cp_rsite *s = &t->sites[k];
		struct cp_agg *a = line_edge(le, peer, cp_site_str_at(rp, s->site));

		a->calls = s->calls;
		a->total_ns = s->total_ns;
		a->overhead_ns = s->overhead_ns;
		a->only_total = 1;
	}
}

/* "file:line" in file order, then line order (9 before 10); NULL last. */
static int where_cmp(const char *a, const char *b)
{
	const char *ca, *cb;
	size_t la, lb;
	int c;

	if (!a || !b)
		return a == b ? 0 : !a ? 1 : -1;
	ca = strrchr(a, ':');
	cb = strrchr(b, ':');
	la = ca ? (size_t)(ca - a) : strlen(a);
	lb = cb ? (size_t)(cb - b) : strlen(b);
	c = strncmp(a, b, la < lb ? la : lb);
	if (c || la != lb)
		return c ? c : la < lb ? -1 : 1;
	if (ca && cb && strlen(ca) != strlen(cb))
		return strlen(ca) < strlen(cb) ? -1 : 1;
	return strcmp(a, b);
}

static int edge_cmp(const void *pa, const void *pb)
{
	const struct cp_agg *a = pa, *b = pb;
	int c = where_cmp(a->where, b->where);

	return c ? c : (a->fn > b->fn) - (a->fn < b->fn);
}

/* Sort by (line, peer) and add up equal pairs; returns the number left. */
static uint32_t merge_line_edges(struct line_edges *le)
{
	uint32_t n = 0;

	if (!le->n)
		return 0; /* e is NULL: qsort may not be given it */
	qsort(le->e, le->n, sizeof(*le->e), edge_cmp);
	for (uint32_t i = 0; i < le->n; i++) {
		struct cp_agg *a = &le->e[i];

		if (n && !edge_cmp(&le->e[n - 1], a)) {
			agg_merge(&le->e[n - 1], a);
			free((char *)a->where);
			continue;
		}
		le->e[n++] = *a;
	}
	le->n = n;
	return n;
}

static void free_line_edges(struct line_edges *le)
{
	for (uint32_t i = 0; i < le->n; i++)
		free((char *)le->e[i].where);
	free(le->e);
}

/* A line's callees as one group: its heading's order among the lines. */
struct line_group {
	uint32_t first, n; /* its edges in the merged list */
	uint64_t calls, total_ns;
};

/* qsort_r order of line groups; arg points to the enum cp_sort_key. */
static int group_cmp(const void *pa, const void *pb, void *arg)
{
	const struct line_group *a = pa, *b = pb;
	enum cp_sort_key group_key = *(const enum cp_sort_key *)arg;
	/* A line's self time is not known: it orders as total. */
	uint64_t va = cp_sort_value(group_key, a->calls, a->total_ns, a->total_ns);
	uint64_t vb = cp_sort_value(group_key, b->calls, b->total_ns, b->total_ns);

	if (va != vb)
		return va > vb ? -1 : 1;
	return (a->first > b->first) - (a->first < b->first); /* by line name */
}

/* Callees grouped under a heading per call-site line ("at FILE:LINE"). */
static void print_line_groups(struct cp_report_profile *rp, struct line_edges *le,
			      const struct cp_fields *f, uint64_t base, enum cp_sort_key key,
			      FILE *fp)
{
	struct line_group *g = NULL;
	struct cp_agg *part = NULL;
	uint32_t ng = 0;
	size_t alloc = 0;

	for (uint32_t i = 0; i < le->n; i++) {
		if (!ng || where_cmp(le->e[g[ng - 1].first].where, le->e[i].where)) {
			ALLOC_GROW(g, ng + 1, alloc);
			memset(&g[ng], 0, sizeof(g[ng]));
			g[ng++].first = i;
		}
		g[ng - 1].n++;
		CP_ADD_SAT(g[ng - 1].calls, le->e[i].calls);
		CP_ADD_SAT(g[ng - 1].total_ns, le->e[i].total_ns);
	}
	if (ng)
		qsort_r(g, ng, sizeof(*g), group_cmp, &key);
	for (uint32_t k = 0; k < ng; k++) {
		const char *w = le->e[g[k].first].where;
		char *label = !w ? xstrdup("at an unknown line") :
			      !strcmp(w, "(inlined)") ? xstrdup("inlined (the line is not known)") :
			      xstrfmt("at %s", w);
		struct cp_row r = { 0 };

		r.label = 1;
		r.name = label;
		r.indent = 2;
		cp_fields__row(f, &r, fp);
		free(label);
		/* The line is in the heading; print_aggs sorts a copy. */
		part = xrealloc(part, g[k].n * sizeof(*part));
		memcpy(part, &le->e[g[k].first], g[k].n * sizeof(*part));
		for (uint32_t i = 0; i < g[k].n; i++)
			part[i].where = NULL;
		print_aggs(rp, part, g[k].n, f, base, 4, "-> ", key, fp);
	}
	free(part);
	free(g);
}

/*
 * Callers (dir < 0) or callees (dir > 0) of function fn in trees t[0..nt):
 * the function's own line (recursion-aware, as in the flat profile), then
 * one line per peer.  Returns 0 if the function does not occur there.
 */
static int edges_group(struct cp_report_profile *rp, const struct cp_view_opts *o, uint32_t fn,
		       const struct cp_rtree *t, uint32_t nt, const struct cp_fields *f, int dir,
		       const struct cp_rtree *header, FILE *fp)
{
	struct cp_agg *peer = xcalloc(rp->nfns + 1, sizeof(*peer));
	struct cp_agg *whole = xcalloc(rp->nfns + 1, sizeof(*whole));
	uint32_t *active = xcalloc(rp->nfns + 1, sizeof(*active));
	struct cp_row r = { 0 };
	struct line_edges le = { 0 };
	/* Callees go under their call-site lines; callers with --srcline get a row per line. */
	int found = 0, by_line = dir > 0 || o->srcline;

	for (uint32_t i = 0; i <= rp->nfns; i++)
		peer[i].fn = i < rp->nfns ? i : CP_NONE;
	for (uint32_t ti = 0; ti < nt; ti++) {
		cp_flat_walk(&t[ti], whole, active);
		/* In these trees at all: code without hooks ([kernel], libc) has no calls. */
		for (uint32_t i = 1; i < t[ti].nn && !found; i++)
			found = t[ti].n[i].fn == fn;
	}
	if (found) {
		whole[fn].min_ns = whole[fn].max_ns = 0; /* not shown, as before */
		agg_merge(&whole[rp->nfns], &whole[fn]);
	}
	agg_row(&r, rp, &whole[rp->nfns]);
	for (uint32_t ti = 0; found && ti < nt; ti++) {
		for (uint32_t i = 1; i < t[ti].nn; i++) {
			const struct cp_rnode *n = &t[ti].n[i];

			if (n->fn != fn)
				continue;
			if (dir < 0) {
				uint32_t pfn = t[ti].n[n->parent].fn;

				pfn = pfn == CP_NONE ? rp->nfns : pfn;
				if (by_line)
					add_line_edges(rp, &t[ti], n, pfn, &le);
				else
					agg_add(&peer[pfn], n, 1);
				continue;
			}
			for (uint32_t c = n->first_child; c != CP_NONE; c = t[ti].n[c].next) {
				if (by_line)
					add_line_edges(rp, &t[ti], &t[ti].n[c], t[ti].n[c].fn, &le);
				else
					agg_add(&peer[t[ti].n[c].fn], &t[ti].n[c], 1);
			}
		}
	}
	if (by_line) {
		merge_line_edges(&le);
		for (uint32_t i = 0; i < le.n; i++)
			if (le.e[i].fn == rp->nfns)
				le.e[i].fn = CP_NONE;
		/* No line known anywhere (no debug information): callees as they are. */
		if (dir > 0 && le.n && !le.e[0].where) {
			for (uint32_t i = 0; i < le.n; i++)
				agg_merge(&peer[le.e[i].fn], &le.e[i]);
			by_line = 0;
		}
	}
	if (found) {
		if (header)
			cp_tree_header(rp, header, header != rp->trees || !f->explicit, fp);
		cp_fields__title(f, fp);
		r.base_ns = group_base(t, nt, f->weight);
		r.name = rp->fns[fn].name ? rp->fns[fn].name : o->function;
		cp_fields__row(f, &r, fp);
		if (!by_line)
			print_aggs(rp, peer, rp->nfns + 1, f, r.base_ns, 2, dir < 0 ? "<- " : "-> ",
				   o->sort, fp);
		else if (dir < 0)
			print_aggs(rp, le.e, le.n, f, r.base_ns, 2, "<- ", o->sort, fp);
		else
			print_line_groups(rp, &le, f, r.base_ns, o->sort, fp);
	}
	free_line_edges(&le);
	free(peer);
	free(whole);
	free(active);
	return found;
}

/* qsort_r order of function indexes: heavier (arg: struct fn_weight) first, then by name. */
struct fn_weight {
	const struct cp_report_profile *rp;
	uint64_t *w;
};

static int fn_weight_cmp(const void *pa, const void *pb, void *arg)
{
	const struct fn_weight *wc = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const char *na = wc->rp->fns[a].name, *nb = wc->rp->fns[b].name;

	if (wc->w[a] != wc->w[b])
		return wc->w[a] > wc->w[b] ? -1 : 1;
	if (na && nb && strcmp(na, nb))
		return strcmp(na, nb);
	return (a > b) - (a < b);
}

static int edges(struct cp_report_profile *rp, const struct cp_view_opts *o, int dir, FILE *fp)
{
	struct cp_fields f;
	int found = 0;
	uint32_t *fns, nfns;
	struct fn_weight wc = { rp, NULL };

	struct cp_view_opts vo = *o;
	enum cp_metric w = cp_view_weight(rp, o);

	if (cp_fields__parse(&f, o->fields,
			     with_open(rp, cp_default_fields(rp, EDGE_FIELDS,
							     w == CP_METRIC_CPU ? CPU_EDGE_FIELDS :
										  NULL))))
		return -1;
	f.sampled = rp->sampled;
	f.weight = w;
	if (dir > 0)
		vo.srcline = 0; /* callees stand under their lines' headings */
	cp_fields__apply_view(&f, &vo);
	/* Which functions are named, before anything is printed. */
	fns = cp_report_profile__name_fns(rp, o->function, 0, &nfns);
	if (!fns)
		return -1;
	/* Each function's weight: its inclusive figure, recursion counted once. */
	{
		struct cp_agg *a = xcalloc(rp->nfns + 1, sizeof(*a));
		uint32_t *active = xcalloc(rp->nfns + 1, sizeof(*active));

		wc.w = xcalloc(rp->nfns + 1, sizeof(*wc.w));
		for (uint32_t ti = 0; ti < rp->ntrees; ti++)
			cp_flat_walk(&rp->trees[ti], a, active);
		for (uint32_t k = 0; k < nfns; k++)
			wc.w[fns[k]] = agg_metric(&a[fns[k]], cp_metric__inclusive(f.weight));
		qsort_r(fns, nfns, sizeof(*fns), fn_weight_cmp, &wc);
		free(wc.w);
		free(active);
		free(a);
	}
	if (!f.explicit) {
		cp_report_banner(rp, dir < 0 ? "callers" : "callees", fp);
		cp_weight_banner(rp, o, fp);
		if (nfns > 1)
			fprintf(fp, "# '%s' names %u functions: each is shown with its %s, the "
				    "heaviest first\n", cp_visible(o->function), nfns,
				dir < 0 ? "callers" : "callees");
	}
	for (uint32_t k = 0; k < nfns; k++) {
		if (rp->threads != CP_THREADS_EACH)
			found |= edges_group(rp, o, fns[k], rp->trees, rp->ntrees, &f, dir, NULL, fp);
		else
			for (uint32_t ti = 0; ti < rp->ntrees; ti++)
				found |= edges_group(rp, o, fns[k], &rp->trees[ti], 1, &f, dir,
						     &rp->trees[ti], fp);
	}
	free(fns);
	if (!found)
		BUG("function named, but in no tree");
	return 0;
}

int cp_view_callers(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp)
{
	return edges(rp, o, -1, fp);
}

int cp_view_callees(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp)
{
	return edges(rp, o, 1, fp);
}
