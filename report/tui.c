/*
 * tui.c - the model of `callprof tui` (tui.h): visible rows, expanded
 * contexts, the function lists and the search; tui/browser.c draws it.
 */
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"
#include "report/tui.h"
#include "util/util.h"

#define ROOT 0u

static const struct cp_rtree *tree_of(const struct cp_tui *t)
{
	return &t->rp->trees[t->tree];
}

static void node_figures(const struct cp_rnode *n, struct cp_figures *f)
{
	f->calls = n->calls;
	f->total_ns = n->total_ns;
	f->self_ns = n->self_ns;
	f->wait_ns = n->wait_ns;
	f->inactive_ns = n->inactive_ns;
	f->self_wait_ns = n->self_wait_ns;
	f->self_inactive_ns = n->self_inactive_ns;
	f->samples = n->samples;
	f->self_samples = n->self_samples;
}

/*
 * The visible descendants of node (children of open contexts, down from
 * it), in preorder: written to out unless NULL; their number.  Nothing
 * unless node is open.
 */
static uint32_t walk_visible(const struct cp_tui *t, uint32_t node, uint32_t *out)
{
	const struct cp_rnode *n = tree_of(t)->n;
	uint32_t c, cnt = 0;

	if (!t->open[node] || n[node].first_child == CP_NONE)
		return 0;
	c = n[node].first_child;
	for (;;) {
		if (out)
			out[cnt] = c;
		cnt++;
		if (t->open[c] && n[c].first_child != CP_NONE) {
			c = n[c].first_child;
			continue;
		}
		while (c != node && n[c].next == CP_NONE)
			c = n[c].parent;
		if (c == node)
			break;
		c = n[c].next;
	}
	return cnt;
}

static int grow_rows(struct cp_tui *t, uint32_t want)
{
	uint32_t *r;
	uint32_t alloc;

	if (want <= t->rows_alloc)
		return 0;
	alloc = t->rows_alloc ? t->rows_alloc : 256;
	while (alloc < want)
		alloc = alloc > UINT32_MAX / 2 ? want : alloc * 2;
	r = realloc(t->rows, (size_t)alloc * sizeof(*r));
	if (!r)
		return -1;
	t->rows = r;
	t->rows_alloc = alloc;
	return 0;
}

/* Rebuild the tree's rows from the open flags (init, metric change, collapse all). */
static int rebuild(struct cp_tui *t)
{
	t->open[ROOT] = 1;
	/* At most every node but the root: one walk instead of counting first. */
	if (grow_rows(t, tree_of(t)->nn))
		return -1;
	t->nrows = walk_visible(t, ROOT, t->rows);
	return 0;
}

static uint32_t find_row(const struct cp_tui *t, uint32_t from, uint32_t node)
{
	uint32_t i;

	for (i = from; i < t->nrows; i++)
		if (t->rows[i] == node)
			return i;
	return CP_NONE;
}

static void free_search(struct cp_tui *t)
{
	cp_name_pattern__free(t->glob);
	t->glob = NULL;
	free(t->pattern);
	free(t->matches);
	t->pattern = NULL;
	t->matches = NULL;
	t->nmatches = 0;
	t->cur_match = CP_NONE;
}

/* Diff mode: how much m changed at node i of t's tree, |B - A|. */
static uint64_t change_at(const struct cp_tui *t, uint32_t i, enum cp_metric m)
{
	uint64_t b = cp_rnode__metric(&tree_of(t)->n[i], m), a = cp_figures__metric(&t->side[i], m);

	return b > a ? b - a : a - b;
}

/* qsort_r order of sibling node indexes in diff mode: the largest change of m first, then the
 * larger B, then the report's order (name, address, call site). */
struct diff_order {
	const struct cp_tui *t;
	enum cp_metric m;
};

static int cmp_change(const void *pa, const void *pb, void *arg)
{
	const struct diff_order *o = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	uint64_t ca = change_at(o->t, a, o->m), cb = change_at(o->t, b, o->m);

	if (ca != cb)
		return ca > cb ? -1 : 1;
	return cp_rnode_cmp(o->t->rp, &tree_of(o->t)->n[a], &tree_of(o->t)->n[b],
			    (enum cp_sort_key)o->m);
}

/*
 * Order every context's children by m: by its value (the profile's own order), or in diff mode
 * by its change, so that the first child is the one that moved most.
 */
