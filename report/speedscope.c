/*
 * speedscope.c - `export -f speedscope`: speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json), a "sampled"
 * profile per tree.  Each calling context is one sample, its stack the
 * path from the thread's first function, its weight the context's self
 * time in ns (its calls, unit "none", for a profile without times), so
 * speedscope's flame graph and its inclusive times are the call tree's.
 * Frames are the functions, with the file and line of their entry.
 * Where off-CPU time was measured, each tree gets three more profiles,
 * "LABEL: cpu", "LABEL: wait" and "LABEL: inactive", weighted by those
 * parts of the self time (speedscope shows one metric per profile).
 */
#include <stdlib.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/json.h"
#include "report/report.h"
#include "util/util.h"

enum weight { W_SELF, W_CPU, W_WAIT, W_INACTIVE };

static uint64_t weight(const struct cp_report_profile *rp, const struct cp_rnode *n, enum weight w)
{
	switch (w) {
	case W_CPU:
		return cp_rnode__self_cpu(n);
	case W_WAIT:
		return n->self_wait_ns;
	case W_INACTIVE:
		return n->self_inactive_ns;
	default:
		return rp->timed ? n->self_ns : n->calls;
	}
}

/* Tree t as one "sampled" profile weighted by w. */
static void profile(struct cp_json *j, const struct cp_report_profile *rp, const struct cp_rtree *t,
		    enum weight w, uint32_t **stack, size_t *alloc)
{
	static const char *const suffix[] = { "", ": cpu", ": wait", ": inactive" };
	uint64_t sum = 0;
	char *name = xstrfmt("%s%s", t->label, suffix[w]);

	for (uint32_t i = 1; i < t->nn; i++)
		sum += weight(rp, &t->n[i], w);
	cp_json__obj(j);
	cp_json__key_str(j, "type", "sampled");
	cp_json__key_str(j, "name", name);
	free(name);
	cp_json__key_str(j, "unit", rp->timed ? "nanoseconds" : "none");
	cp_json__key_u64(j, "startValue", 0);
	cp_json__key_u64(j, "endValue", sum);
	cp_json__key(j, "samples");
	cp_json__arr(j);
	for (uint32_t i = 1; i < t->nn; i++) {
		uint32_t depth;

		if (!weight(rp, &t->n[i], w))
			continue;
		depth = cp_rtree__path(t, i, stack, alloc);
		cp_json__arr(j);
		while (depth--)
			cp_json__u64(j, t->n[(*stack)[depth]].fn);
		cp_json__end_arr(j);
	}
	cp_json__end_arr(j);
	cp_json__key(j, "weights");
	cp_json__arr(j);
	for (uint32_t i = 1; i < t->nn; i++) {
		uint64_t v = weight(rp, &t->n[i], w);

		if (v)
			cp_json__u64(j, v);
	}
	cp_json__end_arr(j);
	cp_json__end_obj(j);
}

int cp_export_speedscope(struct cp_report_profile *rp, FILE *fp)
{
	struct cp_json *j = cp_json__new(fp, 0);
	uint32_t *stack = NULL;
	size_t alloc = 0;
	char *name;

	cp_json__obj(j);
	cp_json__key_str(j, "$schema", "https://www.speedscope.app/file-format-schema.json");
	cp_json__key_str(j, "exporter", "callprof");
	name = xstrfmt("%s (pid %u)", rp->pf->path, rp->pf->meta.pid);
	cp_json__key_str(j, "name", name);
	free(name);
	cp_json__key_u64(j, "activeProfileIndex", 0);
	cp_json__key(j, "shared");
	cp_json__obj(j);
	cp_json__key(j, "frames");
	cp_json__arr(j);
	for (uint32_t f = 0; f < rp->nfns; f++) {
		struct cp_fn_where w;

		cp_report_profile__fn_where(rp, f, &w);
		cp_json__obj(j);
		cp_json__key_str(j, "name", rp->fns[f].name);
		if (w.file) {
			cp_json__key_str(j, "file", w.file);
			cp_json__key_u64(j, "line", (uint64_t)w.line);
		}
		cp_json__end_obj(j);
	}
	cp_json__end_arr(j);
	cp_json__end_obj(j);

	cp_json__key(j, "profiles");
	cp_json__arr(j);
	for (uint32_t ti = 0; ti < rp->ntrees; ti++)
		for (enum weight w = W_SELF; w <= (rp->split ? W_INACTIVE : W_SELF); w++)
			profile(j, rp, &rp->trees[ti], w, &stack, &alloc);
	cp_json__end_arr(j);
	cp_json__end_obj(j);
	free(stack);
	return cp_json__finish(j);
}
