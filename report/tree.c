/*
 * tree.c - the call-tree view: one line per calling context, children
 * indented under their parent, pruned below --min-percent of the tree's
 * root (the thread's lifetime, or all threads' lifetimes added up).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "util/util.h"

#define TREE_FIELDS "calls,total,self,percent,avg,name"
/* Where off-CPU time was measured, the total's split (inclusive, like it). */
#define SPLIT_TREE_FIELDS "calls,total,cpu,wait,inactive,self,percent,avg,name"
/* Weighed by CPU time: it first, then what the elapsed time adds to it. */
#define CPU_TREE_FIELDS "calls,cpu,self-cpu,percent,total,wait,inactive,avg,name"
/* A merged profile's tree shows how each context varied across the inputs. */
#define MERGED_TREE_FIELDS "calls,calls-min,calls-max,total,total-min,total-max,self,percent,name"
#define MERGED_COUNT_FIELDS "calls,calls-min,calls-max,name"
/* Merged cpu-mode profiles: the samples the times rest on too. */
#define MERGED_CPU_FIELDS                                                                           \
	"calls,calls-min,calls-max,total,total-min,total-max,self,percent,samples,name"

/* Deeper contexts are printed at this indentation, their depth spelled out. */
#define MAX_INDENT_DEPTH 100

/* A call-site row: the sites of a context that resolve to one source line. */
struct site_row {
	char *where;	      /* "file:line", or NULL where no line is known */
	uint64_t site;	      /* the first site's address (order among unknown lines) */
	uint64_t calls, total_ns, overhead_ns;
};

/* qsort_r order of site rows; arg points to the enum cp_sort_key. */
static int site_row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct site_row *a = pa, *b = pb;
	enum cp_sort_key site_key = *(const enum cp_sort_key *)arg;
	/* Self time is not known per site: it orders as total. */
	uint64_t va = cp_sort_value(site_key, a->calls, a->total_ns, a->total_ns);
	uint64_t vb = cp_sort_value(site_key, b->calls, b->total_ns, b->total_ns);
	int c;

	if (va != vb)
		return va > vb ? -1 : 1;
	if (!a->where || !b->where)
		return a->where ? -1 : b->where ? 1 : (a->site > b->site) - (a->site < b->site);
	c = strcmp(a->where, b->where);
	return c ? c : (a->site > b->site) - (a->site < b->site);
}

/*
 * The call sites of n (several), one row per source line: the call
 * instructions of one line (an unrolled loop, two calls in one statement)
 * add up.  Sorted by key; returns the number of rows.
 */
static uint32_t site_rows(struct cp_report_profile *rp, const struct cp_rtree *t,
			  const struct cp_rnode *n, enum cp_sort_key key, struct site_row **out)
{
	struct site_row *rows = NULL;
	uint32_t k = 0;
	size_t alloc = 0;

	for (uint32_t i = n->sites; i != CP_NONE; i = t->sites[i].next) {
		const struct cp_rsite *s = &t->sites[i];
		const char *where = cp_site_str_at(rp, s->site, s->part);
		uint32_t j;

		for (j = 0; where && j < k; j++)
			if (rows[j].where && !strcmp(rows[j].where, where))
				break;
		if (!where || j == k) {
			ALLOC_GROW(rows, k + 1, alloc);
			rows[k].where = where ? xstrdup(where) : NULL;
			rows[k].site = s->site;
			rows[k].calls = rows[k].total_ns = rows[k].overhead_ns = 0;
			j = k++;
		}
		CP_ADD_SAT(rows[j].calls, s->calls);
		CP_ADD_SAT(rows[j].total_ns, s->total_ns);
		CP_ADD_SAT(rows[j].overhead_ns, s->overhead_ns);
	}
	qsort_r(rows, k, sizeof(*rows), site_row_cmp, &key);
	*out = rows;
	return k;
}

static void free_site_rows(struct site_row *rows, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++)
		free(rows[i].where);
	free(rows);
}

static void print_node(struct cp_report_profile *rp, struct cp_rtree *t, uint32_t i,
		       const struct cp_fields *f, uint64_t base, int need_site,
		       enum cp_sort_key key, uint64_t min_ns, FILE *fp)
{
	const struct cp_rnode *n = &t->n[i];
	struct cp_row r = { 0 };
	char depth[32], nsites[32];
	struct site_row *rows = NULL;
	uint32_t nrows = 0;

