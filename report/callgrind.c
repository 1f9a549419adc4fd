/*
 * callgrind.c - `export -f callgrind`: the profile as a Callgrind file for
 * KCachegrind/QCachegrind and callgrind_annotate.
 *
 * Callgrind describes a call graph, not a tree: per function its own
 * (self) cost, per call edge and call-site line the number of calls and
 * their inclusive cost.  The contexts of a function are added up; its
 * call-site records become one edge per line.  Events: Time (ns, self,
 * compensated unless --no-compensate) when the profile has times, and
 * Calls (each function's calls counted as its own cost, so a function's
 * inclusive Calls is the number of calls made below and including it).
 * Where off-CPU time was measured, Cpu, Wait and Inactive (ns) follow: a
 * function's self time's parts, and per edge the inclusive ones (shared
 * among a context's call sites like its calls below).  A sampled
 * profile's Calls are Samples.  A cpu-mode profile (exact calls, sampled
 * CPU time) adds Samples last: a function's self samples, per edge the
 * samples of the callee's subtree; its call sites' times are not known
 * (samples are charged to contexts), so a context's inclusive figures are
 * shared among its sites by their calls.  The weight's event (the
 * report's weight, or export -m's: Cpu wherever the profile has CPU time)
 * comes first: callgrind_annotate sorts and shows by the first event, and
 * KCachegrind opens it.  Code without hooks (a library function, [kernel])
 * is a function of its own with its self cost; its calls are not counted,
 * so an edge into it says one call per context (never calls=0, whose cost
 * line callgrind_annotate would add to the caller's own).
 * One file per tree: the merged tree, or with --threads=each one per
 * thread, as part N of the run (Callgrind's --separate-threads files;
 * KCachegrind loads the parts together, callgrind_annotate reads one).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "util/text.h"
#include "util/util.h"

/* Off-CPU time in a cost line: cpu, wait, inactive. */
#define NSPLIT 3

struct edge {
	uint32_t caller, callee; /* function indices */
	int line;		 /* call-site line in the caller, 0 if unknown */
	uint64_t calls, total_ns, inner_calls;
	uint64_t split[NSPLIT];	 /* inclusive cpu, wait, inactive */
	uint64_t samples;	 /* cpu mode: inclusive samples */
};

/* Functions of rp by name, then index: the order of the output. */
static int fn_order(const struct cp_report_profile *rp, uint32_t a, uint32_t b)
{
	int c = strcmp(rp->fns[a].name, rp->fns[b].name);

	return c ? c : (a > b) - (a < b);
}

/* qsort_r orders of function indexes and of edges; arg is the struct cp_report_profile. */
static int fn_cmp(const void *pa, const void *pb, void *arg)
{
	return fn_order(arg, *(const uint32_t *)pa, *(const uint32_t *)pb);
}

