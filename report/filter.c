/*
 * filter.c - report-time filters: --focus, --hide and (export)
 * --min-percent, applied to a loaded profile once, before any view or
 * export, so that every view and format shows the same filtered tree and
 * nothing has to be recorded again.  (--threads selectors act earlier:
 * threads not selected are never loaded, see cp_report_opts.)
 *
 * Each filter is one pass that rebuilds a tree from an action per context,
 * parents before children (children always have larger indices than their
 * parents), with a hash map from (new parent, function) to the new node,
 * so that contexts moved under another parent merge with their equal
 * siblings in constant time: a million-deep recursion of a hidden function
 * costs a million steps, not their square, and no step recurses.
 *
 * The new tree is given only exclusive figures (self time, self off-CPU
 * time and switches, the compensation taken off self) and per-call ones
 * (calls, min, max, call sites); the inclusive figures are then summed
 * bottom-up, so the tree stays consistent whatever moved.  Only the root
 * keeps its inclusive figures: they are the thread's (the header's
 * duration and cpu, the 100% of every percentage), and its self time
 * holds what is in no kept path.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

/* What a pass does with one context. */
enum action {
	KEEP,	  /* a context of the new tree, added into an equal sibling if any */
	ANCESTOR, /* focus: kept for the paths below it; only its calls remain its own */
	MERGE_UP, /* hide: its exclusive figures go to its parent, its children up a level */
	FOLD,	  /* min-percent: it and its subtree go into its parent's self */
	DROP,	  /* focus: on no path kept; goes with its subtree */
};

struct patterns {
	struct cp_name_pattern **p;
	uint32_t n;
	size_t alloc;
};

struct cp_view_filter {
	int regex;	     /* patterns are extended regexes, not globs */
	double min_percent;  /* fold contexts below this share of their root (0: none) */
	int weight;	     /* of this metric (enum cp_metric; -1: the profile's weight) */
	struct patterns focus, hide;
};

/*
 * The inclusive figures and their exclusive parts: the inclusive one is
 * the exclusive one plus the children's inclusive ones.
 */
#define FIGURES(X)                                     \
	X(total_ns, self_ns)                           \
	X(wait_ns, self_wait_ns)                       \
	X(inactive_ns, self_inactive_ns)               \
	X(switches_vol, self_switches_vol)             \
	X(switches_invol, self_switches_invol)         \
	X(overhead_ns, self_overhead_ns)               \
	X(samples, self_samples)

struct cp_view_filter *cp_view_filter__new(int regex, double min_percent)
{
	struct cp_view_filter *f = xcalloc(1, sizeof(*f));

	f->regex = regex;
	f->min_percent = min_percent;
	f->weight = -1;
	return f;
}

static void patterns__release(struct patterns *ps)
{
	for (uint32_t i = 0; i < ps->n; i++)
		cp_name_pattern__free(ps->p[i]);
	free(ps->p);
}

void cp_view_filter__free(struct cp_view_filter *f)
{
	if (!f)
		return;
	patterns__release(&f->focus);
	patterns__release(&f->hide);
	free(f);
}

int cp_view_filter__add(struct cp_view_filter *f, int focus, const char *pattern, char *err,
			size_t size)
{
	struct patterns *ps = focus ? &f->focus : &f->hide;
	struct cp_name_pattern *p = cp_name_pattern__new(pattern, f->regex, err, size);

	if (!p)
		return -1;
	ALLOC_GROW(ps->p, ps->n + 1, ps->alloc);
	ps->p[ps->n++] = p;
	return 0;
}

/* The names of rp's functions that are in one of its trees (NULL for the others). */
static const char **present_names(const struct cp_report_profile *rp)
{
	const char **names = xcalloc(rp->nfns ? rp->nfns : 1, sizeof(*names));

	for (uint32_t t = 0; t < rp->ntrees; t++)
		for (uint32_t i = 1; i < rp->trees[t].nn; i++) {
			uint32_t fn = rp->trees[t].n[i].fn;

			if (fn != CP_NONE)
				names[fn] = rp->fns[fn].name ? rp->fns[fn].name : "";
		}
	return names;
}

/*
 * Per function of rp, the first pattern of ps that names it (CP_NONE:
 * none): each pattern names the functions of the best rank it reaches
 * (names.c), matched once per function, not once per context.
 */
