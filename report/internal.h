/*
 * report/internal.h - helpers shared by the views: column selection and
 * formatting, function matching.
 */
#ifndef CP_REPORT_INTERNAL_H
#define CP_REPORT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "report/report.h"
#include "util/util.h" /* cp_u64map */

enum cp_field {
	CP_F_CALLS,
	CP_F_TOTAL,
	CP_F_SELF,
	CP_F_PERCENT,
	CP_F_SELF_PERCENT,
	CP_F_AVG,
	CP_F_MIN,
	CP_F_MAX,
	CP_F_SITE,
	CP_F_CALLS_MIN, /* merged profiles: per input (struct cp_rspread) */
	CP_F_CALLS_MAX,
	CP_F_CALLS_MEAN,
	CP_F_TOTAL_MIN,
	CP_F_TOTAL_MAX,
	CP_F_TOTAL_MEAN,
	CP_F_CPU, /* off-CPU split (cp_report_profile.split) */
	CP_F_WAIT,
	CP_F_INACTIVE,
	CP_F_SELF_CPU,
	CP_F_SELF_WAIT,
	CP_F_SELF_INACTIVE,
	CP_F_CPU_PERCENT,
	CP_F_SWITCHES_VOL,
	CP_F_SWITCHES_INVOL,
	CP_F_SELF_SWITCHES_VOL,
	CP_F_SELF_SWITCHES_INVOL,
	CP_F_SAMPLES,	   /* sampled CPU time (cp_report_profile.cpu_sampled) */
	CP_F_SELF_SAMPLES,
	CP_F_OPEN,	   /* calls open at attach (callprof attach), not in calls */
	CP_F_NAME,
	CP_F_NR
};

struct cp_fields {
	int id[CP_F_NR]; /* columns in order; name is always last */
	int n;		 /* columns used */
	int explicit;	 /* chosen by --fields (no banner then) */
	int name_width;	 /* --name-width: longer names are shortened (0: never) */
	int sampled;	 /* a sampled profile: the calls column is headed "samples" */
	/*
	 * What percent and self-percent are shares of (inclusive; the
	 * exclusive counterpart for self-percent), and what their titles say:
	 * total (by default), cpu, ...
	 */
	enum cp_metric weight;
};

/* One row's values. */
struct cp_row {
	uint64_t calls, total_ns, self_ns, min_ns, max_ns;
	uint64_t open_at_start; /* calls open at attach (not in calls): the open column */
	int open_mark;	   /* a context: its calls open at attach are also marked after its
			    * name (never a function's row: the name is the function's) */
	uint64_t wait_ns, inactive_ns;		/* inclusive off-CPU time */
	uint64_t self_wait_ns, self_inactive_ns; /* exclusive */
	uint64_t switches_vol, switches_invol;	/* inclusive */
	uint64_t self_switches_vol, self_switches_invol;
	uint64_t base_ns;  /* 100% for the percent columns */
	const char *site;  /* "file:line" or NULL */
	const char *name;
	int indent;	   /* spaces before the name */
	const char *prefix; /* printed before the name (e.g. "<- "), or NULL */
	int untimed;	   /* the profile has no times: time columns show "-" */
	int no_split;	   /* off-CPU time not measured: its columns show "-" */
	int sampled;	   /* sampled profile: avg, min and max show "-" */
	int only_total;	   /* self, min and max are not known (a call site's row) */
	int label;	   /* a heading: the numeric columns stay empty */
	int cpu_sampled;   /* CPU time from samples: min and max unknown, counts below */
	uint64_t samples, self_samples; /* the samples the cpu and self cpu rest on */
	int overhead;	   /* total mostly hook overhead: total, avg, min, max get "~" */
	int self_overhead; /* self time mostly hook overhead: self gets "~" */
	const struct cp_rspread *spread; /* merged profiles: across the inputs, or NULL */
	uint32_t ninputs;  /* the profile's inputs (for the spread) */
};

/* A function's (or a call edge's) figures added up over contexts (flat.c). */
struct cp_agg {
	uint32_t fn;	 /* function index, CP_NONE for the thread root */
	uint64_t calls, total_ns, self_ns, min_ns, max_ns;
	uint64_t open_at_start; /* calls open at attach, not in calls */
	uint64_t wait_ns, inactive_ns, switches_vol, switches_invol; /* with total_ns */
	uint64_t self_wait_ns, self_inactive_ns, self_switches_vol, self_switches_invol;
	uint64_t overhead_ns; /* compensation taken off total_ns */
	uint64_t self_overhead_ns; /* compensation taken off self_ns */
	uint64_t samples, self_samples; /* sampled CPU time: with total_ns, with self_ns */
	const char *where; /* call-site line of the edge ("file:line"), or NULL */
	int only_total;	   /* self, min and max unknown (split by call site) */
};

/*
 * Walk tree t depth first, adding each context into a[its function]:
 * calls and self time always, total time only where the function is not
 * already active further up the path (recursion-aware, never more than
 * the run).  active[] (one per function, zero at the start) counts the
 * activations on the path; it is zero again at the end.
 */
