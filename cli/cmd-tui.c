/*
 * cmd-tui.c - `callprof tui [options] FILE...`: an interactive browser of a
 * profile in the terminal (docs/callprof-tui.1.md).  This file takes the
 * options (report's filter and symbol option pieces) and refuses a
 * standard output that is no terminal; the browser - loading, drawing,
 * keys - is tui/browser.c.  `callprof report --tui` comes here too.
 */
#include <string.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/filter-options.h"
#include "cli/options.h"
#include "report/report.h"
#include "tui/browser.h"
#include "util/util.h"

static const char *const tui_usage[] = {
	"callprof tui [--threads=merged|each|SELECTORS] [--focus=FN] [--hide=PATTERN] [--regex] [--sort=METRIC] [--no-compensate] [--pid=PID] [FILE...]",
	"callprof tui [--focus=FN] [--hide=PATTERN] [--regex] [--sort=METRIC] [--no-compensate] A B",
	"callprof tui --imbalance [--focus=FN] [--hide=PATTERN] [--regex] [FILE]",
	NULL,
};

int cmd_tui(int argc, const char **argv)
{
	int threads = CP_THREADS_MERGED, no_compensate = 0, addresses = 0, imbalance = 0, n, ret = 0;
	const char *dflt[] = { "callprof.out" }, *sort = NULL;
	struct cp_filter_options fo = { 0 };
	struct cp_symbol_options so = { 0 };
	struct cp_report_opts ro;
	struct cp_browser_opts bo = { 0 };
	struct cp_view_filter *filter;
	struct cp_browser *b;
	const struct cp_option opts[] = {
		{ CP_OPT_LIST, 0, "threads", &fo.threads, "merged|each|SELECTORS",
		  "start with all threads merged (default) or the first thread; SELECTORS (thread "
		  "ids, globs on names, comma-separated) keep only those threads" },
		CP_FILTER_OPTIONS(fo),
		{ CP_OPT_STRING, 0, "sort", &sort, "METRIC",
		  "the metric to start with: total, self, cpu, wait, inactive, calls; by default "
		  "the profile's weight (cpu wherever it has CPU time, else total)" },
		{ CP_OPT_FLAG, 0, "imbalance", &imbalance, NULL,
		  "start in the imbalance view of a merged profile (key I): call paths by the time "
		  "the other inputs lost waiting for the slowest, as report --imbalance" },
		CP_NO_COMPENSATE_OPTION(no_compensate),
		CP_ADDRESSES_OPTION(addresses),
		CP_MANGLED_OPTION(so),
		CP_SYMBOL_OPTIONS(so),
		CP_PID_OPTION(so),
		{ CP_OPT_END },
	};

	memset(&ro, 0, sizeof(ro));
	n = cp_parse_options(argc, argv, opts, tui_usage, 0);
	cp_symbol_options__apply(&so, &ro, tui_usage);
	if (sort && cp_metric__lookup(sort) < 0) {
		char all[256];

		cp_metric__list(NULL, all, sizeof(all));
		cp_usage_error(tui_usage, "option '--sort' does not take '%s' (one of: %s)", sort,
			       all);
	}
	/* Checks the patterns; the browser makes its own filter from them each time it loads. */
	filter = cp_filter_options__parse(&fo, &threads, 0, tui_usage);
	cp_view_filter__free(filter);
	if (!isatty(STDOUT_FILENO)) {
		cp_error("tui: standard output is not a terminal (use callprof report)");
		ret = 1;
		goto out;
	}
	ro.no_compensate = no_compensate;
	ro.addresses = addresses;
	ro.select_threads = (const char *const *)fo.select;
	bo.paths = n ? argv : dflt;
	bo.npaths = n ? (uint32_t)n : 1;
	bo.ro = &ro;
	bo.focus = fo.focus;
	bo.hide = fo.hide;
	bo.regex = fo.regex;
	bo.each = threads == CP_THREADS_EACH;
	bo.sort = sort;
	bo.imbalance = imbalance;
	b = cp_browser__new(&bo);
	ret = b ? cp_browser__run(b) : 1;
	cp_browser__free(b);
out:
	cp_filter_options__release(&fo);
	cp_symbol_options__release(&so);
	return ret;
}
