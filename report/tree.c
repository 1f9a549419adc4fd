/*
 * tree.c - the call-tree view: one line per calling context, children
 * indented under their parent, pruned below --min-percent of the tree's
 * root (the thread's lifetime, or all threads' lifetimes added up).
 */
#include <inttypes.h>

#include "report/internal.h"
#include "util/util.h"

#define TREE_FIELDS "calls,total,self,percent,avg,name"

/* Deeper contexts are printed at this indentation, their depth spelled out. */
#define MAX_INDENT_DEPTH 100

static void print_node(struct cp_report_profile *rp, struct cp_rtree *t, uint32_t i,
		       const struct cp_fields *f, uint64_t base, int need_site, FILE *fp)
{
	const struct cp_rnode *n = &t->n[i];
	struct cp_row r = { 0 };
	char depth[32];

	r.calls = n->calls;
	r.total_ns = n->total_ns;
	r.self_ns = n->self_ns;
	r.min_ns = n->min_ns;
	r.max_ns = n->max_ns;
	r.base_ns = base;
	r.name = cp_rnode__name(rp, n);
	r.indent = 2 * (n->depth - 1);
	if (n->depth > MAX_INDENT_DEPTH) {
		r.indent = 2 * (MAX_INDENT_DEPTH - 1);
		snprintf(depth, sizeof(depth), "[depth %u] ", n->depth);
		r.prefix = depth;
	}
	r.untimed = !rp->timed;
	r.overhead = rp->compensated && cp_mostly_overhead(n->total_ns, n->overhead_ns);
	r.self_overhead = rp->compensated && cp_mostly_overhead(n->self_ns, n->self_overhead_ns);
	r.site = need_site ? cp_site_str(rp, n) : NULL;
	cp_fields__row(f, &r, fp);
}

/* c or its first next sibling at or above min_ns; CP_NONE if none. */
static uint32_t shown(const struct cp_rtree *t, uint32_t c, uint64_t min_ns)
{
	while (c != CP_NONE && t->n[c].total_ns < min_ns)
		c = t->n[c].next;
	return c;
}

/*
 * Depth first, in sibling order, without recursion: trees can be a million
 * levels deep (deep recursion is recorded as it happened).
 */
static void print_tree(struct cp_report_profile *rp, struct cp_rtree *t, const struct cp_fields *f,
		       uint64_t base, uint64_t min_ns, int need_site, FILE *fp)
{
	uint32_t c = shown(t, t->n[0].first_child, min_ns);

	while (c != CP_NONE) {
		uint32_t down;

		print_node(rp, t, c, f, base, need_site, fp);
		down = shown(t, t->n[c].first_child, min_ns);
		if (down != CP_NONE) {
			c = down;
			continue;
		}
		/* Up until a context has a next sibling to show. */
		while (c != 0) {
			uint32_t next = shown(t, t->n[c].next, min_ns);

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

	if (cp_fields__parse(&f, o->fields, cp_default_fields(rp, TREE_FIELDS)))
		return -1;
	cp_fields__apply_view(&f, o);
	for (int k = 0; k < f.n; k++)
		need_site |= f.id[k] == CP_F_SITE;
	cp_report_profile__sort(rp, o->sort);
	if (!f.explicit) {
		cp_report_banner(rp, "call tree", fp);
		if (o->min_percent > 0 && rp->timed)
			fprintf(fp, "# contexts below %g%% of their tree's total are hidden "
				    "(--min-percent=0 shows all)\n", o->min_percent);
	}
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		struct cp_rtree *t = &rp->trees[ti];
		uint64_t base = t->n[0].total_ns;
		uint64_t min_ns = (uint64_t)(o->min_percent / 100.0 * (double)base);

		if (!f.explicit || rp->threads == CP_THREADS_EACH)
			cp_tree_header(t, ti || !f.explicit, fp);
		cp_fields__title(&f, fp);
		print_tree(rp, t, &f, base, min_ns, need_site, fp);
	}
	return 0;
}
