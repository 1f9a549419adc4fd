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
#include "util/strbuf.h"
#include "util/util.h"

/* What an exporter needs and accepts besides the options every format takes. */
enum export_flags {
	EXPORT_METRIC = 1 << 0,	   /* -m: the weight (or folded's value) */
	EXPORT_SVG_STYLE = 1 << 1, /* --icicle and --colors */
	EXPORT_VALUE = 1 << 2,	   /* -m is the value written (the weight's exclusive part by
				    * default), not the weight */
	EXPORT_PER_THREAD = 1 << 3, /* --threads=each: a file per tree, OUT-01, OUT-02, ... */
	EXPORT_BOTH_MODES = 1 << 4, /* also the trees in the other --threads mode (a switch) */
	EXPORT_WHOLE_PATHS = 1 << 5, /* implied by a path_cost: --max-size applies */
};

/* What an exporter writes from. */
struct export_args {
	struct cp_report_profile *rp;	 /* the loaded, filtered profile */
	struct cp_report_profile *other; /* EXPORT_BOTH_MODES: the other mode, or NULL */
	enum cp_metric metric;		 /* -m, or its default (EXPORT_VALUE, or the weight) */
	uint32_t tree;			 /* EXPORT_PER_THREAD: the tree to write */
	int icicle;			 /* --icicle */
	enum cp_svg_colors colors;	 /* --colors */
};

/*
 * The size of an output that holds every context with its whole path, for
 * --max-size: cp_export_path_bytes's per_context, per_frame and
 * name_factor, and the verb of the error ("write", or "need" for memory).
 */
struct path_cost {
	uint64_t per_context, per_frame, name_factor;
	const char *verb;
};

struct exporter {
	const char *name;			      /* -f NAME */
	int (*fn)(const struct export_args *a, FILE *fp); /* 0, or -1 after an error */
	unsigned flags;				      /* enum export_flags */
	const char *usage;			      /* the format's own options, for -h */
	const struct path_cost *cost;		      /* --max-size applies; NULL: ignored */
};

static int export_folded(const struct export_args *a, FILE *fp)
{
	return cp_export_folded(a->rp, a->metric, fp);
}

static int export_json(const struct export_args *a, FILE *fp)
{
	return cp_export_json(a->rp, fp);
}

static int export_callgrind(const struct export_args *a, FILE *fp)
{
	return cp_export_callgrind(a->rp, a->tree, a->metric, fp);
}

static int export_speedscope(const struct export_args *a, FILE *fp)
{
	return cp_export_speedscope(a->rp, a->metric, fp);
}

static int export_pprof(const struct export_args *a, FILE *fp)
{
	return cp_export_pprof(a->rp, a->metric, fp);
}

static int export_svg(const struct export_args *a, FILE *fp)
{
	return cp_export_svg(a->rp, a->icicle, a->metric, a->colors, fp);
}

static int export_plist(const struct export_args *a, FILE *fp)
{
	return cp_export_plist(a->rp, fp);
}

static int export_html(const struct export_args *a, FILE *fp)
{
	return cp_export_html(a->rp, a->other, a->metric, fp);
}

static const struct path_cost folded_cost = { 22, 1, 1, "write" }; /* "a;b;c 123\n" */
/* A location id per frame, held in memory (8 bytes) and packed. */
static const struct path_cost pprof_cost = { 64, 10, 0, "need" };
static const struct path_cost plist_cost = { 40, 4, 1, "write" }; /* "9\t..", "10\tNAME\n" */

/*
 * The formats, in the order -h and the messages list them.  A format is an
 * entry here and its function; formats with the same usage options share
 * a usage line.
 */
static const struct exporter exporters[] = {
	{ "folded", export_folded, EXPORT_METRIC | EXPORT_VALUE, "[-m METRIC] [--max-size=SIZE]",
	  &folded_cost },
	{ "json", export_json, 0, "[--max-size=SIZE]" },
	{ "callgrind", export_callgrind, EXPORT_METRIC | EXPORT_PER_THREAD,
	  "[-m METRIC] [--max-size=SIZE]" },
	{ "speedscope", export_speedscope, EXPORT_METRIC, "[-m METRIC] [--max-size=SIZE]" },
	{ "pprof", export_pprof, EXPORT_METRIC, "[-m METRIC] [--max-size=SIZE]", &pprof_cost },
	{ "svg", export_svg, EXPORT_METRIC | EXPORT_SVG_STYLE,
	  "[--icicle] [--colors=heat|module] [-m METRIC]" },
	{ "plist", export_plist, 0, "[--max-size=SIZE]", &plist_cost },
	{ "html", export_html, EXPORT_METRIC | EXPORT_BOTH_MODES, "[-m METRIC]" },
};
#define NEXPORTERS (sizeof(exporters) / sizeof(exporters[0]))

