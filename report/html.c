/*
 * html.c - `export -f html`: one self-contained, interactive HTML page (a
 * flame/icicle graph on a <canvas>, search, a sortable call tree and flat
 * profile, callers and callees, the run's facts), for reading a profile in
 * a browser with no network and nothing installed.
 *
 * The page's HTML, CSS and JavaScript are real source files under
 * report/html/, built into the binary by report/html/assets.S (.incbin);
 * this file fills the page template's @TITLE@, @CSS@, @DATA@ and @JS@ and
 * writes the profile as JSON into <script type="application/json"
 * id="profile">, through the json writer's HTML mode (no '<' in it, so no
 * name can close the element).  The JSON is made for the page, not for
 * scripts (that is `-f json`), and kept compact: per tree one array per
 * metric, indexed by node:
 *
 *   {"callprof_html": 2, "file": PATH,
 *    "threads_mode": "merged"|"each" (the view the page opens with),
 *    "timed": BOOL, "split": BOOL, "sampled": BOOL, "cpu_sampled": BOOL,
 *    "calls": N, "paths": N,
 *    "weight": the metric the page weighs by first ("total", "cpu", "calls", ...),
 *    "time_source": {as -f json's},
 *    "processes": [as -f json's "processes"],
 *    "compensation": {"applied", "calibrated", "caller_ns_per_call",
 *                     "callee_ns_per_call", "raw_ns", "subtracted_ns"},
 *    "strings": [module paths and source files],
 *    "functions": {"name": [...], "module": [string index or -1],
 *                  "file": [string index or -1], "line": [0 if unknown],
 *                  "signal": [1 for a signal handler's run, else 0]},
 *    "inputs": [a merged profile's inputs: "rank N" or "input I (PATH)"],
 *    "trees": [the tree of all threads merged, as `report` adds them up],
 *    "thread_trees": [a tree per thread; empty with one thread]}
 *    (a caller that has only the threads' trees writes "trees": [])
 *
 * where a tree is
 *
 *   {"label", "tid", "threads",
 *    "parent": [node index, -1 for the root],
 *    "fn": [function index, -1 for the root],
 *    "calls": [...],
 *    timed only: "total", "self", "min", "max": [ns ...]
 *      (cpu_sampled: no "min" and "max", not measured; "samples",
 *      "self_samples": [the samples the times rest on]),
 *    compensated only: "overhead": [1: total mostly hook overhead,
 *      2: self mostly overhead, 3: both],
 *    off-CPU time measured ("split": true) only: "wait", "inactive"
 *      (inclusive), "self_wait", "self_inactive",
 *    a node with calls open at attach (callprof attach) only: "open": [the
 *      calls open then, not in "calls"],
 *    the merged tree of a merged profile with the per-input distribution
 *      only: "imbalance": {"of": "self CPU time"|"calls", "whole": what
 *      imb% is a share of, "unknown": contexts without the distribution,
 *      and per row of `report --imbalance`, in its order: "node", "value",
 *      "mean", "stddev", "min", "max", "max_in", "min_in" (index into
 *      "inputs")}}
 *
 * Both the merged tree and the threads' trees come from callprof itself
 * (the page does not add trees up: compensation and rounding are per
 * tree), so the page's thread switch shows what `report --threads=each`
 * prints without exporting again; a profile of one thread carries one tree.
 *
 * Nodes are in depth-first order with children by name (the order of the
 * SVG export), so a node's subtree is the range that follows it and its
 * children come in drawing order.  The JSON's own version, callprof_html,
 * changes with the page: both are written together.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/json.h"
#include "report/report.h"
#include "util/text.h"
#include "util/util.h"

#define HTML_VERSION 2

/* report/html/assets.S: the files themselves, NUL-terminated. */
extern const char cp_html_page[], cp_html_css[], cp_html_js[];

/* The index of s (a module or source file) in the page's strings, -1 for none. */
static int64_t string_index(struct cp_strtab *st, const char *s)
{
	return s ? (int64_t)cp_strtab__add(st, s) : -1;
}

/*
 * Tree t's nodes in depth-first order, children in their sibling order,
 * without recursion (trees can be a million levels deep).
 */