static void order_children(struct cp_tui *t, enum cp_metric m)
{
	struct diff_order o = { t, m };

	if (t->side)
		cp_rtree__sort_children(&t->rp->trees[t->tree], cmp_change, &o);
	else
		cp_report_profile__sort(t->rp, (enum cp_sort_key)m);
}

int cp_tui__init(struct cp_tui *t, struct cp_report_profile *rp, uint32_t tree, enum cp_metric m,
		 int sorted, const struct cp_figures *side)
{
	const struct cp_rnode *n;
	uint32_t x;

	memset(t, 0, sizeof(*t));
	t->rp = rp;
	t->side = side;
	t->tree = tree;
	t->metric = m;
	t->cur_match = CP_NONE;
	t->subject = CP_NONE;
	if (!sorted || side)
		order_children(t, m);
	t->open = calloc(tree_of(t)->nn ? tree_of(t)->nn : 1, 1);
	if (!t->open)
		return -1;
	/*
	 * The hottest path: the largest child by m, down to a leaf.  In diff mode the path to the
	 * largest change: the first child (ordered so), down to where nothing below changed.
	 */
	n = tree_of(t)->n;
	x = ROOT;
	while (tree_of(t)->nn && n[x].first_child != CP_NONE) {
		uint32_t c, best = n[x].first_child;

		if (side && !change_at(t, best, m))
			break;
		t->open[x] = 1;
		for (c = n[best].next; !side && c != CP_NONE; c = n[c].next)
			if (cp_rnode__metric(&n[c], m) > cp_rnode__metric(&n[best], m))
				best = c;
		x = best;
	}
	if (!tree_of(t)->nn)
		return 0;
	return rebuild(t);
}

void cp_tui__release(struct cp_tui *t)
{
	free(t->rows);
	free(t->open);
	free(t->list);
	free(t->imb);
	free_search(t);
	memset(t, 0, sizeof(*t));
}

static int cmp_fnrow(const struct cp_tui *t, const struct cp_tui_fnrow *a,
		     const struct cp_tui_fnrow *b)
{
	enum cp_metric m = t->metric, key = CP_METRIC_NR;
	uint64_t va, vb;
	const char *na, *nb;

	switch (t->view == CP_TUI_FLAT ? t->sort : CP_TUI_SORT_INCL) {
	case CP_TUI_SORT_INCL:
		key = cp_metric__inclusive(m);
		break;
	case CP_TUI_SORT_SELF:
		key = cp_metric__exclusive(m);
		break;
	case CP_TUI_SORT_CALLS:
		key = CP_METRIC_CALLS;
		break;
	default:
		break;
	}
	if (key != CP_METRIC_NR) {
		va = cp_figures__metric(&a->fig, key);
		vb = cp_figures__metric(&b->fig, key);
		if (t->side) { /* diff mode: by change first, then as otherwise */
			uint64_t sa = cp_figures__metric(&a->side, key);
			uint64_t sb = cp_figures__metric(&b->side, key);
			uint64_t ca = va > sa ? va - sa : sa - va, cb = vb > sb ? vb - sb : sb - vb;

			if (ca != cb)
				return ca > cb ? -1 : 1;
		}
		if (va != vb)
			return va > vb ? -1 : 1;
	}
	na = t->rp->fns[a->fn].name ? t->rp->fns[a->fn].name : "";
	nb = t->rp->fns[b->fn].name ? t->rp->fns[b->fn].name : "";
	return strcmp(na, nb);
}

static int cmp_fnrow_r(const void *a, const void *b, void *ctx)
{
	return cmp_fnrow(ctx, a, b);
}

static void sort_list(struct cp_tui *t)
{
	/* The imbalance view keeps report --imbalance's order, whatever the metric. */
	if (t->nlist && t->view != CP_TUI_IMBALANCE)
		qsort_r(t->list, t->nlist, sizeof(*t->list), cmp_fnrow_r, t);
}

/*
 * Go to a list view (its rows made already) from wherever t was: the
 * tree's selection kept for the way back, the list shown from its top.
 */
static void enter_list(struct cp_tui *t, enum cp_tui_view view, uint32_t subject)
{
	if (t->view == CP_TUI_TREE)
		t->tree_sel = t->sel;
	t->view = view;
	t->subject = subject;
	t->sel = 0;
	t->top = 0;
	free_search(t);
}