/* The options of every format, after each usage line's own. */
#define EXPORT_COMMON_USAGE                                                                        \
	"[-o OUT] [--threads=merged|each|SELECTORS] [--focus=FN] [--hide=PATTERN] [--regex] "      \
	"[--min-percent=P] [--no-compensate] [--pid=PID] [FILE...]"

/* Filled from exporters[] by init_tables(). */
static const char *export_usage[NEXPORTERS + 1];
static const char *format_choices[NEXPORTERS + 1];
/* In the order of enum cp_svg_colors. */
static const char *const svg_colors[] = { "heat", "module", NULL };

/* Whether e has all of flags. */
static int has(const struct exporter *e, unsigned flags)
{
	return ((e->flags | (e->cost ? EXPORT_WHOLE_PATHS : 0)) & flags) == flags;
}

/*
 * The names of the formats with all of flags (0: all formats) into buf:
 * "svg", "json or pprof", "folded, svg and html" (with last "or" or "and").
 */
static const char *format_list(char *buf, size_t size, unsigned flags, const char *last)
{
	size_t n = 0, k = 0, len = 0;

	for (size_t i = 0; i < NEXPORTERS; i++)
		n += has(&exporters[i], flags);
	buf[0] = '\0';
	for (size_t i = 0; i < NEXPORTERS; i++) {
		if (!has(&exporters[i], flags))
			continue;
		k++;
		len += snprintf(buf + len, len < size ? size - len : 0, "%s%s",
				k == 1 ? "" : k == n ? last : ", ", exporters[i].name);
	}
	if (len >= size)
		BUG("format list longer than %zu bytes", size);
	return buf;
}

/*
 * The usage lines and the -f choices from exporters[]: a line per
 * distinct usage string, in the order of its first format, naming all the
 * formats that share it ("-f json|callgrind").
 */
static void init_tables(void)
{
	size_t nlines = 0;

	for (size_t i = 0; i < NEXPORTERS; i++) {
		struct strbuf sb = STRBUF_INIT;
		size_t j;

		format_choices[i] = exporters[i].name;
		for (j = 0; j < i; j++)
			if (!strcmp(exporters[j].usage, exporters[i].usage))
				break;
		if (j < i)
			continue;
		strbuf_addf(&sb, "callprof export -f %s", exporters[i].name);
		for (j = i + 1; j < NEXPORTERS; j++)
			if (!strcmp(exporters[j].usage, exporters[i].usage))
				strbuf_addf(&sb, "|%s", exporters[j].name);
		strbuf_addf(&sb, " %s%s" EXPORT_COMMON_USAGE, exporters[i].usage,
			    *exporters[i].usage ? " " : "");
		export_usage[nlines++] = strbuf_detach(&sb, NULL);
	}
}

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
 * Formats with a path_cost write every context with its whole path:
 * quadratic in a chain's depth.  Refuse before writing when the estimate
 * passes max (docs/callprof-export.1.md, --max-size).
 */
static int check_size(const struct cp_report_profile *rp, const struct exporter *e, uint64_t max)
{
	const struct path_cost *c = e->cost;
	uint64_t est;
	char *h, *m;

	if (!c)
		return 0;
	est = cp_export_path_bytes(rp, c->per_context, c->per_frame, c->name_factor);
	if (est <= max)
		return 0;
	h = human_bytes(est);
	m = human_bytes(max);
	cp_error("-f %s of '%s' would %s about %s (every calling context with its whole path), "
		 "over --max-size (%s): cut the tree (--min-percent, --focus, --hide), raise "
		 "--max-size, or use -f speedscope or json",
		 e->name, rp->pf->path, c->verb, h, m);
	free(h);
	free(m);
	return -1;
}