static uint32_t *preorder(const struct cp_rtree *t)
{
	uint32_t *order = xmalloc(t->nn * sizeof(*order)), k = 0, i = 0;

	for (;;) {
		order[k++] = i;
		if (t->n[i].first_child != CP_NONE) {
			i = t->n[i].first_child;
			continue;
		}
		while (i != 0 && t->n[i].next == CP_NONE)
			i = t->n[i].parent;
		if (i == 0)
			break;
		i = t->n[i].next;
	}
	if (k != t->nn)
		BUG("tree '%s': %u of %u nodes reached", t->label, k, t->nn);
	return order;
}

enum column {
	COL_PARENT, COL_FN, COL_CALLS, COL_TOTAL, COL_SELF, COL_MIN, COL_MAX, COL_OVERHEAD,
	COL_WAIT, COL_INACTIVE, COL_SELF_WAIT, COL_SELF_INACTIVE, COL_SAMPLES, COL_SELF_SAMPLES,
	COL_OPEN
};

static void column(struct cp_json *j, const uint32_t *fnmap, const struct cp_rtree *t,
		   const uint32_t *order, const uint32_t *newid, enum column c)
{
	cp_json__arr(j);
	for (uint32_t k = 0; k < t->nn; k++) {
		const struct cp_rnode *n = &t->n[order[k]];

		switch (c) {
		case COL_PARENT:
			cp_json__i64(j, n->parent == CP_NONE ? -1 : (int64_t)newid[n->parent]);
			break;
		case COL_FN:
			cp_json__i64(j, n->fn == CP_NONE ? -1 :
					       (int64_t)(fnmap ? fnmap[n->fn] : n->fn));
			break;
		case COL_CALLS:
			cp_json__u64(j, n->calls);
			break;
		case COL_TOTAL:
			cp_json__u64(j, n->total_ns);
			break;
		case COL_SELF:
			cp_json__u64(j, n->self_ns);
			break;
		case COL_MIN:
			cp_json__u64(j, n->min_ns);
			break;
		case COL_MAX:
			cp_json__u64(j, n->max_ns);
			break;
		case COL_WAIT:
			cp_json__u64(j, n->wait_ns);
			break;
		case COL_INACTIVE:
			cp_json__u64(j, n->inactive_ns);
			break;
		case COL_SELF_WAIT:
			cp_json__u64(j, n->self_wait_ns);
			break;
		case COL_SELF_INACTIVE:
			cp_json__u64(j, n->self_inactive_ns);
			break;
		case COL_SAMPLES:
			cp_json__u64(j, n->samples);
			break;
		case COL_SELF_SAMPLES:
			cp_json__u64(j, n->self_samples);
			break;
		case COL_OPEN:
			cp_json__u64(j, n->open_at_start);
			break;
		case COL_OVERHEAD:
			cp_json__u64(j, (uint64_t)(cp_mostly_overhead(n->total_ns, n->overhead_ns) |
					 cp_mostly_overhead(n->self_ns, n->self_overhead_ns) << 1));
			break;
		}
	}
	cp_json__end_arr(j);
}

/*
 * A merged profile's imbalance ranking (report --imbalance's rows, all of
 * them, in its order), one array per column, indexed by rank.
 */
static void imbalance(struct cp_json *j, const struct cp_report_profile *rp, const uint32_t *newid)
{
	struct cp_imbalance_row *rows;
	uint32_t nrows, unknown;
	uint64_t whole;
	static const char *const keys[] = { "node", "value", "mean", "stddev", "min", "max",
					    "max_in", "min_in" };

	cp_imbalance_rank(rp, &rows, &nrows, &unknown, &whole);
	cp_json__key(j, "imbalance");
	cp_json__obj(j);
	cp_json__key_str(j, "of", rp->timed ? "self CPU time" : "calls");
	cp_json__key_u64(j, "whole", whole);
	cp_json__key_u64(j, "unknown", unknown);
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		cp_json__key(j, keys[k]);
		cp_json__arr(j);
		for (uint32_t r = 0; r < nrows; r++) {
			const struct cp_imbalance *im = &rows[r].im;

			switch (k) {
			case 0: cp_json__u64(j, newid[rows[r].node]); break;
			case 1: cp_json__u64(j, im->imbalance); break;
			case 2: cp_json__dbl(j, im->mean); break;
			case 3: cp_json__dbl(j, im->stddev); break;
			case 4: cp_json__u64(j, im->min); break;
			case 5: cp_json__u64(j, im->max); break;
			case 6: cp_json__u64(j, im->max_in); break;
			default: cp_json__u64(j, im->min_in); break;
			}
		}
		cp_json__end_arr(j);
	}
	cp_json__end_obj(j);
	free(rows);
}

