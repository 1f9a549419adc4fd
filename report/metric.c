/*
 * metric.c - the figures views weigh, order and compare contexts by, and
 * the choice of the default weight.
 *
 * One table names every metric once, so --sort, export -m, diff
 * --fail-if and the error messages that list the allowed values agree.
 */
#include <string.h>

#include "report/internal.h"
#include "report/report.h"
#include "util/strbuf.h"
#include "util/util.h"

static const struct {
	const char *name;
	enum cp_metric inclusive, exclusive;
} metrics[CP_METRIC_NR] = {
	[CP_METRIC_CALLS] = { "calls", CP_METRIC_CALLS, CP_METRIC_CALLS },
	[CP_METRIC_SELF] = { "self", CP_METRIC_TOTAL, CP_METRIC_SELF },
	[CP_METRIC_TOTAL] = { "total", CP_METRIC_TOTAL, CP_METRIC_SELF },
	[CP_METRIC_CPU] = { "cpu", CP_METRIC_CPU, CP_METRIC_SELF_CPU },
	[CP_METRIC_WAIT] = { "wait", CP_METRIC_WAIT, CP_METRIC_SELF_WAIT },
	[CP_METRIC_INACTIVE] = { "inactive", CP_METRIC_INACTIVE, CP_METRIC_SELF_INACTIVE },
	[CP_METRIC_SAMPLES] = { "samples", CP_METRIC_SAMPLES, CP_METRIC_SELF_SAMPLES },
	[CP_METRIC_SELF_CPU] = { "self-cpu", CP_METRIC_CPU, CP_METRIC_SELF_CPU },
	[CP_METRIC_SELF_WAIT] = { "self-wait", CP_METRIC_WAIT, CP_METRIC_SELF_WAIT },
	[CP_METRIC_SELF_INACTIVE] = { "self-inactive", CP_METRIC_INACTIVE,
				      CP_METRIC_SELF_INACTIVE },
	[CP_METRIC_SELF_SAMPLES] = { "self-samples", CP_METRIC_SAMPLES, CP_METRIC_SELF_SAMPLES },
};

const char *cp_metric__name(enum cp_metric m)
{
	return (unsigned)m < CP_METRIC_NR ? metrics[m].name : "?";
}

int cp_metric__lookup(const char *s)
{
	for (int m = 0; m < CP_METRIC_NR; m++)
		if (!strcmp(s, metrics[m].name))
			return m;
	return -1;
}

enum cp_metric cp_metric__inclusive(enum cp_metric m)
{
	return metrics[m].inclusive;
}

enum cp_metric cp_metric__exclusive(enum cp_metric m)
{
	return metrics[m].exclusive;
}

int cp_metric__is_time(enum cp_metric m)
{
	return m != CP_METRIC_CALLS && m != CP_METRIC_SAMPLES && m != CP_METRIC_SELF_SAMPLES;
}

int cp_metric__available(const struct cp_report_profile *rp, enum cp_metric m)
{
	switch (metrics[m].inclusive) {
	case CP_METRIC_CALLS:
		return 1; /* coverage: 1 for each function that ran */
	case CP_METRIC_TOTAL:
		return rp->timed;
	case CP_METRIC_CPU:
		/* Sampled CPU time is CPU time with or without the off-CPU split. */
		return rp->timed && (rp->split || rp->cpu_sampled);
	case CP_METRIC_SAMPLES:
		return rp->cpu_sampled;
	default: /* wait, inactive */
		return rp->timed && rp->split;
	}
}

void cp_metric__list(const struct cp_report_profile *rp, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int m = 0; m < CP_METRIC_NR; m++)
		if (!rp || cp_metric__available(rp, m)) {
			int k = snprintf(buf + o, size - o, "%s%s", o ? ", " : "", metrics[m].name);

			if (k < 0 || (size_t)k >= size - o)
				break;
			o += (size_t)k;
		}
}