/*
 * An EXPORT_PER_THREAD format (callgrind) with one tree per thread: a file
 * per thread, OUT-01, OUT-02, ... (as Callgrind's --separate-threads names
 * its parts), all written and closed before any is renamed into place, and
 * none left if one fails.
 */
static int per_thread_parts(const struct exporter *e, struct export_args *a, const char *out)
{
	struct cp_report_profile *rp = a->rp;
	struct cp_outfile **of = xcalloc(rp->ntrees, sizeof(*of));
	char **paths = xcalloc(rp->ntrees, sizeof(*paths));
	uint32_t i, done = 0;
	int ret = 0;

	if (!out || !strcmp(out, "-")) {
		free(of);
		free(paths);
		return cp_error("-f %s --threads=each writes a file per thread: give -o OUT",
				e->name);
	}
	for (i = 0; i < rp->ntrees && !ret; i++) {
		paths[i] = xstrfmt("%s-%02u", out, i + 1);
		of[i] = cp_outfile__open(paths[i], 0);
		if (!of[i]) {
			ret = -1;
		} else {
			a->tree = i;
			ret = e->fn(a, cp_outfile__fp(of[i]));
		}
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
	int ret, n, icicle = 0, colors = -1;
	double min_percent = 0;
	const char *out = NULL, *max_size_arg = NULL, *metric_arg = NULL;
	uint64_t max_size = (uint64_t)4 << 30;
	const char *dflt[] = { "callprof.out" };
	struct cp_report_opts ro = { 0 };
	struct cp_report_profile *rp, *other = NULL;
	const struct exporter *e;
	struct export_args args = { 0 };
	struct cp_outfile *of;
	char all_formats[128], f_help[160], list[128], size_help[200];
	struct cp_filter_options fo = { 0 };
	struct cp_symbol_options so = { 0 };
	struct cp_view_filter *filter;
	const struct cp_option opts[] = {
		{ CP_OPT_CHOICE, 'f', "format", &format, "FORMAT", f_help, format_choices },
		{ CP_OPT_FLAG, 0, "icicle", &icicle, NULL,
		  "svg: an icicle graph (root at the top), not a flame graph" },
		{ CP_OPT_CHOICE, 0, "colors", &colors, "heat|module",
		  "svg: colour frames by their self share (default) or by module", svg_colors },
		{ CP_OPT_STRING, 'm', "metric", &metric_arg, "METRIC",
		  "the weight (by default the profile's, as report's: cpu where it has CPU time): "
		  "what svg, html and speedscope weigh by, pprof's first sample type, callgrind's "
		  "first event; folded: the value (the weight's exclusive part by default; cpu, "
		  "wait, inactive, samples: self's): calls, self, total, cpu, wait, inactive, "
		  "samples, self-cpu, self-wait, self-inactive, self-samples" },
		{ CP_OPT_STRING, 'o', "output", &out, "OUT", "write to OUT instead of stdout" },
		{ CP_OPT_STRING, 0, "max-size", &max_size_arg, "SIZE", size_help },
		{ CP_OPT_LIST, 0, "threads", &fo.threads, "merged|each|SELECTORS",
		  "add equal paths of all threads, or prefix each path with its thread; SELECTORS "
		  "(thread ids, globs on names, comma-separated) keep only those threads" },
		CP_FILTER_OPTIONS(fo),
		{ CP_OPT_DOUBLE, 0, "min-percent", &min_percent, "P",
		  "fold contexts below P% of their thread's weight (-m's, or the profile's: cpu or "
		  "total) into their caller (default 0)" },
		CP_NO_COMPENSATE_OPTION(no_compensate),
		CP_MANGLED_OPTION(so),
		CP_SYMBOL_OPTIONS(so),
		CP_PID_OPTION(so),
		{ CP_OPT_END },
	};

	init_tables();
	format_list(all_formats, sizeof(all_formats), 0, " or ");
	snprintf(f_help, sizeof(f_help), "output format: %s", all_formats);
	snprintf(size_help, sizeof(size_help),
		 "%s: refuse to write more than about SIZE bytes (K, M, G, T; default 4G)",
		 format_list(list, sizeof(list), EXPORT_WHOLE_PATHS, ", "));
	n = cp_parse_options(argc, argv, opts, export_usage, 0);
	cp_symbol_options__apply(&so, &ro, export_usage);
	if (out && !*out)
		cp_usage_error(export_usage, "-o needs a file name");
	if (format < 0)
		cp_usage_error(export_usage, "export needs a format: -f %s", all_formats);
	e = &exporters[format];
	if (icicle && !has(e, EXPORT_SVG_STYLE))
		cp_usage_error(export_usage, "--icicle is for -f %s only",
			       format_list(list, sizeof(list), EXPORT_SVG_STYLE, " and "));
	if (colors >= 0 && !has(e, EXPORT_SVG_STYLE))
		cp_usage_error(export_usage, "--colors is for -f %s only",
			       format_list(list, sizeof(list), EXPORT_SVG_STYLE, " and "));
	if (metric_arg && !has(e, EXPORT_METRIC))
		cp_usage_error(export_usage, "-m/--metric is for -f %s",
			       format_list(list, sizeof(list), EXPORT_METRIC, " and "));
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
	ro.no_compensate = no_compensate;
	/* Before the work of loading: a bad output name, or one of the inputs, fails at once. */
	for (int i = 0; i < (n ? n : 1); i++)
		cp_outfile__add_input(n ? argv[i] : dflt[0]);
	if (out && strcmp(out, "-") && cp_outfile__check(out, 0)) {
		cp_view_filter__free(filter);
		cp_filter_options__release(&fo);
		cp_symbol_options__release(&so);
		return 1;
	}
	rp = n ? cp_report_profile__load_many(argv, n, &ro) : cp_report_profile__load_many(dflt, 1, &ro);
	if (!rp) {
		ret = -1;
		goto out;
	}
	/*
	 * The profile's weight (the report's), or -m's if the profile has it:
	 * what every format weighs by first and --min-percent folds by;
	 * folded writes its exclusive part (self, self-cpu) by default.
	 */
	if (metric_arg)
		metric = cp_metric__parse(rp, metric_arg, "-m");
	else
		metric = has(e, EXPORT_VALUE) ?
				 (int)cp_metric__exclusive(cp_report_profile__weight(rp, NULL, 0)) :
				 (int)cp_report_profile__weight(rp, NULL, 0);
	if (metric < 0) {
		ret = -1;
		goto out;
	}
	cp_view_filter__set_weight(filter, (enum cp_metric)metric);
	/* Before any output is opened: a failing filter leaves no file behind. */
	if (cp_view_filter__apply(filter, rp)) {
		ret = -1;
		goto out;
	}
	/* The page's thread switch: the threads' trees and the merged one. */
	if (has(e, EXPORT_BOTH_MODES) &&
	    (rp->threads == CP_THREADS_EACH ? rp->ntrees : rp->trees[0].nthreads) > 1) {
		ro.threads = rp->threads == CP_THREADS_EACH ? CP_THREADS_MERGED : CP_THREADS_EACH;
		other = n ? cp_report_profile__load_many(argv, n, &ro) :
			    cp_report_profile__load_many(dflt, 1, &ro);
		if (!other || cp_view_filter__apply(filter, other)) {
			ret = -1;
			goto out;
		}
	}
	if (check_size(rp, e, max_size)) {
		ret = -1;
		goto out;
	}
	args.rp = rp;
	args.other = other;
	args.metric = (enum cp_metric)metric;
	args.icicle = icicle;
	args.colors = colors < 0 ? CP_SVG_HEAT : (enum cp_svg_colors)colors;
	if (has(e, EXPORT_PER_THREAD) && rp->ntrees > 1) {
		ret = per_thread_parts(e, &args, out);
		goto out;
	}
	of = cp_outfile__open(out, 0);
	if (!of) {
		ret = -1;
		goto out;
	}
	ret = e->fn(&args, cp_outfile__fp(of));
	if (ret)
		cp_outfile__abort(of);
	else
		ret = cp_outfile__commit(of);
out:
	cp_report_profile__free(rp);
	cp_report_profile__free(other);
	cp_view_filter__free(filter);
	cp_filter_options__release(&fo);
	cp_symbol_options__release(&so);
	return ret ? 1 : 0;
}