static int edge_cmp(const void *pa, const void *pb, void *arg)
{
	const struct edge *a = pa, *b = pb;
	int c = fn_order(arg, a->caller, b->caller);

	if (!c)
		c = fn_order(arg, a->callee, b->callee);
	return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* Names written once, then referred to by number ("fn=(3)"). */
struct names {
	uint32_t *fn_id, *file_id, *ob_id; /* per function: 0 = not written yet */
	char **files, **obs;		   /* distinct file and object names, by id - 1 */
	uint32_t nfiles, nobs;
	size_t files_alloc, obs_alloc;
};

static uint32_t intern(char ***tab, uint32_t *n, size_t *alloc, const char *s, int *fresh)
{
	for (uint32_t i = 0; i < *n; i++)
		if (!strcmp((*tab)[i], s)) {
			*fresh = 0;
			return i + 1;
		}
	ALLOC_GROW(*tab, *n + 1, *alloc);
	(*tab)[(*n)++] = xstrdup(s);
	*fresh = 1;
	return *n;
}

/*
 * "KEY=(id) name" the first time, "KEY=(id)" after.  A name runs to the end
 * of its line, with no escapes: a newline in one would add lines (a forged
 * "fn=" or cost line).  So names, files and objects go in their visible
 * form (util/text.h), as every text output shows them: one line each,
 * nothing a terminal acts on when callgrind_annotate prints them.
 */
static void spec(FILE *fp, const char *key, uint32_t id, const char *name, int fresh)
{
	if (fresh)
		fprintf(fp, "%s=(%u) %s\n", key, id, cp_visible(name));
	else
		fprintf(fp, "%s=(%u)\n", key, id);
}

static void fn_specs(struct cp_report_profile *rp, struct names *nm, const struct cp_fn_where *w,
		     uint32_t fn, FILE *fp, int callee)
{
	int fresh;
	uint32_t id;

	id = intern(&nm->obs, &nm->nobs, &nm->obs_alloc, w->module ? w->module : "???", &fresh);
	spec(fp, callee ? "cob" : "ob", id, nm->obs[id - 1], fresh);
	id = intern(&nm->files, &nm->nfiles, &nm->files_alloc, w->file ? w->file : "???", &fresh);
	spec(fp, callee ? "cfi" : "fl", id, nm->files[id - 1], fresh);
	fresh = !nm->fn_id[fn];
	if (fresh)
		nm->fn_id[fn] = fn + 1;
	spec(fp, callee ? "cfn" : "fn", fn + 1, rp->fns[fn].name, fresh);
}

/*
 * The events a cost line can carry, in the order they are written when the
 * weight does not move one first: Time, Calls (a sampled profile's
 * Samples), Cpu, Wait, Inactive, Samples (cpu mode).
 */
enum event { E_TIME, E_CALLS, E_CPU, E_WAIT, E_INACTIVE, E_SAMPLES, E_NR };

/* The events of a file: which, in which order (the weight's first). */
struct events {
	enum event order[E_NR];
	int n;
};

static void events__init(struct events *ev, const struct cp_report_profile *rp,
			 enum cp_metric weight)
{
	enum event first;

	switch (cp_metric__inclusive(weight)) {
	case CP_METRIC_CALLS:
		first = E_CALLS;
		break;
	case CP_METRIC_CPU:
		/* Without the split, a cpu-mode profile's Time is its CPU time. */
		first = rp->split ? E_CPU : E_TIME;
		break;
	case CP_METRIC_WAIT:
		first = E_WAIT;
		break;
	case CP_METRIC_INACTIVE:
		first = E_INACTIVE;
		break;
	case CP_METRIC_SAMPLES:
		first = rp->cpu_sampled ? E_SAMPLES : E_CALLS;
		break;
	default:
		first = rp->timed ? E_TIME : E_CALLS;
		break;
	}
	ev->n = 0;
	ev->order[ev->n++] = first;
	for (enum event e = E_TIME; e < E_NR; e++) {
		int has = (e == E_TIME && rp->timed) || e == E_CALLS ||
			  (e >= E_CPU && e <= E_INACTIVE && rp->split) ||
			  (e == E_SAMPLES && rp->cpu_sampled);

		if (has && e != first)
			ev->order[ev->n++] = e;
	}
}

/* A cost line's values after its position, in the events' order. */
static void costs(FILE *fp, const struct events *ev, const uint64_t *v)
{
	for (int k = 0; k < ev->n; k++)
		fprintf(fp, " %" PRIu64, v[ev->order[k]]);
	fputc('\n', fp);
}

/* The cost vector of a time, calls, the split (may be NULL) and samples. */
static void cost_of(uint64_t *v, uint64_t ns, uint64_t calls, const uint64_t *split,
		    uint64_t samples)
{
	v[E_TIME] = ns;
	v[E_CALLS] = calls;
	for (int k = 0; k < NSPLIT; k++)
		v[E_CPU + k] = split ? split[k] : 0;
	v[E_SAMPLES] = samples;
}

/* part of whole in the ratio w / of (whole if of is 0), never more than whole. */
static uint64_t share_of(uint64_t whole, uint64_t w, uint64_t of)
{
	uint64_t s = of ? (uint64_t)((unsigned __int128)whole * w / of) : 0;

	return s > whole ? whole : s;
}

static void add_split(uint64_t *dst, uint64_t cpu, uint64_t wait, uint64_t inactive)
{
	dst[0] += cpu;
	dst[1] += wait;
	dst[2] += inactive;
}

/* Calls counted for a node: handler runs are not calls. */
static uint64_t node_calls(const struct cp_report_profile *rp, const struct cp_rnode *n)
{
	return n->fn == CP_NONE || (rp->fns[n->fn].flags & CP_RFN_PSEUDO) ? 0 : n->calls;
}

/* The short name of event e in the "events:" line. */
static const char *event_name(const struct cp_report_profile *rp, enum event e)
{
	static const char *const names[E_NR] = { "Time", "Calls", "Cpu", "Wait", "Inactive",
						 "Samples" };

	return e == E_CALLS && rp->sampled ? "Samples" : names[e];
}

/*
 * The calls an edge into context n stands for: its calls, and those open
 * at attach (entered before the window).  Code without hooks (a library
 * function, [kernel]) has no calls counted: each context where samples
 * found it counts as one.  Never 0: callgrind_annotate adds the cost line
 * of a "calls=0" edge to the caller's own cost, so the callee's time
 * would count twice.
 */
static uint64_t edge_calls(uint64_t calls, uint64_t open_at_start)
{
	uint64_t c = calls;

	CP_ADD_SAT(c, open_at_start);
	return c ? c : 1;
}

static void part(struct cp_report_profile *rp, const struct cp_rtree *t, uint32_t partno,
		 const struct events *ev, struct cp_fn_where *where, struct names *nm, FILE *fp)
{
	uint64_t v[E_NR];
	uint64_t *self_ns = xcalloc(rp->nfns + 1, sizeof(*self_ns));
	uint64_t (*self_split)[NSPLIT] = xcalloc(rp->nfns + 1, sizeof(*self_split));
	uint64_t sum_split[NSPLIT] = { 0 };
	uint64_t *calls = xcalloc(rp->nfns + 1, sizeof(*calls));
	uint64_t *self_samples = xcalloc(rp->nfns + 1, sizeof(*self_samples)), sum_samples = 0;
	const int cpu = rp->cpu_sampled;
	uint64_t *below = xcalloc(t->nn, sizeof(*below)); /* calls in the subtree, node's own included */
	uint32_t *order = xmalloc((rp->nfns + 1) * sizeof(*order)), nused = 0;
	char *calls_out = xcalloc(rp->nfns + 1, 1); /* the function calls something */
	struct edge *e = NULL;
	size_t ne = 0, alloc = 0, k = 0;
	uint64_t sum_ns = 0, sum_calls = 0;

	for (uint32_t i = t->nn; i-- > 1;) {
		below[i] += node_calls(rp, &t->n[i]);
		if (t->n[i].parent != CP_NONE)
			below[t->n[i].parent] += below[i];
	}
	for (uint32_t i = 1; i < t->nn; i++) {
		const struct cp_rnode *n = &t->n[i];
		const struct cp_rnode *p = &t->n[n->parent];
		/* Sites' times are not known in cpu mode: share by calls there. */
		uint64_t left_w = rp->timed && !cpu ? n->total_ns : n->calls, left_inner = below[i];
		uint64_t left_ns = n->total_ns, left_samples = n->samples;
		uint64_t left_split[NSPLIT] = { cp_rnode__cpu(n), n->wait_ns, n->inactive_ns };

		self_ns[n->fn] += n->self_ns;
		add_split(self_split[n->fn], cp_rnode__self_cpu(n), n->self_wait_ns,
			  n->self_inactive_ns);
		add_split(sum_split, cp_rnode__self_cpu(n), n->self_wait_ns, n->self_inactive_ns);
		calls[n->fn] += node_calls(rp, n);
		CP_ADD_SAT(self_samples[n->fn], n->self_samples);
		CP_ADD_SAT(sum_samples, n->self_samples);
		CP_ADD_SAT(sum_ns, n->self_ns);
		CP_ADD_SAT(sum_calls, node_calls(rp, n));
		if (p->fn == CP_NONE)
			continue;
		/*
		 * An edge per call site.  The calls made below are known per
		 * context only: shared among its sites by their time (by their
		 * calls where there are no times).
		 */
		for (uint32_t s = n->sites;; s = t->sites[s].next) {
			const char *file;
			int line;
			uint64_t site = s == CP_NONE ? n->site : t->sites[s].site;

			ALLOC_GROW(e, ne + 1, alloc);
			cp_report_profile__site_where(rp, site, &file, &line);
			e[ne].caller = p->fn;
			e[ne].callee = n->fn;
			e[ne].line = line;
			if (s == CP_NONE) {
				e[ne].calls = edge_calls(n->calls, n->open_at_start);
				e[ne].total_ns = n->total_ns;
				e[ne].inner_calls = below[i];
				e[ne].samples = n->samples;
				memcpy(e[ne].split, left_split, sizeof(left_split));
			} else {
				const struct cp_rsite *st = &t->sites[s];
				uint64_t w = rp->timed && !cpu ? st->total_ns : st->calls;
				uint64_t share = left_w ? (uint64_t)((unsigned __int128)left_inner * w /
								     left_w) : 0;
				int last = st->next == CP_NONE;

				e[ne].calls = edge_calls(st->calls, 0);
				e[ne].total_ns = st->total_ns;
				if (cpu) {
					e[ne].total_ns = last ? left_ns : share_of(left_ns, w, left_w);
					e[ne].samples = last ? left_samples :
							       share_of(left_samples, w, left_w);
					left_ns -= e[ne].total_ns;
					left_samples -= e[ne].samples;
				}
				e[ne].inner_calls = st->next == CP_NONE || share > left_inner ? left_inner : share;
				left_inner -= e[ne].inner_calls;
				for (int x = 0; x < NSPLIT; x++) {
					share = left_w ? (uint64_t)((unsigned __int128)left_split[x] * w /
								    left_w) : 0;
					e[ne].split[x] = st->next == CP_NONE || share > left_split[x] ?
						left_split[x] : share;
					left_split[x] -= e[ne].split[x];
				}
				left_w -= w < left_w ? w : left_w;
			}
			ne++;
			if (s == CP_NONE || t->sites[s].next == CP_NONE)
				break;
		}
	}
	if (ne) /* a tree without calls (a filter can leave one) has e NULL */
		qsort_r(e, ne, sizeof(*e), edge_cmp, (void *)rp);
	/* Equal (caller, callee, line) edges add up. */
	for (size_t i = 0; i < ne; i++) {
		if (k && !edge_cmp(&e[k - 1], &e[i], (void *)rp)) {
			CP_ADD_SAT(e[k - 1].calls, e[i].calls);
			CP_ADD_SAT(e[k - 1].total_ns, e[i].total_ns);
			CP_ADD_SAT(e[k - 1].inner_calls, e[i].inner_calls);
			CP_ADD_SAT(e[k - 1].samples, e[i].samples);
			add_split(e[k - 1].split, e[i].split[0], e[i].split[1], e[i].split[2]);
			continue;
		}
		e[k++] = e[i];
	}
	ne = k;

	fprintf(fp, "part: %u\n", partno);
	if (rp->threads == CP_THREADS_EACH)
		fprintf(fp, "thread: %u\ndesc: Thread: %s\n", t->tid, cp_visible(t->label));
	else
		fprintf(fp, "desc: Threads: %s (%u)\n", cp_visible(t->label), t->nthreads);
	fprintf(fp, "positions: line\nevents:");
	for (int x = 0; x < ev->n; x++)
		fprintf(fp, " %s", event_name(rp, ev->order[x]));
	fprintf(fp, "\nsummary:");
	cost_of(v, sum_ns, sum_calls, sum_split, sum_samples);
	costs(fp, ev, v);
	for (size_t i = 0; i < ne; i++)
		calls_out[e[i].caller] = 1;
	for (uint32_t f = 0; f < rp->nfns; f++)
		if (calls[f] || self_ns[f] || calls_out[f])
			order[nused++] = f;
	qsort_r(order, nused, sizeof(*order), fn_cmp, (void *)rp);
	k = 0;
	for (uint32_t o = 0; o < nused; o++) {
		uint32_t f = order[o];

		fputc('\n', fp);
		fn_specs(rp, nm, &where[f], f, fp, 0);
		fprintf(fp, "%d", where[f].line);
		cost_of(v, self_ns[f], calls[f], self_split[f], self_samples[f]);
		costs(fp, ev, v);
		/* Edges are in the order of their callers, which all are in order[]. */
		for (; k < ne && e[k].caller == f; k++) {
			fn_specs(rp, nm, &where[e[k].callee], e[k].callee, fp, 1);
			fprintf(fp, "calls=%" PRIu64 " %d\n%d", e[k].calls, where[e[k].callee].line,
				e[k].line);
			cost_of(v, e[k].total_ns, e[k].inner_calls, e[k].split, e[k].samples);
			costs(fp, ev, v);
		}
	}
	fprintf(fp, "\ntotals:");
	cost_of(v, sum_ns, sum_calls, sum_split, sum_samples);
	costs(fp, ev, v);
	free(self_ns);
	free(self_samples);
	free(self_split);
	free(calls);
	free(below);
	free(order);
	free(calls_out);
	free(e);
}

int cp_export_callgrind(struct cp_report_profile *rp, uint32_t tree, enum cp_metric weight,
			FILE *fp)
{
	struct cp_fn_where *where = xcalloc(rp->nfns + 1, sizeof(*where));
	struct names nm = { 0 };
	const struct cp_profile_file *pf = rp->nfiles ? rp->first->pf : rp->pf;
	struct events ev;

	events__init(&ev, rp, weight);

	for (uint32_t f = 0; f < rp->nfns; f++)
		cp_report_profile__fn_where(rp, f, &where[f]);
	nm.fn_id = xcalloc(rp->nfns + 1, sizeof(*nm.fn_id));
	fprintf(fp, "# callgrind format\nversion: 1\ncreator: callprof\n");
	fprintf(fp, "pid: %u\ncmd:", pf->meta.pid);
	for (uint32_t i = 0; i < pf->argc; i++)
		fprintf(fp, " %s", cp_visible_arg(pf->argv[i]));
	fputc('\n', fp);
	if (rp->cpu_sampled)
		fprintf(fp, "# time: CPU time sampled at %u Hz, period %" PRIu64 " ns; calls exact\n"
			    "event: Time : Time (ns, sampled CPU time + wait + inactive)\n",
			pf->meta.sample_hz, rp->period_ns);
	else if (rp->timed)
		fprintf(fp, "event: Time : Time (ns%s)\n",
			rp->compensated ? ", hook overhead subtracted" : ", raw");
	if (rp->sampled)
		fprintf(fp, "event: Samples : Samples (times are samples times the period)\n");
	else
		fprintf(fp, "event: Calls : Calls\n");
	if (rp->split)
		fprintf(fp, "event: Cpu : CPU time (ns, total - wait - inactive)\n"
			    "event: Wait : Off-CPU time blocked (ns)\n"
			    "event: Inactive : Off-CPU time preempted (ns)\n");
	if (rp->cpu_sampled)
		fprintf(fp, "event: Samples : CPU-time samples (Time's CPU part rests on them)\n");
	if (rp->cpu_sampled)
		fprintf(fp, "# code without hooks ([kernel], library functions) has no calls counted: "
			    "each context where samples found it is written as one call\n");
	if (rp->ntrees > 1)
		fprintf(fp, "# part %u of %u: one file per thread\n", tree + 1, rp->ntrees);
	part(rp, &rp->trees[tree], tree + 1, &ev, where, &nm, fp);
	for (uint32_t i = 0; i < nm.nfiles; i++)
		free(nm.files[i]);
	for (uint32_t i = 0; i < nm.nobs; i++)
		free(nm.obs[i]);
	free(nm.files);
	free(nm.obs);
	free(nm.fn_id);
	free(where);
	return ferror(fp) ? cp_error("cannot write the callgrind output") : 0;
}
