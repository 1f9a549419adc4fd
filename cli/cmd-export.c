/*
 * cmd-export.c - `callprof export -f FORMAT`: write a profile in a format
 * other tools read.  Output goes to a temporary file renamed into place, so
 * an error never leaves a partial file behind.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/filter-options.h"
#include "cli/options.h"
#include "format/format.h"
#include "report/report.h"
#include "util/util.h"

static const char *const export_usage[] = {
	"callprof export -f folded [-m METRIC] [--max-size=SIZE] [-o OUT] [--threads=merged|each|SELECTORS] [--focus=FN] [--hide=PATTERN] [--regex] [--min-percent=P] [--no-compensate] [--pid=PID] [FILE...]",
	"callprof export -f speedscope [-m METRIC] [--max-size=SIZE] [-o OUT] [--threads=merged|each|SELECTORS] [--focus=FN] [--hide=PATTERN] [--regex] [--min-percent=P] [--no-compensate] [--pid=PID] [FILE...]",
	"callprof export -f json|callgrind|pprof|plist [--max-size=SIZE] [-o OUT] [--threads=merged|each|SELECTORS] [--focus=FN] [--hide=PATTERN] [--regex] [--min-percent=P] [--no-compensate] [--pid=PID] [FILE...]",
	"callprof export -f svg [--icicle] [--colors=heat|module] [-m METRIC] [-o OUT] [--threads=merged|each|SELECTORS] [--focus=FN] [--hide=PATTERN] [--regex] [--min-percent=P] [--no-compensate] [--pid=PID] [FILE...]",
	"callprof export -f html [-m METRIC] [-o OUT] [--threads=merged|each|SELECTORS] [--focus=FN] [--hide=PATTERN] [--regex] [--min-percent=P] [--no-compensate] [--pid=PID] [FILE...]",
	NULL,
};

enum {
	FMT_FOLDED, FMT_JSON, FMT_CALLGRIND, FMT_SPEEDSCOPE, FMT_PPROF, FMT_SVG, FMT_PLIST, FMT_HTML
};
static const char *const format_choices[] = { "folded", "json", "callgrind", "speedscope", "pprof",
					      "svg", "plist", "html", NULL };
/* In the order of enum cp_svg_colors. */
static const char *const svg_colors[] = { "heat", "module", NULL };

/* SIZE: a whole number of bytes, with K, M, G or T (powers of 1024); 0 or -1. */
static int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	char *end;
	unsigned long long v;
	const char *u;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end) {
		u = strchr(units, *end == 'k' ? 'K' : *end);
		if (!u || end[1])
			return -1;
		shift = 10 * (int)(u - units + 1);
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* n bytes for a message: "512 bytes", "3.2 GiB". */
static char *human_bytes(uint64_t n)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)n;
	int u = -1;

	if (n < 1024)
		return xstrfmt("%llu bytes", (unsigned long long)n);
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	return xstrfmt("%.1f %s", v, unit[u]);
}

/*
 * folded, pprof and plist write every context with its whole path:
 * quadratic in a chain's depth.  Refuse before writing when the estimate
 * passes max (docs/callprof-export.1.md, --max-size).
 */
static int check_size(const struct cp_report_profile *rp, int format, uint64_t max)
{
	static const char *const names[] = { [FMT_FOLDED] = "folded", [FMT_PPROF] = "pprof",
					     [FMT_PLIST] = "plist" };
	uint64_t est;
	char *h, *m;

	switch (format) {
	case FMT_FOLDED: /* "a;b;c 123\n" */
		est = cp_export_path_bytes(rp, 22, 1, 1);
		break;
	case FMT_PPROF: /* a location id per frame, held in memory (8 bytes) and packed */
		est = cp_export_path_bytes(rp, 64, 10, 0);
		break;
	case FMT_PLIST: /* "9\t..." per context, "10\tNAME\n" per frame */
		est = cp_export_path_bytes(rp, 40, 4, 1);
		break;
	default:
		return 0;
	}
	if (est <= max)
		return 0;
	h = human_bytes(est);
	m = human_bytes(max);
	cp_error("-f %s of '%s' would %s about %s (every calling context with its whole path), "
		 "over --max-size (%s): cut the tree (--min-percent, --focus, --hide), raise "
		 "--max-size, or use -f speedscope or json",
		 names[format], rp->pf->path, format == FMT_PPROF ? "need" : "write", h, m);
	free(h);
	free(m);
	return -1;
}

/*
 * Callgrind with one tree per thread: a file per thread, OUT-01, OUT-02,
 * ... (as Callgrind's --separate-threads names its parts), all written
 * and closed before any is renamed into place, and none left if one fails.
 */