/* Tree t of rp; fnmap: rp's function indices to the page's (NULL: the same). */
static void tree(struct cp_json *j, const struct cp_report_profile *rp, const uint32_t *fnmap,
		 const struct cp_rtree *t)
{
	static const struct {
		const char *key;
		enum column c;
		/*
		 * Only in a profile with times (2: with the off-CPU split; 3: with
		 * min and max measured; 4: with sampled CPU time).
		 */
		int timed;
	} cols[] = {
		{ "parent", COL_PARENT, 0 }, { "fn", COL_FN, 0 },     { "calls", COL_CALLS, 0 },
		{ "total", COL_TOTAL, 1 },   { "self", COL_SELF, 1 }, { "min", COL_MIN, 3 },
		{ "max", COL_MAX, 3 },	     { "wait", COL_WAIT, 2 }, { "inactive", COL_INACTIVE, 2 },
		{ "self_wait", COL_SELF_WAIT, 2 }, { "self_inactive", COL_SELF_INACTIVE, 2 },
		{ "samples", COL_SAMPLES, 4 },	   { "self_samples", COL_SELF_SAMPLES, 4 },
	};
	uint32_t *order = preorder(t), *newid = xmalloc(t->nn * sizeof(*newid));

	for (uint32_t k = 0; k < t->nn; k++)
		newid[order[k]] = k;
	cp_json__obj(j);
	cp_json__key_str(j, "label", t->label);
	cp_json__key_u64(j, "tid", t->tid);
	cp_json__key_u64(j, "threads", t->nthreads);
	for (size_t c = 0; c < ARRAY_SIZE(cols); c++) {
		if ((cols[c].timed && !rp->timed) || (cols[c].timed == 2 && !rp->split) ||
		    (cols[c].timed == 3 && rp->cpu_sampled) ||
		    (cols[c].timed == 4 && !rp->cpu_sampled))
			continue;
		cp_json__key(j, cols[c].key);
		column(j, fnmap, t, order, newid, cols[c].c);
	}
	if (rp->timed && rp->compensated) {
		cp_json__key(j, "overhead");
		column(j, fnmap, t, order, newid, COL_OVERHEAD);
	}
	if (t == &rp->trees[0] && cp_imbalance_available(rp))
		imbalance(j, rp, newid);
	for (uint32_t k = 0; k < t->nn; k++) {
		if (t->n[k].open_at_start) {
			cp_json__key(j, "open");
			column(j, fnmap, t, order, newid, COL_OPEN);
			break;
		}
	}
	cp_json__end_obj(j);
	free(order);
	free(newid);
}

/*
 * The page's functions: those of rp, then those of the second load (the
 * other thread mode) that rp lacks; both loads read the same files in the
 * same order, so a function is the same (part, kind, address) in both.
 */
struct page_fns {
	uint32_t n;			    /* functions on the page */
	struct cp_report_profile **rp;	    /* per page function: its profile */
	uint32_t *fn;			    /* ... and its index there */
	uint32_t *map;			    /* the second load's functions: their page index */
};

static uint64_t fn_key(const struct cp_rfn *f)
{
	return f->addr ^ ((uint64_t)f->flags << 60);
}

static void page_fns__init(struct page_fns *pf, struct cp_report_profile *rp,
			   struct cp_report_profile *other)
{
	uint32_t nmax = rp->nfns + (other ? other->nfns : 0);
	struct cp_u64map m;

