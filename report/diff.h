/*
 * diff.h - compare two profiles call path by call path.
 *
 * Two profiles (A, before, and B, after) are matched by the names of the
 * functions along each call path, not by address, so that two builds of a
 * program (other compiler, other flags, other load addresses) compare.
 * Threads are merged: a path's figures are those of all threads added up.
 * Functions of equal name (static functions of two modules, say) count as
 * one, as in a merged report of several processes.
 *
 * Call counts are exact and compared exactly.  Times are noisy: a time
 * change counts only when it reaches the floor, a share (--min-percent) of
 * the larger of the two profiles' root totals.
 */
#ifndef CP_REPORT_DIFF_H
#define CP_REPORT_DIFF_H

#include <stdint.h>
#include <stdio.h>

struct cp_report_profile;
struct cp_diff;

enum cp_diff_status {
	CP_DIFF_SAME = 0, /* the same calls, no time change at the floor or above */
	CP_DIFF_CHANGED,  /* in both, calls differ or a time changed by the floor or more */
	CP_DIFF_NEW,	  /* only in B */
	CP_DIFF_GONE,	  /* only in A */
};

/*
 * Match the merged trees (CP_THREADS_MERGED) of a and b.  min_percent (0 to
 * 100) sets the time floor.  The profiles must outlive the diff, which
 * borrows their function names.  Hashed: linear in the two trees' sizes.
 */
struct cp_diff *cp_diff__new(const struct cp_report_profile *a, const struct cp_report_profile *b,
			     double min_percent);
void cp_diff__free(struct cp_diff *d);

/* Both profiles have times; otherwise only calls are compared. */
int cp_diff__timed(const struct cp_diff *d);
/*
 * What orders the table and sets the floor (an inclusive metric, its
 * exclusive part orders): CPU time where either profile weighs by it
 * (cp_report_profile__weight) and both have it, else total, or calls.
 */
int cp_diff__weight(const struct cp_diff *d);

struct cp_diff_print_opts {
	const char *fields; /* comma list, NULL for the default (no header when given) */
	int all;	    /* also the paths that stayed the same */
	uint64_t limit;	    /* at most this many rows (0: all) */
};

/*
 * The header (unless o->fields is given) and the table of changed paths,
 * most changed first: by |delta| of the weight's exclusive part (self or
 * self-cpu) when timed (then |delta calls|), by |delta calls| otherwise,
 * ties in name order.  0, or -1 after cp_error().
 */
int cp_diff__print(struct cp_diff *d, const struct cp_diff_print_opts *o, FILE *fp);

/* Check a --fields list before loading anything: 0, or -1 after cp_error(). */
int cp_diff_check_fields(const char *fields);

/*
 * A --fail-if condition, as parsed by cp_diff_cond__parse():
 *
 *   calls-changed          a path's calls differ (new and gone paths too)
 *   paths-changed          a path is new or gone
 *   METRIC>+N%  METRIC<-N%   a path's METRIC grew (fell) by more than N percent
 *   METRIC>+N   METRIC<-N    ... by more than N: a count for calls, a
 *                            duration with a unit (ns, us, ms, s) for times
 *
 * METRIC is any metric (report.h, enum cp_metric): calls, self, total,
 * cpu, self-cpu, wait, ...  Time conditions consider only paths whose time
 * (in A or B) reaches the floor, and not those resting on too few samples
 * on both sides; a new path grows by an infinite percentage, a gone one
 * falls by 100%.
 */
enum cp_diff_cond_kind { CP_COND_CALLS_CHANGED, CP_COND_PATHS_CHANGED, CP_COND_METRIC };

struct cp_diff_cond {
	const char *text;	    /* as given (borrowed) */
	enum cp_diff_cond_kind kind;
	int metric;		    /* CP_COND_METRIC: what is compared (enum cp_metric) */
	int up;			    /* 1: grew by more than; 0: fell by more than */
	int percent;		    /* limit is a percentage of A's value */
	double limit;		    /* percent, calls, or nanoseconds */
};

/*
 * Parse text into *c.  Returns 0, or -1 with *why saying what is wrong
 * (a static string, for a usage error).
 */
int cp_diff_cond__parse(struct cp_diff_cond *c, const char *text, const char **why);
/* The condition needs more than calls. */
int cp_diff_cond__timed(const struct cp_diff_cond *c);
/*
 * Whether both profiles of d have what c compares: 0, or -1 after one
 * error line naming the profile that lacks it and what it has.
 */
int cp_diff_cond__check(const struct cp_diff *d, const struct cp_diff_cond *c);

/*
 * Whether c holds for some path of d.  When it does, writes one line to
 * err naming the condition, how many paths it holds for and the worst of
 * them with its values, and returns 1; else 0.
 */
int cp_diff__check(struct cp_diff *d, const struct cp_diff_cond *c, FILE *err);

#endif /* CP_REPORT_DIFF_H */