static uint32_t *match_fns(const struct patterns *ps, const struct cp_report_profile *rp)
{
	uint32_t *m = xmalloc((rp->nfns ? rp->nfns : 1) * sizeof(*m));
	uint8_t *hit = xmalloc(rp->nfns ? rp->nfns : 1);
	const char **names = present_names(rp);

	for (uint32_t fn = 0; fn < rp->nfns; fn++)
		m[fn] = CP_NONE;
	for (uint32_t k = 0; k < ps->n; k++) {
		cp_name_pattern__select(ps->p[k], names, rp->nfns, hit);
		for (uint32_t fn = 0; fn < rp->nfns; fn++)
			if (hit[fn] && m[fn] == CP_NONE)
				m[fn] = k;
	}
	free(names);
	free(hit);
	return m;
}

static void add_exclusive(struct cp_rnode *d, const struct cp_rnode *s)
{
#define ADD_SELF(incl, self) d->self += s->self;
	FIGURES(ADD_SELF)
#undef ADD_SELF
}

/* s and everything below it, into d's exclusive figures. */
static void add_subtree_as_self(struct cp_rnode *d, const struct cp_rnode *s)
{
#define ADD_INCL(incl, self) d->self += s->incl;
	FIGURES(ADD_INCL)
#undef ADD_INCL
}

/* Old context s of t, kept: into node id of the new tree nt, with its call sites. */
static void add_kept(struct cp_rtree *nt, uint32_t id, const struct cp_rtree *t,
		     const struct cp_rnode *s)
{
	struct cp_rnode *d;

	/* Sites first: cp_rtree__add_site tells a node's first site by its counts. */
	if (s->sites == CP_NONE)
		cp_rtree__add_site(nt, id, s->site, s->calls, s->total_ns, s->overhead_ns, 0);
	for (uint32_t k = s->sites; k != CP_NONE; k = t->sites[k].next) {
		const struct cp_rsite *e = &t->sites[k];

		cp_rtree__add_site(nt, id, e->site, e->calls, e->total_ns, e->overhead_ns, 1);
	}
	d = &nt->n[id];
	/* Calls, min, max, site and the exclusive off-CPU figures... */
	cp_rnode__add_counts(d, s);
	/* ...and the exclusive times it leaves out. */
	CP_ADD_SAT(d->self_ns, s->self_ns);
	CP_ADD_SAT(d->self_overhead_ns, s->self_overhead_ns);
}

/*
 * Rebuild tree t by act[] (one per context); map[] gets, per old context,
 * its new node (CP_NONE where it went).
 */
static void rebuild(struct cp_rtree *t, const uint8_t *act, uint32_t *map)
{
	struct cp_rtree nt = { 0 };
	struct cp_rnode *root;
	struct cp_u64map ctx;

	nt.label = t->label;
	nt.tid = t->tid;
	nt.nthreads = t->nthreads;
	nt.cpu_ns = t->cpu_ns;
	nt.cpu_unknown = t->cpu_unknown;
	cp_rtree__add(&nt, CP_NONE, CP_NONE);
	add_exclusive(&nt.n[0], &t->n[0]);
	map[0] = 0;
	cp_u64map__init(&ctx, t->nn);
	for (uint32_t i = 1; i < t->nn; i++) {
		const struct cp_rnode *s = &t->n[i];
		uint32_t p = map[s->parent], id;

		map[i] = CP_NONE;
		if (p == CP_NONE) /* below a context dropped or folded */
			continue;
		switch (act[i]) {
		case KEEP:
		case ANCESTOR:
			id = cp_u64map__get(&ctx, (uint64_t)p << 32 | s->fn);
			if (id == CP_NONE)
				id = cp_u64map__get_or_add(&ctx, (uint64_t)p << 32 | s->fn,
							   cp_rtree__add(&nt, p, s->fn));
			if (act[i] == KEEP) {
				add_kept(&nt, id, t, s);
			} else {
				CP_ADD_SAT(nt.n[id].calls, s->calls);
				CP_ADD_SAT(nt.n[id].open_at_start, s->open_at_start);
			}
			map[i] = id;
			break;
		case MERGE_UP:
			add_exclusive(&nt.n[p], s);
			map[i] = p;
			break;
		case FOLD:
			add_subtree_as_self(&nt.n[p], s);
			break;
		default: /* DROP */
			break;
		}
	}
	cp_u64map__release(&ctx);
	/* Inclusive figures bottom-up: children have larger indices than parents. */
	for (uint32_t i = 0; i < nt.nn; i++) {
		struct cp_rnode *n = &nt.n[i];

#define INIT(incl, self) n->incl = n->self;
		FIGURES(INIT)
#undef INIT
	}
	for (uint32_t i = nt.nn; i-- > 1;) {
		struct cp_rnode *n = &nt.n[i], *p = &nt.n[n->parent];

#define UP(incl, self) p->incl += n->incl;
		FIGURES(UP)
#undef UP
	}
	/* The root stays the thread's; its self is what no kept path holds. */
	root = &nt.n[0];
#define ROOT(incl, self)                                                         \
	root->self = t->n[0].incl > root->incl - root->self ?                      \
		     t->n[0].incl - (root->incl - root->self) : 0;                 \
	root->incl = t->n[0].incl;
	FIGURES(ROOT)
#undef ROOT
	/*
	 * Merged profiles: the spread across the inputs of the contexts kept
	 * adds up; an ancestor's, of its whole calls, is no longer known.
	 */
	if (t->spread) {
		nt.spread = xcalloc(nt.nn, sizeof(*nt.spread));
		nt.nspread = nt.nn;
		for (uint32_t i = 1; i < t->nn && i < t->nspread; i++) {
			struct cp_rspread *d;
			int folded;

			if (act[i] != KEEP || map[i] == CP_NONE)
				continue;
			d = &nt.spread[map[i]];
			folded = d->inputs != 0;
			cp_rspread__add(d, &t->spread[i]);
			/* Two contexts of the same inputs: per input, the values add up. */
			if (folded)
				d->dist = 0;
		}
	}
	free(t->n);
	free(t->sites);
	free(t->spread);
	*t = nt;
}