/* The node of the tree's selected row (kept while a list shows), CP_NONE if it has none. */
static uint32_t selected_node(const struct cp_tui *t)
{
	uint32_t r = t->view == CP_TUI_TREE ? t->sel : t->tree_sel;

	return r < t->nrows ? t->rows[r] : CP_NONE;
}

int cp_tui__set_metric(struct cp_tui *t, enum cp_metric m)
{
	uint32_t node = selected_node(t);
	uint32_t r;

	t->metric = m;
	order_children(t, m);
	if (tree_of(t)->nn && rebuild(t))
		return -1;
	r = node == CP_NONE ? CP_NONE : find_row(t, 0, node);
	if (t->view == CP_TUI_TREE)
		t->sel = r == CP_NONE ? 0 : r;
	else
		t->tree_sel = r == CP_NONE ? 0 : r;
	sort_list(t);
	if (t->pattern) {
		char *p = t->pattern;

		t->pattern = NULL;
		cp_tui__search(t, p);
		free(p);
	}
	return 0;
}

uint32_t cp_tui__nrows(const struct cp_tui *t)
{
	return t->view == CP_TUI_TREE ? t->nrows : t->nlist;
}

/*
 * Whether r is a row of the current view.  Every function taking a row
 * asks first: a view can have no rows at all (a thread's tree that a focus
 * left empty), and a key can come with the selection of the view before.
 */
static int is_row(const struct cp_tui *t, uint32_t r)
{
	return r < cp_tui__nrows(t);
}

const struct cp_rnode *cp_tui__node(const struct cp_tui *t, uint32_t r)
{
	return t->view == CP_TUI_TREE && is_row(t, r) ? &tree_of(t)->n[t->rows[r]] : NULL;
}

int cp_tui__has_children(const struct cp_tui *t, uint32_t r)
{
	return t->view == CP_TUI_TREE && is_row(t, r) &&
	       tree_of(t)->n[t->rows[r]].first_child != CP_NONE;
}

int cp_tui__is_open(const struct cp_tui *t, uint32_t r)
{
	return t->view == CP_TUI_TREE && is_row(t, r) && t->open[t->rows[r]];
}

void cp_tui__figures(const struct cp_tui *t, uint32_t r, struct cp_figures *f)
{
	if (!is_row(t, r))
		memset(f, 0, sizeof(*f));
	else if (t->view == CP_TUI_TREE)
		node_figures(&tree_of(t)->n[t->rows[r]], f);
	else
		*f = t->list[r].fig;
}

const char *cp_tui__name(const struct cp_tui *t, uint32_t r)
{
	const char *s;

	if (!is_row(t, r))
		s = NULL;
	else if (t->view == CP_TUI_TREE)
		s = cp_rnode__name(t->rp, &tree_of(t)->n[t->rows[r]]);
	else
		s = t->rp->fns[t->list[r].fn].name;
	return s ? s : "?";
}

uint32_t cp_tui__depth(const struct cp_tui *t, uint32_t r)
{
	if (!is_row(t, r))
		return 0;
	return t->view == CP_TUI_TREE ? tree_of(t)->n[t->rows[r]].depth : 1;
}

uint64_t cp_tui__whole(const struct cp_tui *t)
{
	struct cp_figures f;

	if (!tree_of(t)->nn)
		return 0;
	node_figures(&tree_of(t)->n[ROOT], &f);
	return cp_figures__metric(&f, cp_metric__inclusive(t->metric));
}

int cp_tui__expand(struct cp_tui *t, uint32_t r)
{
	uint32_t node, cnt;

	if (t->view != CP_TUI_TREE || r >= t->nrows)
		return 0;
	node = t->rows[r];
	if (t->open[node] || tree_of(t)->n[node].first_child == CP_NONE)
		return 0;
	t->open[node] = 1;
	cnt = walk_visible(t, node, NULL);
	if (grow_rows(t, t->nrows + cnt)) {
		t->open[node] = 0;
		return -1;
	}
	memmove(t->rows + r + 1 + cnt, t->rows + r + 1,
		(size_t)(t->nrows - r - 1) * sizeof(*t->rows));
	walk_visible(t, node, t->rows + r + 1);
	t->nrows += cnt;
	if (t->sel > r)
		t->sel += cnt;
	return 0;
}