int cp_metric__parse(const struct cp_report_profile *rp, const char *s, const char *what)
{
	int m = cp_metric__lookup(s);
	char list[256];

	cp_metric__list(rp, list, sizeof(list));
	if (m < 0)
		return cp_error("%s: unknown metric '%s' (profile '%s' has: %s)", what, s,
				rp->pf->path, list);
	if (!cp_metric__available(rp, m))
		return cp_error("%s %s: profile '%s' has no %s; it has: %s", what, s, rp->pf->path,
				!rp->timed ? "times (recorded with --time=none or --mode=coverage)" :
				metrics[m].inclusive == CP_METRIC_SAMPLES ?
					"CPU-time samples (not recorded with --time=cpu)" :
					"off-CPU times (not measured when it was recorded)",
				list[0] ? list : "nothing but names");
	return m;
}

uint64_t cp_rnode__metric(const struct cp_rnode *n, enum cp_metric m)
{
	const struct cp_figures f = {
		.calls = n->calls, .total_ns = n->total_ns, .self_ns = n->self_ns,
		.wait_ns = n->wait_ns, .inactive_ns = n->inactive_ns,
		.self_wait_ns = n->self_wait_ns, .self_inactive_ns = n->self_inactive_ns,
		.samples = n->samples, .self_samples = n->self_samples,
	};

	return cp_figures__metric(&f, m);
}

/*
 * CPU time wherever the profile has it: what the program's code cost, the
 * same on a quiet machine and a loaded one.  Blocked time (the wait
 * column) is shown beside it and the banner says how much there was;
 * preempted time is the machine's load, never a default weight, whatever
 * the number of threads (a single thread weighed by elapsed time on a
 * busy machine piled its preemptions onto tiny functions, and two
 * identical runs differed by a fifth).  Elapsed time only where off-CPU
 * time was not measured (clock-timed without the split), calls without
 * times.
 */
enum cp_metric cp_report_profile__weight(const struct cp_report_profile *rp, char *why,
					 size_t size)
{
	uint64_t total = 0, wait = 0, inactive = 0;
	uint32_t threads = 0;
	char blocked[32], preempted[32];

	if (why && size)
		why[0] = '\0';
	if (!rp->timed)
		return CP_METRIC_CALLS;
	if (!cp_metric__available(rp, CP_METRIC_CPU))
		return CP_METRIC_TOTAL;
	if (!why || !size)
		return CP_METRIC_CPU;
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		const struct cp_rnode *root = &rp->trees[ti].n[0];

		CP_ADD_SAT(total, root->total_ns);
		CP_ADD_SAT(wait, root->wait_ns);
		CP_ADD_SAT(inactive, root->inactive_ns);
		threads += rp->trees[ti].nthreads;
	}
	if (!rp->split) {
		/* Sampled CPU time without the split: total is the same CPU time. */
		snprintf(why, size, "CPU time (off-CPU time was not measured: no blocked or "
			 "preempted time beside it)");
		return CP_METRIC_CPU;
	}
	if (!total)
		return CP_METRIC_CPU;
	cp_fmt_ns(blocked, sizeof(blocked), wait);
	cp_fmt_ns(preempted, sizeof(preempted), inactive);
	snprintf(why, size, "CPU time; %s also blocked %s (%.0f%% of %s time: the wait column; "
		 "--sort=wait weighs by it, --sort=total by elapsed time) and preempted %s "
		 "(%.0f%%: the machine's load, in no default weight)",
		 threads > 1 ? "the threads were" : "the thread was", blocked,
		 100.0 * (double)wait / (double)total, threads > 1 ? "their" : "its",
		 preempted, 100.0 * (double)inactive / (double)total);
	return CP_METRIC_CPU;
}

enum cp_metric cp_report_profile__pair_weight(const struct cp_report_profile *a,
					      const struct cp_report_profile *b)
{
	enum cp_metric wa = cp_report_profile__weight(a, NULL, 0);
	enum cp_metric wb = cp_report_profile__weight(b, NULL, 0);

	if (wa == CP_METRIC_CALLS || wb == CP_METRIC_CALLS)
		return CP_METRIC_CALLS;
	return wa == wb ? wa : CP_METRIC_TOTAL;
}