/* What one pass of one profile did, for the banner. */
struct pass_stats {
	uint64_t kept, all; /* focus: time (or calls) in the paths kept, and in all */
};

/*
 * Focus: contexts of a matching function and their subtrees are kept,
 * their ancestors are kept for them, the rest goes.
 */
static void focus_actions(const struct cp_rtree *t, const uint32_t *match, uint8_t *act,
			  uint64_t *hits, int timed, struct pass_stats *st)
{
	act[0] = KEEP;
	for (uint32_t i = 1; i < t->nn; i++)
		act[i] = DROP;
	/* Ancestors: bottom-up, a context with a kept descendant is one. */
	for (uint32_t i = t->nn; i-- > 1;) {
		const struct cp_rnode *n = &t->n[i];

		if ((match[n->fn] != CP_NONE || act[i] == ANCESTOR) && n->parent)
			act[n->parent] = ANCESTOR;
	}
	/* Top-down: a matching context, and everything below one, is kept. */
	for (uint32_t i = 1; i < t->nn; i++) {
		const struct cp_rnode *n = &t->n[i];
		int under = n->parent && act[n->parent] == KEEP;

		if (match[n->fn] != CP_NONE && hits)
			hits[match[n->fn]]++;
		if (match[n->fn] != CP_NONE || under) {
			/* The outermost kept contexts hold the time of all paths kept. */
			if (!under)
				CP_ADD_SAT(st->kept, timed ? n->total_ns : 0);
			act[i] = KEEP;
		}
		if (!timed) {
			CP_ADD_SAT(st->all, n->calls);
			st->kept += act[i] == KEEP ? n->calls : 0;
		}
	}
	if (timed)
		CP_ADD_SAT(st->all, t->n[0].total_ns);
}

/*
 * node_map (several files: their sampled lines) follows the contexts of
 * tree ti to their new nodes.
 */
static void remap_nodes(struct cp_report_profile *rp, uint32_t ti, const uint32_t *map)
{
	const struct cp_profile_file *pf = rp->pf;

	for (uint32_t i = 0; i < rp->nlines; i++)
		if (rp->lines[i].tree == ti && rp->lines[i].node != CP_NONE)
			rp->lines[i].node = map[rp->lines[i].node];
	if (!rp->node_map || !rp->thread_tree)
		return;
	for (uint32_t i = 0; i < pf->nthreads; i++) {
		const struct cp_thread_rec *th = &pf->threads[i];

		if (rp->thread_tree[i] != ti)
			continue;
		for (uint32_t k = th->first_node; k < th->first_node + th->nnodes; k++)
			if (rp->node_map[k] != CP_NONE)
				rp->node_map[k] = map[rp->node_map[k]];
	}
}

enum pass { PASS_FOCUS, PASS_HIDE, PASS_FOLD };

/*
 * One pass over every tree of rp; hits (NULL for a part of rp) counts the
 * contexts each pattern matched.
 */