void cp_flat_walk(const struct cp_rtree *t, struct cp_agg *a, uint32_t *active);

int cp_fields__parse(struct cp_fields *f, const char *spec, const char *dflt);
/* What the view options add to parsed fields: --srcline's site column, --name-width. */
struct cp_view_opts;
void cp_fields__apply_view(struct cp_fields *f, const struct cp_view_opts *o);
/* A row's off-CPU figures and the profile's flags from context n. */
void cp_row__set_node(struct cp_row *r, const struct cp_report_profile *rp,
		      const struct cp_rnode *n);
void cp_fields__title(const struct cp_fields *f, FILE *fp);
void cp_fields__row(const struct cp_fields *f, const struct cp_row *r, FILE *fp);

/*
 * The columns a view shows by default: timed_default for timing profiles
 * (split_default where off-CPU time was measured, if not NULL), calls and
 * name for counting, the name alone for coverage.
 */
const char *cp_default_fields(const struct cp_report_profile *rp, const char *timed_default,
			      const char *split_default);

/*
 * A time worked out in floating point as whole nanoseconds, saturating: the
 * figures behind it come from the file and may be anything, and converting
 * a double beyond UINT64_MAX (or NaN) to an integer is undefined.
 */
static inline uint64_t cp_ns_from_double(double ns)
{
	if (!(ns > 0))
		return 0;
	return ns < 18446744073709551616.0 ? (uint64_t)ns : UINT64_MAX;
}

/* Characters (UTF-8 code points) in s: its width on a terminal, near enough. */
size_t cp_text_width(const char *s);
/*
 * name in at most width characters, for a column or a label (width <= 0:
 * never shortened): C++ template arguments become "<...>", then the last
 * parameter list "(...)", then the qualifiers go from the left, a return
 * type with them ("...::Class::method(...)", "...::method(...)"), then
 * "...::" and "(...)" ("method"), and only then is the end cut ("..."):
 * the method, which tells a row from its neighbours, stays longest.  name itself, or buf (size bytes, at least 16).
 * Exports never shorten; the views shorten the visible form.
 */
const char *cp_short_name(const char *name, int width, char *buf, size_t size);

/* Human-readable duration in a fixed width, e.g. "12.34ms". */
void cp_fmt_ns(char *buf, size_t size, uint64_t ns);
/*
 * The mark after the name of a context with n calls open when callprof
 * attach began (not in its calls): " (open at attach)" for one, " (N open
 * at attach)" for more, "" for none.  A context's only: a row that adds up
 * a function's contexts (flat, callers, callees) shows them in the open
 * column, and its name stays the function's.
 */
const char *cp_open_mark(char *buf, size_t size, uint64_t n);

/*
 * The value a row that knows only calls, total and self time (a call site,
 * a line's group) is ordered by: larger first.  Other inclusive times order
 * as total, exclusive ones as self; CP_SORT_NAME orders by name alone, so
 * every row has the same value 0.
 */
static inline uint64_t cp_sort_value(enum cp_sort_key key, uint64_t calls, uint64_t total_ns,
				     uint64_t self_ns)
{
	if (key == CP_SORT_NAME)
		return 0;
	if (key == CP_SORT_CALLS)
		return calls;
	if ((int)key == CP_METRIC_SAMPLES || (int)key == CP_METRIC_SELF_SAMPLES)
		return 0;
	return cp_metric__exclusive((enum cp_metric)key) == (enum cp_metric)key ? self_ns : total_ns;
}

/*
 * Put every node's children of t in the order of cmp (a qsort_r comparator
 * of node indexes of t, given arg), relinking first_child and next.
 */
void cp_rtree__sort_children(struct cp_rtree *t, int (*cmp)(const void *, const void *, void *),
			     void *arg);
/* Order of two nodes by key, ties by name, address, call site. */
int cp_rnode_cmp(const struct cp_report_profile *rp, const struct cp_rnode *a,
		 const struct cp_rnode *b, enum cp_sort_key key);

/*
 * "== LABEL (N threads, TIME) ==", after an empty line if gap; with the
 * root's CPU time and the kernel's count for the threads where known.
 */
void cp_tree_header(const struct cp_report_profile *rp, const struct cp_rtree *t, int gap,
		    FILE *fp);

/* Banner with the run's facts, as "# ..." lines. */
void cp_report_banner(const struct cp_report_profile *rp, const char *what, FILE *fp);

/*
 * The weight a view uses (o's if given, else the profile's), and the
 * banner's "# weight: ..." line saying why when it was not given.
 */
enum cp_metric cp_view_weight(const struct cp_report_profile *rp, const struct cp_view_opts *o);
void cp_weight_banner(const struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp);

/* Row r's value of metric m (as cp_rnode__metric). */
uint64_t cp_row__metric(const struct cp_row *r, enum cp_metric m);

/*
 * The path to node i of t, from the node itself up to its top-level
 * function (the root left out): node indices into (*path)[0..depth),
 * grown as needed (*alloc is its allocation).  Returns depth.
 */
uint32_t cp_rtree__path(const struct cp_rtree *t, uint32_t i, uint32_t **path, size_t *alloc);