void cp_tui__collapse(struct cp_tui *t, uint32_t r)
{
	const struct cp_rnode *n = tree_of(t)->n;
	uint32_t node, end, cnt;

	if (t->view != CP_TUI_TREE || r >= t->nrows)
		return;
	node = t->rows[r];
	if (!t->open[node])
		return;
	for (end = r + 1; end < t->nrows && n[t->rows[end]].depth > n[node].depth; end++)
		;
	cnt = end - r - 1;
	memmove(t->rows + r + 1, t->rows + end, (size_t)(t->nrows - end) * sizeof(*t->rows));
	t->nrows -= cnt;
	t->open[node] = 0;
	if (t->sel > r)
		t->sel = t->sel < end ? r : t->sel - cnt;
}

int cp_tui__expand_all(struct cp_tui *t, uint32_t r, uint32_t limit)
{
	const struct cp_rnode *n = tree_of(t)->n;
	uint32_t node, c, cnt = 0;

	if (t->view != CP_TUI_TREE || r >= t->nrows)
		return 0;
	node = t->rows[r];
	if (n[node].first_child == CP_NONE)
		return 0;
	cp_tui__collapse(t, r);
	/*
	 * Open the subtree in preorder while fewer than limit rows are
	 * visible; after that, close what is reached, so the rows added
	 * are limit plus the rest of the open contexts' children.
	 */
	c = n[node].first_child;
	for (;;) {
		cnt++;
		if (cnt < limit && n[c].first_child != CP_NONE) {
			t->open[c] = 1;
			c = n[c].first_child;
			continue;
		}
		t->open[c] = 0;
		while (c != node && n[c].next == CP_NONE)
			c = n[c].parent;
		if (c == node)
			break;
		c = n[c].next;
	}
	return cp_tui__expand(t, r);
}

void cp_tui__collapse_all(struct cp_tui *t)
{
	uint32_t node;

	if (!tree_of(t)->nn)
		return;
	node = selected_node(t);
	memset(t->open, 0, tree_of(t)->nn);
	rebuild(t); /* shrinks: cannot fail */
	/* The selection goes to the top-level context it was under. */
	if (node != CP_NONE) {
		const struct cp_rnode *n = tree_of(t)->n;
		uint32_t r;

		while (n[node].parent != ROOT && n[node].parent != CP_NONE)
			node = n[node].parent;
		r = find_row(t, 0, node);
		node = r == CP_NONE ? 0 : r;
	} else {
		node = 0;
	}
	if (t->view == CP_TUI_TREE)
		t->sel = node;
	else
		t->tree_sel = node;
	t->top = 0;
}

uint32_t cp_tui__parent_row(const struct cp_tui *t, uint32_t r)
{
	uint32_t p, i;

	if (t->view != CP_TUI_TREE || r >= t->nrows)
		return r;
	p = tree_of(t)->n[t->rows[r]].parent;
	if (p == ROOT || p == CP_NONE)
		return r;
	for (i = r; i-- > 0;)
		if (t->rows[i] == p)
			return i;
	return r;
}

uint32_t cp_tui__reveal(struct cp_tui *t, uint32_t node)
{
	const struct cp_rnode *n = tree_of(t)->n;
	uint32_t *path, depth = 0, x, i, r = 0;

	if (node == ROOT || node >= tree_of(t)->nn)
		return CP_NONE;
	for (x = node; x != ROOT && x != CP_NONE; x = n[x].parent)
		depth++;
	path = malloc((size_t)depth * sizeof(*path));
	if (!path)
		return CP_NONE;
	i = depth;
	for (x = node; x != ROOT && x != CP_NONE; x = n[x].parent)
		path[--i] = x;
	/* Top-down: each ancestor's row comes after its own ancestor's. */
	for (i = 0; i < depth; i++) {
		r = find_row(t, r, path[i]);
		if (r == CP_NONE)
			break;
		if (i + 1 < depth && cp_tui__expand(t, r))
			break;
	}
	free(path);
	if (r != CP_NONE && i == depth)
		t->sel = r;
	return i == depth ? r : CP_NONE;
}

/* The list rows of fn, through a map from function to row made on demand. */
static struct cp_tui_fnrow *list_row(struct cp_tui *t, uint32_t *map, uint32_t fn)
{
	if (map[fn] == CP_NONE) {
		map[fn] = t->nlist++;
		memset(&t->list[map[fn]], 0, sizeof(*t->list));
		t->list[map[fn]].fn = fn;
		t->list[map[fn]].first = CP_NONE;
	}
	return &t->list[map[fn]];
}