static int callgrind_parts(struct cp_report_profile *rp, const char *out)
{
	struct cp_outfile **of = xcalloc(rp->ntrees, sizeof(*of));
	char **paths = xcalloc(rp->ntrees, sizeof(*paths));
	uint32_t i, done = 0;
	int ret = 0;

	if (!out || !strcmp(out, "-")) {
		free(of);
		free(paths);
		return cp_error("-f callgrind --threads=each writes a file per thread: give -o OUT");
	}
	for (i = 0; i < rp->ntrees && !ret; i++) {
		paths[i] = xstrfmt("%s-%02u", out, i + 1);
		of[i] = cp_outfile__open(paths[i], 0);
		if (!of[i])
			ret = -1;
		else
			ret = cp_export_callgrind(rp, i, cp_outfile__fp(of[i]));
		/* Closed now: a profile of thousands of threads would run out of descriptors. */
		if (!ret)
			ret = cp_outfile__close(of[i]);
	}
	for (i = 0; i < rp->ntrees && !ret; i++) {
		ret = cp_outfile__commit(of[i]); /* frees of[i], renamed or not */
		of[i] = NULL;
		if (!ret)
			done = i + 1;
	}
	if (ret) {
		for (i = 0; i < done; i++)
			unlink(paths[i]);
		for (i = 0; i < rp->ntrees; i++)
			if (of[i])
				cp_outfile__abort(of[i]);
	}
	for (i = 0; i < rp->ntrees; i++)
		free(paths[i]);
	free(paths);
	free(of);
	return ret;
}