/*
 * Whether --threads selector sel picks thread i of pf, labelled label: a
 * number picks the thread of that id, anything else is a glob on the
 * thread's name or on its label.
 */
struct cp_profile_file;
int cp_thread_sel__match(const char *sel, const struct cp_profile_file *pf, uint32_t i,
			 const char *label);

/* Append a node for fn under parent (CP_NONE, CP_NONE: the root); returns its index. */
uint32_t cp_rtree__add(struct cp_rtree *t, uint32_t parent, uint32_t fn);

/*
 * Add src's calls, inclusive time and exclusive off-CPU figures (self
 * wait, inactive, switches) into dst (min and max combined, dst's call
 * site kept if it has one).  Self time, overhead and the inclusive
 * off-CPU figures are not added: they are derived afterwards.
 */
void cp_rnode__add_counts(struct cp_rnode *dst, const struct cp_rnode *src);
/*
 * Add src, the spread over some inputs, into dst's over others (two
 * disjoint sets of one profile's inputs: the lowest absent input is the
 * lower of the two).  The distribution stays known where both know it.
 */
void cp_rspread__add(struct cp_rspread *dst, const struct cp_rspread *src);
/* A SPREAD record's version 9 distribution (CP_SPREAD_DIST) into s, and s into a record. */
void cp_rspread__from_rec(struct cp_rspread *s, const struct cp_spread_rec *r);
void cp_rspread__to_rec(struct cp_spread_rec *r, const struct cp_rspread *s);

/*
 * Before src's counts are added into node id of t: record that they came
 * from call site `site`, starting the node's list of sites when it meets a
 * second one.  Calls with no calls and no time leave no trace.  several:
 * src has a list of sites, each added before its counts are (the node's
 * counts cannot tell its first site then): the node gets a list at once.
 */
void cp_rtree__add_site(struct cp_rtree *t, uint32_t id, uint64_t site, uint64_t calls,
			uint64_t total_ns, uint64_t overhead_ns, int several);

/*
 * Add src's trouble counters (lost calls, events, signals, threads,
 * unpaired exits, reconciled frames) and flags into dst, and keep the
 * earlier start: the facts of a profile made of several.
 */
struct cp_meta;
void cp_meta__add(struct cp_meta *dst, const struct cp_meta *src);
/*
 * Combine the off-CPU measurement of src (a profile of src_threads
 * threads) into dst's (of dst_threads so far; 0: dst holds nothing yet):
 * measured everywhere stays on, measured in some is partial with the
 * others' threads counted as failed, refused everywhere stays
 * unavailable; lost records add up.
 */
void cp_meta__add_switches(struct cp_meta *dst, uint32_t dst_threads, const struct cp_meta *src,
			   uint32_t src_threads);

/* Functions of a profile built from others, by name (merge.c). */
struct cp_name_map {
	uint32_t *slot; /* fn index or CP_NONE */
	uint64_t mask;
	uint32_t count;
};
/* rp's function named like f (from another profile), added as a copy of f if new. */
uint32_t cp_name_map__fn(struct cp_name_map *m, struct cp_report_profile *rp,
			 const struct cp_rfn *f);

/* The report's maps compare cp_u64map values with CP_NONE. */
_Static_assert(CP_NONE == CP_U64MAP_NONE, "cp_u64map's 'absent' is not CP_NONE");

/*
 * The json export's "processes" key and array: each recorded process's
 * facts (its META section; docs/callprof-export.1.md, JSON OUTPUT).  The
 * HTML report embeds the same.
 */
struct cp_json;
void cp_export_json_processes(struct cp_json *j, const struct cp_report_profile *rp);
/*
 * Its "time_source" key and object: where the times come from ("clock",
 * "stack-samples", "none", or "cpu-samples" with the rate, period and
 * sample counts the times rest on, and the profiler's share left out).
 */
void cp_export_json_time_source(struct cp_json *j, const struct cp_report_profile *rp);
/* Its "compensation" key and object: what was subtracted, from what. */
void cp_export_json_compensation(struct cp_json *j, const struct cp_report_profile *rp);

/*
 * Whether sampled address ip is the profiler's own code: callprof's runtime
 * (CP_MODULE_RUNTIME), or the program's PLT stubs that jump to the hooks
 * (and the hooks of a static build), whose samples are the profiler's share.
 */
int cp_report_profile__profilers_ip(struct cp_report_profile *rp, uint64_t ip);

/*
 * Whether function name (as rp->fns names it) is the one the user named
 * fn: the same, or fn followed by the " (FILE)" that tells same-named
 * functions apart (so `--lines helper` finds "helper (a.c)").
 */
int cp_fn_name_matches(const char *name, const char *fn);
/* The length of name without such a " (FILE)". */
size_t cp_fn_name_bare_len(const char *name);

/* "file:line" for a call site (static buffer), or NULL. */
const char *cp_site_str(struct cp_report_profile *rp, const struct cp_rnode *n);
const char *cp_site_str_at(struct cp_report_profile *rp, uint64_t site);

#endif /* CP_REPORT_INTERNAL_H */