static void add_self(struct cp_figures *f, const struct cp_figures *g)
{
	f->calls += g->calls;
	f->self_ns += g->self_ns;
	f->self_wait_ns += g->self_wait_ns;
	f->self_inactive_ns += g->self_inactive_ns;
	f->self_samples += g->self_samples;
}

static void add_incl(struct cp_figures *f, const struct cp_figures *g)
{
	f->total_ns += g->total_ns;
	f->wait_ns += g->wait_ns;
	f->inactive_ns += g->inactive_ns;
	f->samples += g->samples;
}

/*
 * The list of kind view: every function of the tree (flat: its calls and
 * self figures summed over its contexts, its inclusive ones over those
 * not inside another of its own), the callers of fn (the figures of fn's
 * contexts under each) or its callees (their contexts under fn's).  Each
 * row's first context in preorder, for jumps to the tree.
 */
static int make_list(struct cp_tui *t, enum cp_tui_view view, uint32_t fn)
{
	const struct cp_rtree *tr = tree_of(t);
	const struct cp_rnode *n = tr->n;
	uint32_t *map, *active, c, nf = t->rp->nfns;
	struct cp_tui_fnrow *list;
	struct cp_figures g;

	list = calloc(nf ? nf : 1, sizeof(*list));
	map = malloc((nf ? nf : 1) * sizeof(*map));
	active = calloc(nf ? nf : 1, sizeof(*active));
	if (!list || !map || !active) {
		free(list);
		free(map);
		free(active);
		return -1;
	}
	memset(map, 0xff, (nf ? nf : 1) * sizeof(*map));
	free(t->list);
	t->list = list;
	t->nlist = 0;
	c = tr->nn ? n[ROOT].first_child : CP_NONE;
	while (c != CP_NONE) {
		uint32_t f = n[c].fn;
		struct cp_tui_fnrow *row = NULL;

		node_figures(&n[c], &g);
		if (view == CP_TUI_FLAT && f != CP_NONE) {
			row = list_row(t, map, f);
			add_self(&row->fig, &g);
			if (t->side)
				add_self(&row->side, &t->side[c]);
			if (!active[f]) {
				add_incl(&row->fig, &g);
				if (t->side)
					add_incl(&row->side, &t->side[c]);
			}
		} else if (view == CP_TUI_CALLERS && f == fn && n[c].parent != ROOT &&
			   n[n[c].parent].fn != CP_NONE) {
			row = list_row(t, map, n[n[c].parent].fn);
			if (row->first == CP_NONE)
				row->first = n[c].parent;
		} else if (view == CP_TUI_CALLEES && f != CP_NONE && n[c].parent != ROOT &&
			   n[n[c].parent].fn == fn) {
			row = list_row(t, map, f);
		}
		if (row && view != CP_TUI_FLAT) {
			add_self(&row->fig, &g);
			add_incl(&row->fig, &g);
			if (t->side) {
				add_self(&row->side, &t->side[c]);
				add_incl(&row->side, &t->side[c]);
			}
		}
		if (row && row->first == CP_NONE)
			row->first = c;
		if (f != CP_NONE)
			active[f]++;
		if (n[c].first_child != CP_NONE) {
			c = n[c].first_child;
			continue;
		}
		for (;;) {
			if (n[c].fn != CP_NONE)
				active[n[c].fn]--;
			if (n[c].next != CP_NONE) {
				c = n[c].next;
				break;
			}
			c = n[c].parent;
			if (c == ROOT || c == CP_NONE) {
				c = CP_NONE;
				break;
			}
		}
	}
	free(map);
	free(active);
	enter_list(t, view, fn);
	sort_list(t);
	return 0;
}

int cp_tui__flat(struct cp_tui *t)
{
	return make_list(t, CP_TUI_FLAT, CP_NONE);
}

int cp_tui__callers(struct cp_tui *t, uint32_t fn)
{
	return fn == CP_NONE ? -1 : make_list(t, CP_TUI_CALLERS, fn);
}

int cp_tui__callees(struct cp_tui *t, uint32_t fn)
{
	return fn == CP_NONE ? -1 : make_list(t, CP_TUI_CALLEES, fn);
}

