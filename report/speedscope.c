/*
 * speedscope.c - `export -f speedscope`: speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json), an "evented"
 * profile per tree: a depth-first walk of the tree opens ("O") each
 * calling context, lays its own weight, then its children one after the
 * other, and closes it ("C"), so speedscope's flame graph and its
 * inclusive times are the call tree's.  Two events per context, whatever
 * the depth: a "sampled" profile (one stack per context) would be
 * quadratic in the depth of a chain.  The weight is the context's self time
 * in ns (its calls, unit "none", for a profile without times); contexts
 * whose subtree weighs nothing are left out.  Frames are the functions,
 * with the file and line of their entry.  Where off-CPU time was measured,
 * each tree gets three more profiles, "LABEL: cpu", "LABEL: wait" and
 * "LABEL: inactive", weighted by those parts of the self time (speedscope
 * shows one metric per profile).  A cpu-mode profile (exact calls, sampled
 * CPU time) names its time source in the file's name and adds per tree
 * "LABEL: samples", weighted by the samples the self times rest on.  The
 * profile speedscope opens first (activeProfileIndex) is the first tree's
 * of the weight (export -m, or the profile's: CPU time where the threads
 * were off CPU much of the time); -m calls adds "LABEL: calls" profiles.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/json.h"
#include "report/report.h"
#include "util/util.h"

enum weight { W_SELF, W_CPU, W_WAIT, W_INACTIVE, W_SAMPLES, W_CALLS };

static uint64_t weight(const struct cp_report_profile *rp, const struct cp_rnode *n, enum weight w)
{
	switch (w) {
	case W_CPU:
		return cp_rnode__self_cpu(n);
	case W_WAIT:
		return n->self_wait_ns;
	case W_INACTIVE:
		return n->self_inactive_ns;
	case W_SAMPLES:
		return n->self_samples;
	case W_CALLS:
		return n->uninstrumented ? 0 : n->calls;
	default:
		return rp->timed ? n->self_ns : n->calls;
	}
}

static void event(struct cp_json *j, const char *type, uint32_t frame, uint64_t at)
{
	cp_json__obj(j);
	cp_json__key_str(j, "type", type);
	cp_json__key_u64(j, "frame", frame);
	cp_json__key_u64(j, "at", at);
	cp_json__end_obj(j);
}

/*
 * Tree t as one "evented" profile weighted by w; incl (t->nn entries) is
 * scratch for the subtrees' weights.  Iterative: a chain may be a million
 * deep.
 */
static void profile(struct cp_json *j, const struct cp_report_profile *rp, const struct cp_rtree *t,
		    enum weight w, uint64_t *incl)
{
	static const char *const suffix[] = { "", ": cpu", ": wait", ": inactive", ": samples",
					      ": calls" };
	uint64_t at = 0;
	char *name = xstrfmt("%s%s", t->label, suffix[w]);
	uint32_t i;

	/* Children come after their parents: one backward pass sums subtrees. */
	for (i = 0; i < t->nn; i++)
		incl[i] = i ? weight(rp, &t->n[i], w) : 0;
	for (i = t->nn; i-- > 1;)
		CP_ADD_SAT(incl[t->n[i].parent], incl[i]);
	cp_json__obj(j);
	cp_json__key_str(j, "type", "evented");
	cp_json__key_str(j, "name", name);
	free(name);
	cp_json__key_str(j, "unit", rp->timed && w < W_SAMPLES ? "nanoseconds" : "none");
	cp_json__key_u64(j, "startValue", 0);
	cp_json__key_u64(j, "endValue", incl[0]);
	cp_json__key(j, "events");
	cp_json__arr(j);
	i = t->nn > 1 ? t->n[0].first_child : CP_NONE;
	while (i != CP_NONE) {
		const struct cp_rnode *n = &t->n[i];

		if (incl[i]) {
			event(j, "O", n->fn, at);
			CP_ADD_SAT(at, weight(rp, n, w));
			if (n->first_child != CP_NONE) {
				i = n->first_child;
				continue;
			}
			event(j, "C", n->fn, at);
		}
		/* Up past the last children, closing their parents, then across. */
		while (i != CP_NONE && t->n[i].next == CP_NONE) {
			i = t->n[i].parent;
			if (i == 0)
				i = CP_NONE;
			else
				event(j, "C", t->n[i].fn, at);
		}
		if (i != CP_NONE)
			i = t->n[i].next;
	}
	cp_json__end_arr(j);
	cp_json__end_obj(j);
}

/* The profile of each tree speedscope opens first, for weight m. */
static enum weight first_weight(const struct cp_report_profile *rp, enum cp_metric m)
{
	switch (cp_metric__inclusive(m)) {
	case CP_METRIC_CALLS:
		return rp->timed ? W_CALLS : W_SELF;
	case CP_METRIC_CPU:
		/* Without the split, a cpu-mode profile's self time is its CPU time. */
		return rp->split ? W_CPU : W_SELF;
	case CP_METRIC_WAIT:
		return W_WAIT;
	case CP_METRIC_INACTIVE:
		return W_INACTIVE;
	case CP_METRIC_SAMPLES:
		return W_SAMPLES;
	default:
		return W_SELF;
	}
}

int cp_export_speedscope(struct cp_report_profile *rp, enum cp_metric m, FILE *fp)
{
	struct cp_json *j = cp_json__new(fp, 0);
	uint64_t *incl = NULL;
	size_t alloc = 0;
	char *name;
	enum weight first = first_weight(rp, m);
	/* Per tree: self, with the split cpu, wait, inactive, then samples, calls. */
	uint32_t per_tree = 1 + (rp->split ? 3 : 0) + !!rp->cpu_sampled + (first == W_CALLS);
	uint32_t active = first <= W_INACTIVE ? (uint32_t)first :
			  first == W_SAMPLES ? 1 + (rp->split ? 3 : 0) : per_tree - 1;

	cp_json__obj(j);
	cp_json__key_str(j, "$schema", "https://www.speedscope.app/file-format-schema.json");
	cp_json__key_str(j, "exporter", "callprof");
	if (rp->cpu_sampled) {
		struct cp_sample_tally sh;

		cp_report_profile__sample_tally(rp, &sh);

		name = xstrfmt("%s (pid %u; time: CPU time sampled at %u Hz, period %" PRIu64
			       " ns, %" PRIu64 " samples, calls exact)", rp->pf->path,
			       rp->pf->meta.pid, rp->pf->meta.sample_hz, rp->period_ns,
			       sh.program);
	} else {
		name = xstrfmt("%s (pid %u)", rp->pf->path, rp->pf->meta.pid);
	}
	cp_json__key_str(j, "name", name);
	free(name);
	cp_json__key_u64(j, "activeProfileIndex", active);
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
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		ALLOC_GROW(incl, rp->trees[ti].nn, alloc);
		for (enum weight w = W_SELF; w <= (rp->split ? W_INACTIVE : W_SELF); w++)
			profile(j, rp, &rp->trees[ti], w, incl);
		if (rp->cpu_sampled)
			profile(j, rp, &rp->trees[ti], W_SAMPLES, incl);
		if (first == W_CALLS)
			profile(j, rp, &rp->trees[ti], W_CALLS, incl);
	}
	cp_json__end_arr(j);
	cp_json__end_obj(j);
	free(incl);
	return cp_json__finish(j);
}
