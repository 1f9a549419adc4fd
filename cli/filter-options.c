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
static void parse_threads(const char *value, int *mode, char ***sel, size_t *n,
			  const char *const *usage)
{
	char *copy = xstrdup(value), *p = copy, *tok;

	while ((tok = strsep(&p, ",")) != NULL) {
		if (!*tok) {
			free(copy);
			cp_usage_error(usage, "--threads wants merged, each or a list of thread ids "
					      "and names, not '%s'", value);
		}
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

static void add_patterns(struct cp_filter *f, int focus, const char **list,
			 const char *const *usage)
{
	char err[256];

	for (; list && *list; list++)
		if (cp_filter__add(f, focus, *list, err, sizeof(err)))
			cp_usage_error(usage, "--%s '%s' is not a valid regular expression: %s",
				       focus ? "focus" : "hide", *list, err);
}

struct cp_filter *cp_filter_options__parse(struct cp_filter_options *o, int *mode,
					   double min_percent, const char *const *usage)
{
	struct cp_filter *f = cp_filter__new(o->regex, min_percent);
	size_t n = 0;

	for (const char **v = o->threads; v && *v; v++)
		parse_threads(*v, mode, &o->select, &n, usage);
	add_patterns(f, 1, o->focus, usage);
	add_patterns(f, 0, o->hide, usage);
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
