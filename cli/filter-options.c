/*
 * filter-options.c - see filter-options.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/filter-options.h"
#include "cli/options.h"
#include "report/report.h"
#include "util/util.h"

/* value's comma-separated words: merged and each set *mode, the others are selectors. */
static void parse_threads(const char *value, int *mode, char ***sel, size_t *n)
{
	char *copy = xstrdup(value), *p = copy, *tok;

	while ((tok = strsep(&p, ",")) != NULL) {
		if (!strcmp(tok, "merged")) {
			*mode = CP_THREADS_MERGED;
		} else if (!strcmp(tok, "each")) {
			*mode = CP_THREADS_EACH;
		} else {
			*sel = xrealloc(*sel, (*n + 2) * sizeof(**sel));
			(*sel)[(*n)++] = xstrdup(tok);
			(*sel)[*n] = NULL;
		}
	}
	free(copy);
}

/* 0, or the first pattern of list that does not compile (its error in err). */
static const char *bad_pattern(struct cp_view_filter *f, int focus, const char **list, char *err,
			       size_t cap)
{
	for (; list && *list; list++)
		if (cp_view_filter__add(f, focus, *list, err, cap))
			return *list;
	return NULL;
}

struct cp_view_filter *cp_filter_options__parse(struct cp_filter_options *o, int *mode,
						double min_percent, const char *const *usage)
{
	struct cp_view_filter *f;
	const char *bad;
	char err[256];
	int focus;
	size_t n = 0;

	/* What can be checked without allocating is checked first. */
	for (const char **v = o->threads; v && *v; v++) {
		const char *s = *v;

		if (!*s || *s == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,"))
			cp_usage_error(usage, "--threads wants merged, each or a list of thread ids "
					      "and names, not '%s'", s);
	}
	f = cp_view_filter__new(o->regex, min_percent);
	focus = 1;
	bad = bad_pattern(f, 1, o->focus, err, sizeof(err));
	if (!bad) {
		focus = 0;
		bad = bad_pattern(f, 0, o->hide, err, sizeof(err));
	}
	if (bad) {
		/* A usage error leaves nothing allocated behind it. */
		char msg[400];

		snprintf(msg, sizeof(msg), "--%s '%.64s' is not a valid regular expression: %s",
			 focus ? "focus" : "hide", bad, err);
		cp_view_filter__free(f);
		cp_filter_options__release(o);
		cp_usage_error(usage, "%s", msg);
	}
	for (const char **v = o->threads; v && *v; v++)
		parse_threads(*v, mode, &o->select, &n);
	return f;
}

void cp_filter_options__release(struct cp_filter_options *o)
{
	for (char **s = o->select; s && *s; s++)
		free(*s);
	free(o->select);
	free(o->threads);
	free(o->focus);
	free(o->hide);
	memset(o, 0, sizeof(*o));
}

void cp_symbol_options__apply(const struct cp_symbol_options *so, struct cp_report_opts *ro,
			      const char *const *usage)
{
	ro->pid = cp_parse_pid(so->pid, "--pid", usage);
	ro->debug_dirs = so->debug_dirs;
	ro->symfs = so->symfs;
	ro->mangled = so->mangled;
}

void cp_symbol_options__release(struct cp_symbol_options *so)
{
	free(so->debug_dirs);
	memset(so, 0, sizeof(*so));
}