int cp_tui__imbalance(struct cp_tui *t)
{
	struct cp_imbalance_row *rows;
	struct cp_tui_fnrow *list;
	uint32_t n, unknown;
	uint64_t whole;

	if (t->side || t->tree != 0 || !cp_imbalance_available(t->rp))
		return 1;
	cp_imbalance_rank(t->rp, &rows, &n, &unknown, &whole);
	if (!n && unknown) {
		free(rows);
		return 1;
	}
	list = xcalloc(n ? n : 1, sizeof(*list));
	for (uint32_t r = 0; r < n; r++) {
		const struct cp_rnode *c = &tree_of(t)->n[rows[r].node];

		list[r].fn = c->fn;
		list[r].first = rows[r].node;
		node_figures(c, &list[r].fig);
	}
	free(t->list);
	free(t->imb);
	t->list = list;
	t->nlist = n;
	t->imb = rows;
	t->imb_whole = whole;
	enter_list(t, CP_TUI_IMBALANCE, CP_NONE);
	return 0;
}

const struct cp_imbalance_row *cp_tui__imbalance_row(const struct cp_tui *t, uint32_t r)
{
	return t->view == CP_TUI_IMBALANCE && is_row(t, r) ? &t->imb[r] : NULL;
}

void cp_tui__tree(struct cp_tui *t)
{
	if (t->view == CP_TUI_TREE)
		return;
	t->view = CP_TUI_TREE;
	t->sel = t->tree_sel;
	free_search(t);
}

void cp_tui__cycle_sort(struct cp_tui *t)
{
	if (t->view != CP_TUI_FLAT)
		return;
	t->sort = (enum cp_tui_sort)((t->sort + 1) % CP_TUI_SORT_NR);
	sort_list(t);
	t->sel = 0;
	t->top = 0;
}

uint32_t cp_tui__fn(const struct cp_tui *t, uint32_t r)
{
	if (r >= cp_tui__nrows(t))
		return CP_NONE;
	return t->view == CP_TUI_TREE ? tree_of(t)->n[t->rows[r]].fn : t->list[r].fn;
}

/*
 * A search finds a substring of a name, or, given glob characters, what
 * the glob names as every option that names a function (names.c).
 */
static int name_matches(const struct cp_tui *t, const char *name)
{
	const char *pattern = t->pattern;

	if (!name || !pattern || !*pattern)
		return 0;
	return t->glob ? cp_name_pattern__rank(t->glob, name) != CP_NAME_NONE :
			 strstr(name, pattern) != NULL;
}

/* The next match (cp_tui__next_match(t, 1)) is match k: the first at or after the selection. */
static void start_at(struct cp_tui *t, uint32_t k)
{
	t->cur_match = k == 0 || !t->nmatches ? CP_NONE : (k - 1) % t->nmatches;
}

uint32_t cp_tui__search(struct cp_tui *t, const char *pattern)
{
	uint32_t cap = 0, i, after = 0; /* after: the matches before the selection */

	free_search(t);
	if (!pattern || !*pattern)
		return 0;
	t->pattern = strdup(pattern);
	if (!t->pattern)
		return 0;
	if (strpbrk(pattern, "*?["))
		t->glob = cp_name_pattern__new(pattern, 0, NULL, 0);
	if (t->view == CP_TUI_TREE) {
		const struct cp_rnode *n = tree_of(t)->n;
		uint32_t c = tree_of(t)->nn ? n[ROOT].first_child : CP_NONE;
		uint32_t sel = t->sel < t->nrows ? t->rows[t->sel] : CP_NONE;

		while (c != CP_NONE) {
			if (c == sel)
				after = t->nmatches;
			if (name_matches(t, cp_rnode__name(t->rp, &n[c]))) {
				if (t->nmatches == cap) {
					uint32_t *m;

					cap = cap ? cap * 2 : 64;
					m = realloc(t->matches, cap * sizeof(*m));
					if (!m)
						break;
					t->matches = m;
				}
				t->matches[t->nmatches++] = c;
			}
			if (n[c].first_child != CP_NONE) {
				c = n[c].first_child;
				continue;
			}
			while (c != ROOT && n[c].next == CP_NONE)
				c = n[c].parent;
			c = c == ROOT ? CP_NONE : n[c].next;
		}
		start_at(t, after);
		return t->nmatches;
	}
	t->matches = malloc((t->nlist ? t->nlist : 1) * sizeof(*t->matches));
	if (!t->matches)
		return 0;
	for (i = 0; i < t->nlist; i++) {
		if (i == t->sel)
			after = t->nmatches;
		if (name_matches(t, cp_tui__name(t, i)))
			t->matches[t->nmatches++] = i;
	}
	start_at(t, after);
	return t->nmatches;
}