	pf->n = 0;
	pf->rp = xcalloc(nmax + 1, sizeof(*pf->rp));
	pf->fn = xcalloc(nmax + 1, sizeof(*pf->fn));
	pf->map = NULL;
	for (uint32_t f = 0; f < rp->nfns; f++) {
		pf->rp[pf->n] = rp;
		pf->fn[pf->n++] = f;
	}
	if (!other)
		return;
	pf->map = xcalloc(other->nfns + 1, sizeof(*pf->map));
	cp_u64map__init(&m, rp->nfns);
	for (uint32_t f = 0; f < rp->nfns; f++)
		cp_u64map__get_or_add(&m, fn_key(&rp->fns[f]), f);
	for (uint32_t f = 0; f < other->nfns; f++) {
		uint32_t k = cp_u64map__get(&m, fn_key(&other->fns[f]));

		if (k == CP_U64MAP_NONE || strcmp(rp->fns[k].name, other->fns[f].name)) {
			k = pf->n++;
			pf->rp[k] = other;
			pf->fn[k] = f;
		}
		pf->map[f] = k;
	}
	cp_u64map__release(&m);
}

static void page_fns__release(struct page_fns *pf)
{
	free(pf->rp);
	free(pf->fn);
	free(pf->map);
}

static void functions(struct cp_json *j, const struct page_fns *pf)
{
	struct cp_strtab st = { 0 };
	struct cp_fn_where *w = xcalloc(pf->n + 1, sizeof(*w));
	int64_t *module = xcalloc(pf->n + 1, sizeof(*module));
	int64_t *file = xcalloc(pf->n + 1, sizeof(*file));

	for (uint32_t f = 0; f < pf->n; f++) {
		cp_report_profile__fn_where(pf->rp[f], pf->fn[f], &w[f]);
		module[f] = string_index(&st, w[f].module);
		file[f] = string_index(&st, w[f].file);
	}
	cp_json__key(j, "strings");
	cp_json__arr(j);
	for (uint32_t i = 0; i < st.n; i++)
		cp_json__str(j, st.s[i]);
	cp_json__end_arr(j);

	cp_json__key(j, "functions");
	cp_json__obj(j);
	cp_json__key(j, "name");
	cp_json__arr(j);
	for (uint32_t f = 0; f < pf->n; f++)
		cp_json__str(j, pf->rp[f]->fns[pf->fn[f]].name);
	cp_json__end_arr(j);
	cp_json__key(j, "module");
	cp_json__arr(j);
	for (uint32_t f = 0; f < pf->n; f++)
		cp_json__i64(j, module[f]);
	cp_json__end_arr(j);
	cp_json__key(j, "file");
	cp_json__arr(j);
	for (uint32_t f = 0; f < pf->n; f++)
		cp_json__i64(j, file[f]);
	cp_json__end_arr(j);
	cp_json__key(j, "line");
	cp_json__arr(j);
	for (uint32_t f = 0; f < pf->n; f++)
		cp_json__u64(j, w[f].file ? (uint64_t)w[f].line : 0);
	cp_json__end_arr(j);
	cp_json__key(j, "signal");
	cp_json__arr(j);
	for (uint32_t f = 0; f < pf->n; f++)
		cp_json__u64(j, !!(pf->rp[f]->fns[pf->fn[f]].flags & CP_RFN_SIGNAL));
	cp_json__end_arr(j);
	cp_json__end_obj(j);
	cp_strtab__release(&st);
	free(w);
	free(module);
	free(file);
}

/* rp's trees, its functions being the page's (first) or mapped (the second load). */
static void trees(struct cp_json *j, const char *key, const struct cp_report_profile *rp,
		  const uint32_t *fnmap)
{
	cp_json__key(j, key);
	cp_json__arr(j);
	for (uint32_t ti = 0; rp && ti < rp->ntrees; ti++)
		tree(j, rp, fnmap, &rp->trees[ti]);
	cp_json__end_arr(j);
}

