/*
 * cmd-diff.c - `callprof diff A B`: what changed between two profiles, call
 * path by call path, and --fail-if conditions a CI job can gate on.
 *
 * A condition that holds is not an error: the diff is printed as usual,
 * one line per condition goes to stderr, and the exit status is
 * CP_DIFF_EXIT_FAIL, apart from errors (1) and usage errors (129).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/builtin.h"
#include "cli/filter-options.h"
#include "cli/options.h"
#include "format/format.h"
#include "report/diff.h"
#include "report/report.h"
#include "util/util.h"

#define CP_DIFF_EXIT_FAIL 3

static const char *const diff_usage[] = {
	"callprof diff [--min-percent=P] [--all] [--fields=LIST] [--limit=N] [--fail-if=COND]... [--no-compensate] A B",
	NULL,
};

/* Diffs compare call paths; a coverage profile has none (only which functions ran). */
static int check_mode(const struct cp_report_profile *rp)
{
	if (rp->pf->meta.mode == CP_MODE_COVERAGE)
		return cp_error("profile '%s' was recorded with --mode=coverage: it has no call paths "
			     "or counts to compare", rp->pf->path);
	return 0;
}

int cmd_diff(int argc, const char **argv)
{
	int all = 0, no_compensate = 0, ret = 0, n;
	double min_percent = 1;
	const char *fields = NULL, *limit_arg = NULL;
	const char **fail_if = NULL;
	struct cp_symbol_options so = { 0 };
	struct cp_diff_cond *conds = NULL;
	size_t nconds = 0;
	struct cp_report_opts ro = { 0 };
	struct cp_diff_print_opts po = { 0 };
	struct cp_report_profile *a = NULL, *b = NULL;
	struct cp_diff *d = NULL;
	const struct cp_option opts[] = {
		{ CP_OPT_DOUBLE, 0, "min-percent", &min_percent, "P",
		  "time changes below P% of the larger weight (cpu, or total) count as none "
		  "(default 1)" },
		{ CP_OPT_FLAG, 0, "all", &all, NULL, "also show the paths that did not change" },
		{ CP_OPT_STRING, 0, "fields", &fields, "LIST",
		  "columns: METRIC-a, METRIC-b, METRIC-delta, METRIC-ratio (METRIC: calls, self, "
		  "total, cpu, wait, inactive, samples, self-cpu, self-wait, self-inactive, "
		  "self-samples), status, path" },
		{ CP_OPT_STRING, 0, "limit", &limit_arg, "N", "show the N most changed paths only" },
		{ CP_OPT_LIST, 0, "fail-if", &fail_if, "COND",
		  "exit 3 if COND holds: calls-changed, paths-changed, METRIC>+N[%|UNIT], "
		  "METRIC<-N[%|UNIT] (METRIC as in --fields)" },
		CP_NO_COMPENSATE_OPTION(no_compensate),
		CP_SYMBOL_OPTIONS(so),
		{ CP_OPT_END },
	};

	/* Everything the command line can get wrong is checked before loading. */
	n = cp_parse_options(argc, argv, opts, diff_usage, 0);
	if (n != 2)
		cp_usage_error(diff_usage, "diff compares two profiles, A (before) and B (after); "
			       "%d given", n);
	if (min_percent < 0 || min_percent > 100)
		cp_usage_error(diff_usage, "--min-percent wants a number from 0 to 100, not %g",
			       min_percent);
	if (limit_arg && (cp_parse_u64(limit_arg, &po.limit) || !po.limit))
		cp_usage_error(diff_usage, "--limit wants a positive number, not '%s'", limit_arg);
	if (cp_diff_check_fields(fields)) {
		cp_symbol_options__release(&so);
		free(fail_if);
		return 129;
	}
	/* Checked before anything is allocated: a usage error leaves nothing behind. */
	for (; fail_if && fail_if[nconds]; nconds++) {
		struct cp_diff_cond c;
		const char *why;

		if (cp_diff_cond__parse(&c, fail_if[nconds], &why))
			cp_usage_error(diff_usage, "--fail-if '%s': %s", fail_if[nconds], why);
	}
	conds = xcalloc(nconds ? nconds : 1, sizeof(*conds));
	for (size_t i = 0; i < nconds; i++) {
		const char *why;

		cp_diff_cond__parse(&conds[i], fail_if[i], &why);
	}

	ro.threads = CP_THREADS_MERGED;
	cp_symbol_options__apply(&so, &ro, diff_usage);
	ro.no_compensate = no_compensate;
	a = cp_report_profile__load(argv[0], &ro);
	if (!a || check_mode(a))
		goto fail;
	b = cp_report_profile__load(argv[1], &ro);
	if (!b || check_mode(b))
		goto fail;
	for (size_t i = 0; i < nconds; i++) {
		const struct cp_report_profile *untimed = !a->timed ? a : !b->timed ? b : NULL;

		if (cp_diff_cond__timed(&conds[i]) && untimed) {
			cp_error("--fail-if '%s' compares times, but profile '%s' has none (recorded with "
			      "--mode=counting)", conds[i].text, untimed->pf->path);
			goto fail;
		}
	}

	d = cp_diff__new(a, b, min_percent);
	for (size_t i = 0; i < nconds; i++)
		if (cp_diff_cond__check(d, &conds[i]))
			goto fail;
	po.fields = fields;
	po.all = all;
	if (cp_diff__print(d, &po, stdout))
		goto fail;
	/* The table first: stdout and stderr may go to one terminal or log. */
	fflush(stdout);
	for (size_t i = 0; i < nconds; i++)
		if (cp_diff__check(d, &conds[i], stderr))
			ret = CP_DIFF_EXIT_FAIL;
	/* A lost table is an error (1), not a condition that held (3). */
	if (ret && ferror(stdout) && errno != EPIPE)
		ret = 1;
	goto out;

fail:
	ret = 1;
out:
	cp_diff__free(d);
	cp_report_profile__free(b);
	cp_report_profile__free(a);
	free(conds);
	free(fail_if);
	cp_symbol_options__release(&so);
	return ret;
}