int cmd_export(int argc, const char **argv)
{
	int format = -1, metric = -1, threads = CP_THREADS_MERGED, no_compensate = 0;
	int ret, n, mangled = 0, icicle = 0, colors = -1;
	double min_percent = 0;
	const char *out = NULL, *symfs = NULL, *max_size_arg = NULL, *metric_arg = NULL;
	uint64_t max_size = (uint64_t)4 << 30;
	const char **debug_dirs = NULL, *pid = NULL, *dflt[] = { "callprof.out" };
	struct cp_report_opts ro = { 0 };
	struct cp_report_profile *rp, *other = NULL;
	struct cp_outfile *of;
	struct cp_filter_options fo = { 0 };
	struct cp_filter *filter;
	const struct cp_option opts[] = {
		{ CP_OPT_CHOICE, 'f', "format", &format, "FORMAT",
		  "output format: folded, json, callgrind, speedscope, pprof, svg, plist or html",
		  format_choices },
		{ CP_OPT_FLAG, 0, "icicle", &icicle, NULL,
		  "svg: an icicle graph (root at the top), not a flame graph" },
		{ CP_OPT_CHOICE, 0, "colors", &colors, "heat|module",
		  "svg: colour frames by their self share (default) or by module", svg_colors },
		{ CP_OPT_STRING, 'm', "metric", &metric_arg, "METRIC",
		  "folded: the value (self by default; cpu, wait, inactive, samples: self's); svg, "
		  "html, speedscope: the weight (by default the profile's, as report's): calls, self, "
		  "total, cpu, wait, inactive, samples, self-cpu, self-wait, self-inactive, "
		  "self-samples" },
		{ CP_OPT_STRING, 'o', "output", &out, "OUT", "write to OUT instead of stdout" },
		{ CP_OPT_STRING, 0, "max-size", &max_size_arg, "SIZE",
		  "folded, pprof, plist: refuse to write more than about SIZE bytes (K, M, G, T; "
		  "default 4G)" },
		{ CP_OPT_LIST, 0, "threads", &fo.threads, "merged|each|SELECTORS",
		  "add equal paths of all threads, or prefix each path with its thread; SELECTORS "
		  "(thread ids, globs on names, comma-separated) keep only those threads" },
		CP_FILTER_OPTIONS(fo),
		{ CP_OPT_DOUBLE, 0, "min-percent", &min_percent, "P",
		  "fold contexts below P% of their thread's weight (-m's, or the profile's: total or "
		  "cpu) into their caller (default 0)" },
		{ CP_OPT_FLAG, 0, "no-compensate", &no_compensate, NULL,
		  "raw times: do not subtract the calibrated hook overhead" },
		{ CP_OPT_FLAG, 0, "mangled", &mangled, NULL, "raw C++ symbol names, not demangled" },
		{ CP_OPT_LIST, 0, "debug-dir", &debug_dirs, "DIR", "also look for debug files in DIR" },
		{ CP_OPT_STRING, 0, "symfs", &symfs, "DIR",
		  "look for the recorded binaries under DIR (a copy of the recording machine's files)" },
		{ CP_OPT_STRING, 0, "pid", &pid, "PID", "of several profiles, only those of process PID" },
		{ CP_OPT_END },
	};

	n = cp_parse_options(argc, argv, opts, export_usage, 0);
	ro.pid = cp_parse_pid(pid, "--pid", export_usage);
	if (out && !*out)
		cp_usage_error(export_usage, "-o needs a file name");
	if (format < 0)
		cp_usage_error(export_usage,
			       "export needs a format: -f folded, json, callgrind, speedscope, pprof, svg, "
			       "plist or html");
	if (icicle && format != FMT_SVG)
		cp_usage_error(export_usage, "--icicle is for -f svg only");
	if (colors >= 0 && format != FMT_SVG)
		cp_usage_error(export_usage, "--colors is for -f svg only");
	if (metric_arg && format != FMT_FOLDED && format != FMT_SVG && format != FMT_HTML &&
	    format != FMT_SPEEDSCOPE)
		cp_usage_error(export_usage, "-m/--metric is for -f folded, svg, html and speedscope");
	if (metric_arg && cp_metric__lookup(metric_arg) < 0) {
		char all[256];

		cp_metric__list(NULL, all, sizeof(all));
		cp_usage_error(export_usage, "option '-m' does not take '%s' (one of: %s)", metric_arg,
			       all);
	}
	if (max_size_arg && parse_size(max_size_arg, &max_size))
		cp_usage_error(export_usage, "--max-size wants a number of bytes (K, M, G, T), not '%s'",
			       max_size_arg);
	if (min_percent < 0 || min_percent > 100)
		cp_usage_error(export_usage, "--min-percent wants a number from 0 to 100, not %g",
			       min_percent);
	filter = cp_filter_options__parse(&fo, &threads, min_percent, export_usage);
	ro.select_threads = (const char *const *)fo.select;
	ro.threads = threads;
	ro.debug_dirs = debug_dirs;
	ro.no_compensate = no_compensate;
	ro.symfs = symfs;
	ro.mangled = mangled;
	/* Before the work of loading: a bad output name, or one of the inputs, fails at once. */
	for (int i = 0; i < (n ? n : 1); i++)
		cp_outfile__add_input(n ? argv[i] : dflt[0]);
	if (out && strcmp(out, "-") && cp_outfile__check(out, 0)) {
		cp_filter__free(filter);
		cp_filter_options__release(&fo);
		free(debug_dirs);
		return 1;
	}
	rp = n ? cp_report_profile__load_many(argv, n, &ro) : cp_report_profile__load_many(dflt, 1, &ro);
	if (!rp) {
		ret = -1;
		goto out;
	}
	/*
	 * The profile's weight, or -m's if the profile has it: what svg, html
	 * and speedscope weigh by, and what --min-percent folds by (folded's
	 * default value, self, folds by the profile's weight).
	 */
	if (metric_arg)
		metric = cp_metric__parse(rp, metric_arg, "-m");
	else
		metric = format == FMT_FOLDED ? (rp->timed ? CP_METRIC_SELF : CP_METRIC_CALLS) :
			 (int)cp_report_profile__weight(rp, NULL, 0);
	if (metric < 0) {
		ret = -1;
		goto out;
	}
	cp_filter__set_weight(filter, metric_arg || format != FMT_FOLDED ?
					      (enum cp_metric)metric :
					      cp_report_profile__weight(rp, NULL, 0));
	/* Before any output is opened: a failing filter leaves no file behind. */
	if (cp_filter__apply(filter, rp)) {
		ret = -1;
		goto out;
	}
	/* The page's thread switch: the threads' trees and the merged one. */
	if (format == FMT_HTML &&
	    (rp->threads == CP_THREADS_EACH ? rp->ntrees : rp->trees[0].nthreads) > 1) {
		ro.threads = rp->threads == CP_THREADS_EACH ? CP_THREADS_MERGED : CP_THREADS_EACH;
		other = n ? cp_report_profile__load_many(argv, n, &ro) :
			    cp_report_profile__load_many(dflt, 1, &ro);
		if (!other || cp_filter__apply(filter, other)) {
			ret = -1;
			goto out;
		}
	}
	if (check_size(rp, format, max_size)) {
		ret = -1;
		goto out;
	}
	if (format == FMT_CALLGRIND && rp->ntrees > 1) {
		ret = callgrind_parts(rp, out);
		goto out;
	}
	of = cp_outfile__open(out, 0);
	if (!of) {
		ret = -1;
		goto out;
	}
	switch (format) {
	case FMT_JSON:
		ret = cp_export_json(rp, cp_outfile__fp(of));
		break;
	case FMT_CALLGRIND:
		ret = cp_export_callgrind(rp, 0, cp_outfile__fp(of));
		break;
	case FMT_SPEEDSCOPE:
		ret = cp_export_speedscope(rp, metric, cp_outfile__fp(of));
		break;
	case FMT_PPROF:
		ret = cp_export_pprof(rp, cp_outfile__fp(of));
		break;
	case FMT_SVG:
		ret = cp_export_svg(rp, icicle, metric, colors < 0 ? CP_SVG_HEAT : colors,
				    cp_outfile__fp(of));
		break;
	case FMT_PLIST:
		ret = cp_export_plist(rp, cp_outfile__fp(of));
		break;
	case FMT_HTML:
		ret = cp_export_html(rp, other, metric, cp_outfile__fp(of));
		break;
	default:
		ret = cp_export_folded(rp, metric, cp_outfile__fp(of));
		break;
	}
	if (ret)
		cp_outfile__abort(of);
	else
		ret = cp_outfile__commit(of);
out:
	cp_report_profile__free(rp);
	cp_report_profile__free(other);
	cp_filter__free(filter);
	cp_filter_options__release(&fo);
	free(debug_dirs);
	return ret ? 1 : 0;
}
