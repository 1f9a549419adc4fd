/*
 * filter-options.h - the report-time filter options that report and export
 * share: --threads (the mode and thread selectors), --focus, --hide and
 * --regex (docs/callprof-report.1.md, FILTERS).
 */
#ifndef CP_CLI_FILTER_OPTIONS_H
#define CP_CLI_FILTER_OPTIONS_H

struct cp_filter;

struct cp_filter_options {
	const char **threads; /* --threads values as given (CP_OPT_LIST) */
	const char **focus;   /* --focus patterns (CP_OPT_LIST) */
	const char **hide;    /* --hide patterns (CP_OPT_LIST) */
	int regex;	      /* --regex: the patterns are extended regexes */
	char **select;	      /* parsed: thread selectors, NULL-terminated, or NULL */
};

/*
 * The --focus, --hide and --regex entries of a struct cp_option table,
 * filling fo (a struct cp_filter_options); each command words --threads
 * itself.
 */
#define CP_FILTER_OPTIONS(fo)                                                                      \
	{ CP_OPT_LIST, 0, "focus", &(fo).focus, "FN",                                              \
	  "only the call paths through a function matching FN (glob), with its callers" },         \
	{ CP_OPT_LIST, 0, "hide", &(fo).hide, "PATTERN",                                           \
	  "merge the functions matching PATTERN (glob) into their callers" },                      \
	{ CP_OPT_FLAG, 0, "regex", &(fo).regex, NULL,                                              \
	  "--focus and --hide patterns are POSIX extended regular expressions" }

/*
 * Parse o->threads into *mode (last word wins, *mode unchanged without
 * one) and o->select, and compile the patterns into a filter that also
 * folds contexts below min_percent (0: none).  A bad value or regex is a
 * usage error (exit 129).
 */
struct cp_filter *cp_filter_options__parse(struct cp_filter_options *o, int *mode,
					   double min_percent, const char *const *usage);
void cp_filter_options__release(struct cp_filter_options *o);

#endif /* CP_CLI_FILTER_OPTIONS_H */
