/*
 * filter-options.h - the options that report, export and diff share: the
 * report-time filters --threads (the mode and thread selectors), --focus,
 * --hide and --regex (docs/callprof-report.1.md, FILTERS), and the
 * symbol and loading options --debug-dir, --symfs, --mangled and --pid.
 */
#ifndef CP_CLI_FILTER_OPTIONS_H
#define CP_CLI_FILTER_OPTIONS_H

struct cp_view_filter;
struct cp_report_opts;

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
	  "only the call paths through the functions FN names (a name, unqualified or without "    \
	  "parameters, or a glob), with their callers" },                                          \
	{ CP_OPT_LIST, 0, "hide", &(fo).hide, "PATTERN",                                           \
	  "merge the functions PATTERN names (as --focus) into their callers" },                   \
	{ CP_OPT_FLAG, 0, "regex", &(fo).regex, NULL,                                              \
	  "--focus and --hide patterns are POSIX extended regular expressions" }

/*
 * Parse o->threads into *mode (last word wins, *mode unchanged without
 * one) and o->select, and compile the patterns into a filter that also
 * folds contexts below min_percent (0: none).  A bad value or regex is a
 * usage error (exit 129).
 */
struct cp_view_filter *cp_filter_options__parse(struct cp_filter_options *o, int *mode,
						double min_percent, const char *const *usage);
void cp_filter_options__release(struct cp_filter_options *o);

struct cp_symbol_options {
	const char **debug_dirs; /* --debug-dir values (CP_OPT_LIST) */
	const char *symfs;	 /* --symfs DIR, or NULL */
	int mangled;		 /* --mangled: raw C++ names */
	const char *pid;	 /* --pid as given, or NULL */
};

/*
 * The --debug-dir and --symfs entries of a struct cp_option table, filling
 * so (a struct cp_symbol_options): where the symbolizer looks.
 */
#define CP_SYMBOL_OPTIONS(so)                                                                      \
	{ CP_OPT_LIST, 0, "debug-dir", &(so).debug_dirs, "DIR",                                    \
	  "also look for debug files in DIR" },                                                    \
	{ CP_OPT_STRING, 0, "symfs", &(so).symfs, "DIR",                                           \
	  "look for the recorded binaries under DIR (a copy of the recording machine's files)" }

/* The --mangled entry, for the commands that print names. */
#define CP_MANGLED_OPTION(so)                                                                      \
	{ CP_OPT_FLAG, 0, "mangled", &(so).mangled, NULL, "raw C++ symbol names, not demangled" }

/* The --no-compensate entry, for the commands that show one profile's times or two. */
#define CP_NO_COMPENSATE_OPTION(var)                                                               \
	{ CP_OPT_FLAG, 0, "no-compensate", &(var), NULL,                                           \
	  "raw times: do not subtract the calibrated hook overhead" }

/* The --addresses entry, for the commands that show names on a screen. */
#define CP_ADDRESSES_OPTION(var)                                                                   \
	{ CP_OPT_FLAG, 0, "addresses", &(var), NULL,                                               \
	  "show MODULE+0xOFFSET next to every function name" }

/* The --pid entry, for the commands that load several profiles as one. */
#define CP_PID_OPTION(so)                                                                          \
	{ CP_OPT_STRING, 0, "pid", &(so).pid, "PID", "of several profiles, only those of process PID" }

/*
 * Check so->pid (a usage error, exit 129, unless a positive number) and
 * copy so into ro.  ro borrows so->debug_dirs until
 * cp_symbol_options__release().
 */
void cp_symbol_options__apply(const struct cp_symbol_options *so, struct cp_report_opts *ro,
			      const char *const *usage);
void cp_symbol_options__release(struct cp_symbol_options *so);

#endif /* CP_CLI_FILTER_OPTIONS_H */
