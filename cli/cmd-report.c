/*
 * cmd-report.c - `callprof report`: the call tree (default), the flat
 * profile, or the callers/callees of one function.
 */
#include <stdio.h>

#include <stdlib.h>

#include "cli/builtin.h"
#include "cli/filter-options.h"
#include "cli/options.h"
#include "report/report.h"
#include "util/util.h"

static const char *const report_usage[] = {
	"callprof report [--threads=merged|each|SELECTORS] [--focus=FN] [--hide=PATTERN] [--regex] [--min-percent=P] [--fields=LIST] [--sort=KEY] [--no-compensate] [--pid=PID] [FILE...]",
	"callprof report --flat [--focus=FN] [--hide=PATTERN] [--regex] [--fields=LIST] [--sort=KEY] [--pid=PID] [FILE...]",
	"callprof report (--callers|--callees) FUNCTION [--focus=FN] [--hide=PATTERN] [--regex] [--pid=PID] [FILE...]",
	"callprof report --plist [--focus=FN] [--hide=PATTERN] [--regex] [--pid=PID] [FILE...]",
	"callprof report --lines FUNCTION [--threads=merged|each|SELECTORS] [--focus=FN] [--hide=PATTERN] [--pid=PID] [FILE...]",
	"callprof report --imbalance [--focus=FN] [--hide=PATTERN] [--regex] [--min-percent=P] [FILE]",
	NULL,
};


/*
 * --sort's order and weight into vo: a time also weighs (samples weigh as
 * the CPU time they stand for); calls, name or nothing leave the profile's
 * weight, which without --sort also orders (its exclusive part in the flat
 * profile).  0, or -1 after one error line: rp does not have that metric.
 */
static int sort_key(const struct cp_report_profile *rp, const char *sort, int flat,
		    struct cp_view_opts *vo)
{
	enum cp_metric w = cp_report_profile__weight(rp, NULL, 0);
	int m;

	if (sort && !strcmp(sort, "name")) {
		vo->sort = CP_SORT_NAME;
		return 0;
	}
	if (!sort) {
		vo->sort = (enum cp_sort_key)(flat ? cp_metric__exclusive(w) : w);
		return 0;
	}
	m = cp_metric__parse(rp, sort, "--sort");
	if (m < 0)
		return -1;
	vo->sort = (enum cp_sort_key)m;
	if (m != CP_METRIC_CALLS) {
		vo->weight = cp_metric__inclusive(m) == CP_METRIC_SAMPLES ?
				     CP_METRIC_CPU : cp_metric__inclusive(m);
		vo->weight_given = 1;
	}
	return 0;
}