int cp_tui__next_match(struct cp_tui *t, int dir)
{
	if (!t->nmatches)
		return -1;
	if (t->cur_match == CP_NONE)
		t->cur_match = dir > 0 ? 0 : t->nmatches - 1;
	else if (dir > 0)
		t->cur_match = (t->cur_match + 1) % t->nmatches;
	else
		t->cur_match = (t->cur_match + t->nmatches - 1) % t->nmatches;
	if (t->view == CP_TUI_TREE)
		return cp_tui__reveal(t, t->matches[t->cur_match]) == CP_NONE ? -1 : 0;
	t->sel = t->matches[t->cur_match];
	return 0;
}

int cp_tui__row_matches(const struct cp_tui *t, uint32_t r)
{
	return t->pattern && name_matches(t, cp_tui__name(t, r));
}

void cp_tui__clamp(struct cp_tui *t, uint32_t height)
{
	uint32_t nr = cp_tui__nrows(t);

	if (!height)
		height = 1;
	if (!nr) {
		t->sel = t->top = 0;
		return;
	}
	if (t->sel >= nr)
		t->sel = nr - 1;
	if (t->sel < t->top)
		t->top = t->sel;
	if (t->sel >= t->top + height)
		t->top = t->sel - height + 1;
	if (t->top + height > nr)
		t->top = nr > height ? nr - height : 0;
}

void cp_tui__side_figures(const struct cp_tui *t, uint32_t r, struct cp_figures *f)
{
	memset(f, 0, sizeof(*f));
	if (!t->side || r >= cp_tui__nrows(t))
		return;
	if (t->view == CP_TUI_TREE)
		*f = t->side[t->rows[r]];
	else
		*f = t->list[r].side;
}

/* Add node n's figures to f. */
static void add_node(struct cp_figures *f, const struct cp_rnode *n)
{
	struct cp_figures g;

	node_figures(n, &g);
	add_self(f, &g);
	add_incl(f, &g);
}

void cp_tui__diff_free(struct cp_report_profile *rp, struct cp_figures *side)
{
	free(side);
	if (!rp)
		return;
	for (uint32_t i = 0; i < rp->nfns; i++)
		free((char *)rp->fns[i].name);
	free(rp->fns);
	if (rp->trees) {
		free(rp->trees[0].n);
		free(rp->trees[0].label);
	}
	free(rp->trees);
	free(rp);
}

struct cp_report_profile *cp_tui__diff_profile(const struct cp_report_profile *a,
					       const struct cp_report_profile *b,
					       struct cp_figures **side)
{
	const struct cp_report_profile *in[2] = { a, b };
	struct cp_report_profile *rp = calloc(1, sizeof(*rp));
	struct cp_strtab names = { 0 };
	struct cp_u64map paths;
	struct cp_figures *sd = NULL;
	struct cp_rnode *n = NULL;
	uint32_t nn = 1, alloc = 0, *fname = NULL, *map = NULL, naddr_n = 0;
	uint64_t *naddr = NULL;

