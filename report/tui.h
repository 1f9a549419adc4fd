/*
 * tui.h - the model of `callprof tui` (tui.c): which rows a view shows,
 * which contexts are expanded, the flat, callers and callees lists and
 * the search.  No terminal code: tui/browser.c draws it, the unit tests
 * drive it.
 *
 * The tree view keeps the list of its visible rows (node indexes of one
 * tree, in the order they are drawn); expanding a context splices its
 * visible descendants in after its row, collapsing cuts them out, so a
 * keystroke never walks the whole tree.
 */
#ifndef CP_REPORT_TUI_H
#define CP_REPORT_TUI_H

#include <stdint.h>

#include "report/report.h"

enum cp_tui_view {
	CP_TUI_TREE = 0,
	CP_TUI_FLAT,
	CP_TUI_CALLERS,
	CP_TUI_CALLEES,
	CP_TUI_IMBALANCE, /* a merged profile's contexts by imbalance (a list of contexts) */
};

/* Flat view sort columns, cycled by `s`. */
enum cp_tui_sort {
	CP_TUI_SORT_INCL = 0, /* the metric, inclusive */
	CP_TUI_SORT_SELF,     /* its exclusive counterpart */
	CP_TUI_SORT_CALLS,
	CP_TUI_SORT_NAME,
	CP_TUI_SORT_NR
};

/* One row of the flat, callers or callees list: a function and its figures. */
struct cp_tui_fnrow {
	uint32_t fn;
	uint32_t first;	      /* its first context in the tree (preorder), CP_NONE if none */
	struct cp_figures fig;
	struct cp_figures side; /* diff mode: profile A's (fig is B's) */
};

struct cp_tui {
	struct cp_report_profile *rp;
	const struct cp_figures *side; /* diff mode: per node, profile A's figures */
	uint32_t tree;	      /* index into rp->trees */
	enum cp_metric metric;
	enum cp_tui_view view;
	/* tree view */
	uint32_t *rows;	      /* visible node indexes */
	uint32_t nrows, rows_alloc;
	uint8_t *open;	      /* per node: expanded */
	/* flat, callers, callees */
	struct cp_tui_fnrow *list;
	uint32_t nlist;
	uint32_t subject;     /* callers/callees: the function */
	/* imbalance: per list row, its context's distribution (report --imbalance's rows) */
	struct cp_imbalance_row *imb;
	uint64_t imb_whole;   /* what imb% is a share of (cp_imbalance_rank) */
	enum cp_tui_sort sort;
	/* selection and scrolling, in the current view */
	uint32_t sel, top;
	uint32_t tree_sel;    /* the tree's selected row while another view shows */
	/* search */
	char *pattern;
	struct cp_name_pattern *glob; /* pattern compiled, when it has glob characters */
	uint32_t *matches;    /* tree: node indexes in preorder; lists: row numbers */
	uint32_t nmatches, cur_match; /* cur_match: index into matches, or CP_NONE */
};

/*
 * Show tree `tree` of rp by metric m (children ordered by it: rp is sorted
 * in place unless sorted says it is ordered by m already, as a freshly
 * loaded profile is by total), its hottest path expanded: from the root, the child with the
 * largest value of m, down to a leaf.  0, or -1 out of memory.
 *
 * Diff mode: side is not NULL, rp is cp_tui__diff_profile's (B's figures) and side A's, per
 * node.  Then children are ordered by how much m changed, |B - A| (the larger B, then the name
 * on a tie; sorted is not looked at), the lists' rows likewise, and the path opened is the
 * one to the largest change, down to where nothing below changed.
 */
int cp_tui__init(struct cp_tui *t, struct cp_report_profile *rp, uint32_t tree, enum cp_metric m,
		 int sorted, const struct cp_figures *side);
void cp_tui__release(struct cp_tui *t);
/* Change the metric: re-sorts, keeps what is expanded and the selected context. */
int cp_tui__set_metric(struct cp_tui *t, enum cp_metric m);

/*
 * Rows of the current view.  The functions below that take a row r accept
 * any number: a view may have none (a thread's tree that a focus emptied)
 * and a key may come with a selection past the end; for a row that is not
 * there they answer none (NULL, 0, "?", CP_NONE, r itself) and change
 * nothing.
 */