	r.calls = n->calls;
	r.open_at_start = n->open_at_start;
	r.open_mark = 1;
	r.total_ns = n->total_ns;
	r.self_ns = n->self_ns;
	r.min_ns = n->min_ns;
	r.max_ns = n->max_ns;
	r.base_ns = base;
	cp_row__set_node(&r, rp, n);
	r.name = cp_rnode__name(rp, n);
	r.indent = 2 * (n->depth - 1);
	if (n->depth > MAX_INDENT_DEPTH) {
		r.indent = 2 * (MAX_INDENT_DEPTH - 1);
		snprintf(depth, sizeof(depth), "[depth %u] ", n->depth);
		r.prefix = depth;
	}
	/* No input gave it (cpu mode: derived from samples on reading): no spread. */
	if (t->spread && i < t->nspread && rp->ninputs && t->spread[i].inputs) {
		r.spread = &t->spread[i];
		r.ninputs = rp->ninputs;
	}
	r.overhead = rp->compensated && cp_mostly_overhead(n->total_ns, n->overhead_ns);
	r.self_overhead = rp->compensated && cp_mostly_overhead(n->self_ns, n->self_overhead_ns);
	if (need_site && n->sites != CP_NONE)
		nrows = site_rows(rp, t, n, key, &rows);
	if (nrows > 1) {
		snprintf(nsites, sizeof(nsites), "(%u call sites)", nrows);
		r.site = nsites;
	} else if (nrows == 1) {
		r.site = rows[0].where;
	} else {
		r.site = need_site ? cp_site_str(rp, n) : NULL;
	}
	cp_fields__row(f, &r, fp);
	/*
	 * A row per call site ("@ NAME", one level deeper) with its calls and
	 * inclusive time; self, min and max are the context's, not the site's.
	 */
	for (uint32_t k = 0; nrows > 1 && k < nrows; k++) {
		struct cp_row sr = r;

		/* Per site only the total is known: it stands for the weight. */
		if (rows[k].total_ns < min_ns)
			continue;
		sr.calls = rows[k].calls;
		sr.open_at_start = 0; /* known per context, not per site */
		sr.total_ns = rows[k].total_ns;
		sr.only_total = 1;
		sr.spread = NULL; /* known per context, not per site */
		sr.untimed |= rp->cpu_sampled; /* samples are per context, not per site */
		sr.overhead = rp->compensated && cp_mostly_overhead(rows[k].total_ns,
								     rows[k].overhead_ns);
		sr.site = rows[k].where;
		sr.indent += 2;
		sr.prefix = "@ ";
		cp_fields__row(f, &sr, fp);
	}
	free_site_rows(rows, nrows);
}

/*
 * Whether node c is left out: below min_ns of weight w, or (hide_few) sampled code
 * without hooks that rests on fewer than CP_FEW_SAMPLES samples, which is
 * there at all only when a sample happened to land in it.
 */
static int hidden(const struct cp_rtree *t, uint32_t c, enum cp_metric w, uint64_t min_ns,
		  int hide_few)
{
	const struct cp_rnode *n = &t->n[c];

	return cp_rnode__metric(n, w) < min_ns ||
	       (hide_few && n->uninstrumented && n->samples < CP_FEW_SAMPLES);
}

/* c or its first next sibling not hidden; CP_NONE if none. */
static uint32_t shown(const struct cp_rtree *t, uint32_t c, enum cp_metric w, uint64_t min_ns,
		       int hide_few)
{
	while (c != CP_NONE && hidden(t, c, w, min_ns, hide_few))
		c = t->n[c].next;
	return c;
}

/*
 * Depth first, in sibling order, without recursion: trees can be a million
 * levels deep (deep recursion is recorded as it happened).
 */
static void print_tree(struct cp_report_profile *rp, struct cp_rtree *t, const struct cp_fields *f,
		       uint64_t base, enum cp_metric w, uint64_t min_ns, int hide_few, int need_site,
		       enum cp_sort_key key, FILE *fp)
{
	uint32_t c = shown(t, t->n[0].first_child, w, min_ns, hide_few);

	while (c != CP_NONE) {
		uint32_t down;

		print_node(rp, t, c, f, base, need_site, key, min_ns, fp);
		down = shown(t, t->n[c].first_child, w, min_ns, hide_few);
		if (down != CP_NONE) {
			c = down;
			continue;
		}
		/* Up until a context has a next sibling to show. */
		while (c != 0) {
			uint32_t next = shown(t, t->n[c].next, w, min_ns, hide_few);

			if (next != CP_NONE) {
				c = next;
				break;
			}
			c = t->n[c].parent;
		}
		if (c == 0)
			c = CP_NONE;
	}
}

int cp_view_tree(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp)
{
	struct cp_fields f;
	int need_site = 0;
	enum cp_metric w = cp_view_weight(rp, o);

	if (cp_fields__parse(&f, o->fields,
			     !rp->ninputs ? cp_default_fields(rp, TREE_FIELDS,
							      w == CP_METRIC_CPU ? CPU_TREE_FIELDS :
										   SPLIT_TREE_FIELDS) :
			     rp->cpu_sampled ? MERGED_CPU_FIELDS :
			     rp->timed	     ? MERGED_TREE_FIELDS :
					       MERGED_COUNT_FIELDS))
		return -1;
	cp_fields__apply_view(&f, o);
	f.sampled = rp->sampled;
	f.weight = w;
	for (int k = 0; k < f.n; k++)
		need_site |= f.id[k] == CP_F_SITE;
	cp_report_profile__sort(rp, o->sort);
	if (!f.explicit) {
		cp_report_banner(rp, "call tree", fp);
		cp_weight_banner(rp, o, fp);
		if (o->min_percent > 0 && rp->cpu_sampled)
			fprintf(fp, "# contexts below %g%% of their tree's %s, and code without "
				    "hooks sampled fewer than %d times, are hidden (--min-percent=0 shows "
				    "all)\n", o->min_percent, cp_metric__name(w), CP_FEW_SAMPLES);
		else if (o->min_percent > 0 && rp->timed)
			fprintf(fp, "# contexts below %g%% of their tree's %s are hidden "
				    "(--min-percent=0 shows all)\n", o->min_percent, cp_metric__name(w));
	}
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		struct cp_rtree *t = &rp->trees[ti];
		/* Calls are per context, not inclusive: they weigh nothing out. */
		uint64_t base = w == CP_METRIC_CALLS ? 0 : cp_rnode__metric(&t->n[0], w);
		uint64_t min_ns = (uint64_t)(o->min_percent / 100.0 * (double)base);

		if (!f.explicit || rp->threads == CP_THREADS_EACH)
			cp_tree_header(rp, t, ti || !f.explicit, fp);
		cp_fields__title(&f, fp);
		print_tree(rp, t, &f, base, w, min_ns, rp->cpu_sampled && o->min_percent > 0,
			   need_site, o->sort, fp);
	}
	return 0;
}
