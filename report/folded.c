/*
 * folded.c - folded stacks ("a;b;c 123"), the input of flame-graph tools.
 *
 * One line per calling context, outermost frame first.  Contexts that
 * print the same path after symbolisation (two functions with one name,
 * threads with one label) are summed.  Lines are sorted bytewise, so the
 * output is deterministic and diffable.  Values: calls, or self/total
 * nanoseconds; flame graphs want self.  Where off-CPU time was measured,
 * self time's parts: cpu, wait or inactive.  export's default is the
 * weight's exclusive part (the report's weight: self cpu wherever the
 * profile has CPU time), so a flame graph of it is the report's picture.
 *
 * The format has no escapes: a newline ends a line and ';' ends a frame,
 * so a name holding either would forge stacks.  A frame is the name's
 * visible form (util/text.h: \n, \xNN, \\ ...) with ';' as \x3b: one
 * frame, one line, and the name can be read back from it.  Spaces stay
 * (the value is after the last one).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

struct line {
	char *path;
	uint64_t value;
};

static int line_cmp(const void *pa, const void *pb)
{
	const struct line *a = pa, *b = pb;

	return strcmp(a->path, b->path);
}

static uint64_t value(const struct cp_rnode *n, enum cp_metric m)
{
	return cp_rnode__metric(n, m == CP_METRIC_TOTAL ? m : cp_metric__exclusive(m));
}

/* A frame of a folded stack for name: its visible form, ';' as \x3b. */
static void add_frame(struct strbuf *sb, const char *name)
{
	size_t from = sb->len;

	strbuf_add_visible(sb, name, strlen(name));
	for (size_t i = from; i < sb->len; i++) {
		if (sb->buf[i] != ';')
			continue;
		strbuf_grow(sb, 3);
		memmove(sb->buf + i + 4, sb->buf + i + 1, sb->len - i);
		memcpy(sb->buf + i, "\\x3b", 4);
		sb->len += 3;
		i += 3;
	}
}

int cp_export_folded(struct cp_report_profile *rp, enum cp_metric m, FILE *fp)
{
	struct line *lines = NULL;
	size_t nl = 0, alloc = 0;
	struct strbuf sb = STRBUF_INIT;
	uint32_t *stack = NULL;
	size_t salloc = 0;

	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		const struct cp_rtree *t = &rp->trees[ti];

		for (uint32_t i = 1; i < t->nn; i++) {
			const struct cp_rnode *n = &t->n[i];
			uint32_t depth;

			/* Code sampled but not instrumented: no call was counted there. */
			if (m == CP_METRIC_CALLS && n->uninstrumented)
				continue;
			depth = cp_rtree__path(t, i, &stack, &salloc);

			strbuf_reset(&sb);
			if (rp->threads == CP_THREADS_EACH) {
				add_frame(&sb, t->label);
				strbuf_addch(&sb, ';');
			}
			while (depth--) {
				add_frame(&sb, cp_rnode__name(rp, &t->n[stack[depth]]));
				if (depth)
					strbuf_addch(&sb, ';');
			}
			ALLOC_GROW(lines, nl + 1, alloc);
			lines[nl].path = xstrdup(sb.buf);
			lines[nl].value = value(n, m);
			nl++;
		}
	}
	if (nl) /* qsort(NULL, 0, ...) is undefined: glibc declares it nonnull */
		qsort(lines, nl, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < nl;) {
		size_t j = i + 1;
		uint64_t v = lines[i].value;

		while (j < nl && !strcmp(lines[j].path, lines[i].path))
			CP_ADD_SAT(v, lines[j++].value);
		fprintf(fp, "%s %" PRIu64 "\n", lines[i].path, v);
		i = j;
	}
	for (size_t i = 0; i < nl; i++)
		free(lines[i].path);
	free(lines);
	free(stack);
	strbuf_release(&sb);
	return 0;
}

/* a + b, at most UINT64_MAX, silently: an estimate past 2^64 is just "too large". */
static uint64_t clamp_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t cp_export_path_bytes(const struct cp_report_profile *rp, uint64_t per_context,
			      uint64_t per_frame, uint64_t name_factor)
{
	uint64_t sum = 0, *path = NULL;
	size_t alloc = 0;

	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		const struct cp_rtree *t = &rp->trees[ti];

		ALLOC_GROW(path, t->nn, alloc);
		/* The root's is the label's; parents come before their children. */
		path[0] = rp->threads == CP_THREADS_EACH ? strlen(t->label) + 1 : 0;
		for (uint32_t i = 1; i < t->nn; i++) {
			uint64_t name = strlen(cp_rnode__name(rp, &t->n[i]));

			path[i] = clamp_add(path[t->n[i].parent], clamp_add(per_frame, name * name_factor));
			sum = clamp_add(sum, clamp_add(path[i], per_context));
		}
	}
	free(path);
	return sum;
}