uint32_t cp_tui__nrows(const struct cp_tui *t);
/* Tree view: the node of row r; lists: the row's function. */
const struct cp_rnode *cp_tui__node(const struct cp_tui *t, uint32_t r);
int cp_tui__has_children(const struct cp_tui *t, uint32_t r);
int cp_tui__is_open(const struct cp_tui *t, uint32_t r);
/* The figures of row r (a context's, or a function's in a list). */
void cp_tui__figures(const struct cp_tui *t, uint32_t r, struct cp_figures *f);
/* The name of row r, its depth (tree: 1 for top-level functions; lists: 1). */
const char *cp_tui__name(const struct cp_tui *t, uint32_t r);
uint32_t cp_tui__depth(const struct cp_tui *t, uint32_t r);
/* What percentages are of: the tree root's value of the metric. */
uint64_t cp_tui__whole(const struct cp_tui *t);

/* Tree view, row r: 0, or -1 (out of memory; nothing changed). */
int cp_tui__expand(struct cp_tui *t, uint32_t r);
void cp_tui__collapse(struct cp_tui *t, uint32_t r);
/* Expand everything below row r, adding at most limit rows. */
int cp_tui__expand_all(struct cp_tui *t, uint32_t r, uint32_t limit);
void cp_tui__collapse_all(struct cp_tui *t);
/* The row of r's parent context, or r for a top-level one. */
uint32_t cp_tui__parent_row(const struct cp_tui *t, uint32_t r);
/* Expand node's ancestors and select its row: its row, or CP_NONE. */
uint32_t cp_tui__reveal(struct cp_tui *t, uint32_t node);

/* Switch to a list view (fn: the function of callers/callees): 0 or -1. */
int cp_tui__flat(struct cp_tui *t);
int cp_tui__callers(struct cp_tui *t, uint32_t fn);
int cp_tui__callees(struct cp_tui *t, uint32_t fn);
/*
 * Switch to the imbalance view: the contexts of a merged profile of
 * several inputs (tree 0, not diff mode) in report --imbalance's order, a
 * row per context (its function, first: the context, fig: its figures).
 * 0; 1 (nothing changed) where the profile holds no per-input
 * distribution.
 */
int cp_tui__imbalance(struct cp_tui *t);
/* Imbalance view: row r's distribution, or NULL. */
const struct cp_imbalance_row *cp_tui__imbalance_row(const struct cp_tui *t, uint32_t r);
/* Back to the tree, with the selection it had. */
void cp_tui__tree(struct cp_tui *t);
/* Flat view: the next sort column. */
void cp_tui__cycle_sort(struct cp_tui *t);
/* The function of row r in any view (CP_NONE: none). */
uint32_t cp_tui__fn(const struct cp_tui *t, uint32_t r);

/*
 * Search names of the current view for a substring: the number of
 * matches.  The next match (cp_tui__next_match(t, 1)) is then the first
 * at or after the selection, in the order the rows are drawn (the tree's
 * preorder, hidden contexts included), wrapping around.
 */
uint32_t cp_tui__search(struct cp_tui *t, const char *pattern);
/* Select the next (dir 1) or previous (-1) match: 0, or -1 when there is none. */
int cp_tui__next_match(struct cp_tui *t, int dir);
/* Whether row r's name matches the search. */
int cp_tui__row_matches(const struct cp_tui *t, uint32_t r);

/*
 * Diff mode: one profile made of the merged trees of a (before) and b
 * (after), call paths matched by function name: its nodes carry b's
 * figures, (*side)[node] a's (zero where the path is in one only).  Its
 * functions are the distinct names.  It borrows b's file (pf) for the
 * facts; free it with cp_tui__diff_free, not cp_report_profile__free.
 * NULL when out of memory.
 */
struct cp_report_profile *cp_tui__diff_profile(const struct cp_report_profile *a,
					       const struct cp_report_profile *b,
					       struct cp_figures **side);
void cp_tui__diff_free(struct cp_report_profile *rp, struct cp_figures *side);
/* Row r's figures in profile A (diff mode; zero otherwise). */
void cp_tui__side_figures(const struct cp_tui *t, uint32_t r, struct cp_figures *f);

/* Keep sel within the rows and on a screen of height rows starting at top. */
void cp_tui__clamp(struct cp_tui *t, uint32_t height);

#endif /* CP_REPORT_TUI_H */