static void run_pass(const struct cp_view_filter *f, struct cp_report_profile *rp, enum pass pass,
		     uint64_t *hits, struct pass_stats *st)
{
	const struct patterns *ps = pass == PASS_FOCUS ? &f->focus : &f->hide;
	uint32_t *match = pass == PASS_FOLD ? NULL : match_fns(ps, rp);

	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		struct cp_rtree *t = &rp->trees[ti];
		uint8_t *act = xmalloc(t->nn);
		uint32_t *map = xmalloc(t->nn * sizeof(*map));
		enum cp_metric w = f->weight >= 0 ? (enum cp_metric)f->weight :
						    cp_report_profile__weight(rp, NULL, 0);
		uint64_t min_ns;

		/* Calls are per context, not inclusive: they fold by total time. */
		if (w == CP_METRIC_CALLS || w == CP_METRIC_SAMPLES)
			w = CP_METRIC_TOTAL;
		min_ns = (uint64_t)(f->min_percent / 100.0 * (double)cp_rnode__metric(&t->n[0], w));

		act[0] = KEEP;
		if (pass == PASS_FOCUS) {
			focus_actions(t, match, act, hits, rp->timed, st);
		} else {
			for (uint32_t i = 1; i < t->nn; i++) {
				const struct cp_rnode *n = &t->n[i];

				if (pass == PASS_FOLD) {
					act[i] = cp_rnode__metric(n, w) < min_ns ? FOLD : KEEP;
				} else if (match[n->fn] != CP_NONE) {
					act[i] = MERGE_UP;
					if (hits)
						hits[match[n->fn]]++;
				} else {
					act[i] = KEEP;
				}
			}
		}
		rebuild(t, act, map);
		remap_nodes(rp, ti, map);
		free(act);
		free(map);
	}
	free(match);
}

static void filter_profile(const struct cp_view_filter *f, struct cp_report_profile *rp,
			   uint64_t *focus_hits, uint64_t *hide_hits, struct pass_stats *st)
{
	if (f->focus.n)
		run_pass(f, rp, PASS_FOCUS, focus_hits, st);
	if (f->hide.n)
		run_pass(f, rp, PASS_HIDE, hide_hits, st);
	if (f->min_percent > 0 && rp->timed)
		run_pass(f, rp, PASS_FOLD, NULL, st);
	if (!rp->unnamed)
		cp_report_profile__sort(rp, (enum cp_sort_key)
							   cp_report_profile__weight(rp, NULL, 0));
}

void cp_view_filter__set_weight(struct cp_view_filter *f, enum cp_metric weight)
{
	f->weight = (int)cp_metric__inclusive(weight);
}

/* --focus P named nothing: one line, with the closest names. */
static int focus_error(const struct cp_name_pattern *p, const struct cp_report_profile *rp,
		       const char **names)
{
	char *close = cp_name_pattern__suggest(p, names, rp->nfns, 5);
	int ret;

	if (close)
		ret = cp_error("--focus '%s' matches no function in profile '%s'; the closest: %s",
			       cp_name_pattern__text(p), rp->pf->path, close);
	else
		ret = cp_error("--focus '%s' matches no function in profile '%s'",
			       cp_name_pattern__text(p), rp->pf->path);
	free(close);
	return ret;
}

int cp_view_filter__apply(const struct cp_view_filter *f, struct cp_report_profile *rp)
{
	const char **names;
	uint64_t *focus_hits, *hide_hits;
	struct pass_stats st = { 0 };
	struct strbuf sb = STRBUF_INIT;
	int ret = 0;

	if (!f->focus.n && !f->hide.n && !(f->min_percent > 0))
		return 0;
	focus_hits = xcalloc(f->focus.n + 1, sizeof(*focus_hits));
	names = present_names(rp);
	hide_hits = xcalloc(f->hide.n + 1, sizeof(*hide_hits));
	filter_profile(f, rp, focus_hits, hide_hits, &st);
	for (uint32_t k = 0; k < f->focus.n; k++) {
		if (!focus_hits[k]) {
			/* The names as they were before any filter took some out. */
			ret = focus_error(f->focus.p[k], rp, names);
			goto out;
		}
	}
	if (rp->filters)
		strbuf_addstr(&sb, rp->filters);
	if (f->focus.n) {
		strbuf_addstr(&sb, "# focus: ");
		for (uint32_t k = 0; k < f->focus.n; k++)
			strbuf_addf(&sb, "%s%s", k ? ", " : "",
				    cp_visible(cp_name_pattern__text(f->focus.p[k])));
		if (st.all)
			strbuf_addf(&sb, " (%.2f%% of the %s)", 100.0 * (double)st.kept / (double)st.all,
				    rp->timed ? "time" : "calls");
		strbuf_addch(&sb, '\n');
	}
	for (uint32_t k = 0; k < f->hide.n; k++)
		strbuf_addf(&sb, "# hidden: %s (%" PRIu64 " context%s merged into callers)\n",
			    cp_visible(cp_name_pattern__text(f->hide.p[k])), hide_hits[k],
			    hide_hits[k] == 1 ? "" : "s");
	free(rp->filters);
	rp->filters = sb.len ? strbuf_detach(&sb, NULL) : NULL;
out:
	strbuf_release(&sb);
	free(names);
	free(focus_hits);
	free(hide_hits);
	return ret;
}