int cmd_report(int argc, const char **argv)
{
	int flat = 0, plist = 0, threads = CP_THREADS_MERGED, no_compensate = 0, ret, n;
	int srcline = 0, addresses = 0, width = 0, tui = 0, imbalance = 0;
	double min_percent = 0.5;
	const char *callers = NULL, *callees = NULL, *lines = NULL, *fields = NULL;
	const char *dflt[] = { "callprof.out" }, *name_width = NULL, *sort = NULL;
	struct cp_report_opts ro = { 0 };
	struct cp_view_opts vo = { 0 };
	struct cp_report_profile *rp;
	struct cp_filter_options fo = { 0 };
	struct cp_symbol_options so = { 0 };
	struct cp_view_filter *filter;
	const struct cp_option opts[] = {
		{ CP_OPT_FLAG, 0, "flat", &flat, NULL, "flat profile: per function over all paths" },
		{ CP_OPT_FLAG, 0, "tui", &tui, NULL,
		  "browse interactively in the terminal: callprof tui with the other options" },
		{ CP_OPT_FLAG, 0, "imbalance", &imbalance, NULL,
		  "merged profiles: call paths by the time the other inputs (ranks) lost waiting "
		  "for the slowest" },
		{ CP_OPT_FLAG, 0, "plist", &plist, NULL,
		  "the PLIST listing of the NT profiler: per function, by name" },
		{ CP_OPT_STRING, 0, "callers", &callers, "FUNCTION", "who calls FUNCTION" },
		{ CP_OPT_STRING, 0, "callees", &callees, "FUNCTION", "what FUNCTION calls" },
		{ CP_OPT_STRING, 0, "lines", &lines, "FUNCTION",
		  "where FUNCTION's samples fell, by source line (the default --time=cpu records "
		  "them; --time=clock with --sample)" },
		{ CP_OPT_LIST, 0, "threads", &fo.threads, "merged|each|SELECTORS",
		  "add equal call paths of all threads (merged, default) or one tree per thread; "
		  "SELECTORS (thread ids, globs on names, comma-separated) keep only those threads" },
		CP_FILTER_OPTIONS(fo),
		{ CP_OPT_DOUBLE, 0, "min-percent", &min_percent, "P",
		  "tree: hide contexts below P% of the total (default 0.5)" },
		{ CP_OPT_STRING, 0, "fields", &fields, "LIST",
		  "columns: calls,total,self,percent,self-percent,avg,min,max,site,open,name; merged "
		  "profiles also calls-min,calls-max,calls-mean,total-min,total-max,total-mean; "
		  "off-CPU time cpu,wait,inactive,self-cpu,self-wait,self-inactive,cpu-percent,"
		  "switches-vol,switches-invol,self-switches-vol,self-switches-invol" },
		{ CP_OPT_STRING, 0, "sort", &sort, "KEY",
		  "order by a metric (larger first; a time also sets what percentages are of) or by "
		  "name: calls, self, total, cpu, wait, inactive, samples, self-cpu, self-wait, "
		  "self-inactive, self-samples, name; by default the profile's weight (cpu wherever "
		  "it has CPU time, else total)" },
		CP_NO_COMPENSATE_OPTION(no_compensate),
		{ CP_OPT_FLAG, 0, "srcline", &srcline, NULL,
		  "show the file:line each context was called from (the site column)" },
		CP_ADDRESSES_OPTION(addresses),
		CP_MANGLED_OPTION(so),
		{ CP_OPT_STRING, 0, "name-width", &name_width, "N",
		  "shorten longer names to N characters (templates first)" },
		CP_SYMBOL_OPTIONS(so),
		CP_PID_OPTION(so),
		{ CP_OPT_END },
	};

	/* --tui: the same files in callprof tui, which takes the options the two share. */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--tui")) {
			memmove(argv + i, argv + i + 1, (size_t)(argc - i) * sizeof(*argv));
			argv[0] = "tui";
			return cmd_tui(argc - 1, argv);
		}
	n = cp_parse_options(argc, argv, opts, report_usage, 0);
	cp_symbol_options__apply(&so, &ro, report_usage);
	if (flat + plist + !!callers + !!callees + !!lines + imbalance > 1)
		cp_usage_error(report_usage, "--flat, --plist, --callers, --callees, --lines and "
			       "--imbalance are alternatives");
	if (min_percent < 0 || min_percent > 100)
		cp_usage_error(report_usage, "--min-percent wants a number from 0 to 100, not %g",
			       min_percent);
	if (name_width)
		width = (int)cp_parse_number(name_width, 8, 1000, "--name-width", report_usage);
	if (sort && strcmp(sort, "name") && cp_metric__lookup(sort) < 0) {
		char all[256];

		cp_metric__list(NULL, all, sizeof(all));
		cp_usage_error(report_usage, "option '--sort' does not take '%s' (one of: %s, name)",
			       sort, all);
	}
	if (cp_view_check_fields(fields)) {
		cp_filter_options__release(&fo);
		cp_symbol_options__release(&so);
		return 129;
	}
	/* Last: it allocates (the tree view prunes by --min-percent itself: it folds nothing). */
	filter = cp_filter_options__parse(&fo, &threads, 0, report_usage);

	ro.threads = threads;
	ro.no_compensate = no_compensate;
	ro.addresses = addresses;
	ro.select_threads = (const char *const *)fo.select;
	rp = n ? cp_report_profile__load_many(argv, n, &ro) : cp_report_profile__load_many(dflt, 1, &ro);
	if (!rp || cp_view_filter__apply(filter, rp)) {
		cp_report_profile__free(rp);
		cp_view_filter__free(filter);
		cp_filter_options__release(&fo);
		cp_symbol_options__release(&so);
		return 1;
	}
	vo.min_percent = min_percent;
	vo.fields = fields;
	vo.srcline = srcline;
	vo.name_width = width;
	if (sort_key(rp, sort, flat, &vo)) {
		cp_report_profile__free(rp);
		cp_view_filter__free(filter);
		cp_filter_options__release(&fo);
		cp_symbol_options__release(&so);
		return 1;
	}
	if (imbalance) {
		ret = cp_view_imbalance(rp, &vo, stdout);
	} else if (plist) {
		ret = cp_view_plist(rp, &vo, stdout);
	} else if (flat) {
		ret = cp_view_flat(rp, &vo, stdout);
	} else if (lines) {
		vo.function = lines;
		ret = cp_view_lines(rp, &vo, stdout);
	} else if (callers || callees) {
		vo.function = callers ? callers : callees;
		ret = callers ? cp_view_callers(rp, &vo, stdout) : cp_view_callees(rp, &vo, stdout);
	} else {
		ret = cp_view_tree(rp, &vo, stdout);
	}
	cp_report_profile__free(rp);
	cp_view_filter__free(filter);
	cp_filter_options__release(&fo);
	cp_symbol_options__release(&so);
	return ret ? 1 : 0;
}