/* A merged profile's inputs as the imbalance view names them (cp_input_name). */
static void inputs(struct cp_json *j, const struct cp_report_profile *rp)
{
	char name[320];

	if (!rp || !cp_imbalance_available(rp))
		return;
	cp_json__key(j, "inputs");
	cp_json__arr(j);
	for (uint32_t i = 0; i < rp->pf->ninputs; i++) {
		cp_input_name(rp->pf, i, name, sizeof(name));
		cp_json__str(j, name);
	}
	cp_json__end_arr(j);
}

static void data(struct cp_json *j, struct cp_report_profile *rp, struct cp_report_profile *other,
		 enum cp_metric weight)
{
	struct page_fns pf;
	int each = rp->threads == CP_THREADS_EACH;

	page_fns__init(&pf, rp, other);
	cp_json__obj(j);
	cp_json__key_u64(j, "callprof_html", HTML_VERSION);
	cp_json__key_str(j, "file", rp->pf->path);
	cp_json__key_str(j, "threads_mode", each ? "each" : "merged");
	cp_json__key(j, "timed");
	cp_json__bool(j, rp->timed);
	cp_json__key(j, "split");
	cp_json__bool(j, rp->split);
	cp_json__key(j, "sampled");
	cp_json__bool(j, rp->sampled);
	cp_json__key(j, "cpu_sampled");
	cp_json__bool(j, rp->cpu_sampled);
	cp_json__key_u64(j, "calls", rp->calls);
	cp_json__key_u64(j, "paths", rp->paths);
	cp_json__key_str(j, "weight", cp_metric__name(cp_metric__inclusive(weight)));
	cp_export_json_time_source(j, rp);
	cp_export_json_processes(j, rp);
	cp_export_json_compensation(j, rp);
	inputs(j, cp_imbalance_available(rp) ? rp : other);
	functions(j, &pf);
	if (!each) {
		trees(j, "trees", rp, NULL);
		trees(j, "thread_trees", other, pf.map);
	} else if (other) {
		trees(j, "trees", other, pf.map);
		trees(j, "thread_trees", rp, NULL);
	} else if (rp->ntrees == 1) {
		/* One thread: its tree is the merged one. */
		trees(j, "trees", rp, NULL);
		trees(j, "thread_trees", NULL, NULL);
	} else {
		/* Not given the merged tree: the page offers the threads' alone. */
		trees(j, "trees", NULL, NULL);
		trees(j, "thread_trees", rp, NULL);
	}
	cp_json__end_obj(j);
	page_fns__release(&pf);
}

static void html_escape(FILE *fp, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		default: fputc(*s, fp);
		}
	}
}

int cp_export_html(struct cp_report_profile *rp, struct cp_report_profile *other,
		   enum cp_metric weight, FILE *fp)
{
	const char *p = cp_html_page, *at;

	/* Children by name: the graph's left-to-right order, the same every time. */
	cp_report_profile__sort(rp, CP_SORT_NAME);
	if (other)
		cp_report_profile__sort(other, CP_SORT_NAME);
	while ((at = strchr(p, '@'))) {
		const char *end = strchr(at + 1, '@');
		size_t len = end ? (size_t)(end - at - 1) : 0;

		fwrite(p, 1, (size_t)(at - p), fp);
		p = end ? end + 1 : at + 1;
		if (len == 5 && !strncmp(at + 1, "TITLE", len)) {
			html_escape(fp, "callprof: ");
			html_escape(fp, cp_visible(rp->pf->path));
		} else if (len == 3 && !strncmp(at + 1, "CSS", len)) {
			fputs(cp_html_css, fp);
		} else if (len == 2 && !strncmp(at + 1, "JS", len)) {
			fputs(cp_html_js, fp);
		} else if (len == 4 && !strncmp(at + 1, "DATA", len)) {
			struct cp_json *j = cp_json__new(fp, CP_JSON_HTML);

			data(j, rp, other, weight);
			if (cp_json__finish(j))
				return -1;
		} else {
			/* Not a placeholder: the '@' stays, the rest is looked at again. */
			fputc('@', fp);
			p = at + 1;
		}
	}
	fputs(p, fp);
	/* A write error is the caller's to report, with the file's name (as svg.c). */
	return 0;
}