	*side = NULL;
	if (!rp)
		return NULL;
	rp->trees = calloc(1, sizeof(*rp->trees));
	if (!rp->trees) {
		free(rp);
		return NULL;
	}
	cp_u64map__init(&paths, (uint64_t)a->trees[0].nn + b->trees[0].nn);
	alloc = 1024;
	n = calloc(alloc, sizeof(*n));
	sd = calloc(alloc, sizeof(*sd));
	if (!n || !sd)
		goto fail;
	n[0].fn = CP_NONE;
	n[0].parent = CP_NONE;
	n[0].first_child = CP_NONE;
	n[0].next = CP_NONE;
	n[0].sites = CP_NONE;
	for (int s = 0; s < 2; s++) {
		const struct cp_rtree *t = &in[s]->trees[0];

		fname = malloc((in[s]->nfns ? in[s]->nfns : 1) * sizeof(*fname));
		map = malloc((t->nn ? t->nn : 1) * sizeof(*map));
		if (!fname || !map)
			goto fail;
		for (uint32_t f = 0; f < in[s]->nfns; f++)
			fname[f] = cp_strtab__add(&names,
						  in[s]->fns[f].name ? in[s]->fns[f].name : "?");
		/* Each name keeps the address of its first function (ties in the sort). */
		if (names.n > naddr_n) {
			uint64_t *na = realloc(naddr, names.n * sizeof(*na));

			if (!na)
				goto fail;
			memset(na + naddr_n, 0, (names.n - naddr_n) * sizeof(*na));
			naddr = na;
			naddr_n = names.n;
		}
		for (uint32_t f = 0; f < in[s]->nfns; f++)
			if (!naddr[fname[f]])
				naddr[fname[f]] = in[s]->fns[f].addr;
		if (s == 1 && t->nn) {
			if (a->trees[0].nn)
				add_node(&sd[0], &a->trees[0].n[0]);
			n[0].calls = t->n[0].calls;
			n[0].total_ns = t->n[0].total_ns;
			n[0].self_ns = t->n[0].self_ns;
			n[0].wait_ns = t->n[0].wait_ns;
			n[0].inactive_ns = t->n[0].inactive_ns;
			n[0].self_wait_ns = t->n[0].self_wait_ns;
			n[0].self_inactive_ns = t->n[0].self_inactive_ns;
			n[0].samples = t->n[0].samples;
			n[0].self_samples = t->n[0].self_samples;
		}
		map[0] = ROOT;
		/* Children come after their parents in a loaded tree. */
		for (uint32_t i = 1; i < t->nn; i++) {
			const struct cp_rnode *x = &t->n[i];
			uint32_t p = map[x->parent], k;

			k = cp_u64map__get_or_add(&paths, (uint64_t)p << 32 | fname[x->fn], nn);
			if (k == nn) {
				if (nn == alloc) {
					struct cp_rnode *nn2;
					struct cp_figures *sd2;

					alloc *= 2;
					nn2 = realloc(n, (size_t)alloc * sizeof(*n));
					if (!nn2)
						goto fail;
					n = nn2;
					sd2 = realloc(sd, (size_t)alloc * sizeof(*sd));
					if (!sd2)
						goto fail;
					sd = sd2;
				}
				memset(&n[nn], 0, sizeof(*n));
				memset(&sd[nn], 0, sizeof(*sd));
				n[nn].fn = fname[x->fn];
				n[nn].parent = p;
				n[nn].depth = n[p].depth + 1;
				n[nn].first_child = CP_NONE;
				n[nn].sites = CP_NONE;
				n[nn].next = n[p].first_child;
				n[p].first_child = nn;
				nn++;
			}
			if (s == 0) {
				add_node(&sd[k], x);
			} else {
				cp_add_sat(&n[k].calls, x->calls);
				cp_add_sat(&n[k].total_ns, x->total_ns);
				cp_add_sat(&n[k].self_ns, x->self_ns);
				cp_add_sat(&n[k].wait_ns, x->wait_ns);
				cp_add_sat(&n[k].inactive_ns, x->inactive_ns);
				cp_add_sat(&n[k].self_wait_ns, x->self_wait_ns);
				cp_add_sat(&n[k].self_inactive_ns, x->self_inactive_ns);
				cp_add_sat(&n[k].samples, x->samples);
				cp_add_sat(&n[k].self_samples, x->self_samples);
			}
			map[i] = k;
		}
		free(fname);
		free(map);
		fname = map = NULL;
	}
	rp->fns = calloc(names.n ? names.n : 1, sizeof(*rp->fns));
	if (!rp->fns)
		goto fail;
	for (uint32_t f = 0; f < names.n; f++) {
		rp->fns[f].name = strdup(names.s[f]);
		rp->fns[f].addr = naddr[f];
		rp->nfns = f + 1;
		if (!rp->fns[f].name)
			goto fail;
	}
	rp->trees[0].n = n;
	rp->trees[0].nn = nn;
	rp->trees[0].alloc = alloc;
	rp->trees[0].nthreads = b->ntrees ? b->trees[0].nthreads : 0;
	rp->trees[0].label = strdup("all threads");
	rp->ntrees = 1;
	rp->pf = b->pf;
	rp->threads = CP_THREADS_MERGED;
	rp->timed = a->timed && b->timed;
	rp->split = a->split && b->split;
	rp->cpu_sampled = a->cpu_sampled && b->cpu_sampled;
	rp->calls = b->calls;
	rp->paths = nn - 1;
	cp_strtab__release(&names);
	cp_u64map__release(&paths);
	free(naddr);
	*side = sd;
	return rp;
fail:
	free(fname);
	free(map);
	free(naddr);
	cp_strtab__release(&names);
	cp_u64map__release(&paths);
	rp->trees[0].n = n;
	cp_tui__diff_free(rp, sd);
	return NULL;
}
