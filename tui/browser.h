/*
 * browser.h - the terminal browser of `callprof tui` (browser.c, ncursesw):
 * loads one profile (several files as one) or two to compare, and shows
 * them until the user quits.  The command (cli/cmd-tui.c) parses the
 * options and checks that standard output is a terminal; everything on
 * the screen is the browser's, its model report/tui.h.
 */
#ifndef CP_TUI_BROWSER_H
#define CP_TUI_BROWSER_H

#include <stdint.h>

struct cp_report_opts;

/* What to browse and how to start; every pointer is borrowed until cp_browser__free. */
struct cp_browser_opts {
	const char *const *paths;	 /* the files; exactly two: diff mode, A then B */
	uint32_t npaths;		 /* how many paths (at least one) */
	const struct cp_report_opts *ro; /* loading options (copied; threads is set per load) */
	const char *const *focus;	 /* --focus patterns, NULL-terminated, or NULL */
	const char *const *hide;	 /* --hide patterns, NULL-terminated, or NULL */
	int regex;			 /* the patterns are extended regexes (--regex) */
	int each;			 /* start on the first thread (--threads=each; not diff) */
	const char *sort;		 /* --sort METRIC as given, or NULL: the weight */
	int imbalance;			 /* start in the imbalance view (--imbalance) */
};

struct cp_browser;

/*
 * Set the locale from the environment (the drawing measures UTF-8 by
 * display width) and load the files as o says, with o's filters, every
 * time the browser loads them again (its own focus and hide, the thread
 * switch).  NULL after an error line on stderr (a file that cannot be
 * loaded, a metric the profile lacks, a filter that leaves nothing).
 */
struct cp_browser *cp_browser__new(const struct cp_browser_opts *o);

/*
 * Take over the terminal (standard input and output) until q, Ctrl-C or a
 * signal; restores it on every way out.  The exit status: 0, or 128 + the
 * signal for SIGTERM and SIGHUP (a terminal that goes away counts as
 * SIGHUP); SIGINT is a quit, 0.
 */
int cp_browser__run(struct cp_browser *b);

/* Free b and every profile it loaded; NULL is fine. */
void cp_browser__free(struct cp_browser *b);

#endif
