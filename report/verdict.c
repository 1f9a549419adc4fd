/*
 * verdict.c - how much of a run was the profiler's own cost, and which
 * functions' calls cost it (record's overhead verdict, diff's header; see
 * docs/internals/overhead.md, "The overhead verdict").
 *
 * Every call of an instrumented function runs the same two hooks, so the
 * hooks' cost is shared among functions by their calls.  In cpu mode the
 * samples that landed in the hooks also say where: a hook runs while its
 * function's context or its caller's is the innermost one, so the runtime's
 * samples in context n belong to n's own calls and to its children's, and
 * are shared among those by calls.  With the clock, compensation already
 * charges a calibrated cost to every call.
 */
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "symbolize/symbolize.h"
#include "util/util.h"

void cp_report_profile__sample_tally(const struct cp_report_profile *rp,
				     struct cp_sample_tally *t)
{
	const struct cp_sample_shares *sh = &rp->shares;
	uint64_t all;

	t->kernel = sh->kernel;
	t->lost = sh->lost;
	t->program = sh->program;
	CP_ADD_SAT(t->program, sh->kernel);
	CP_ADD_SAT(t->program, sh->lost);
	t->profiler = sh->runtime;
	all = t->program;
	CP_ADD_SAT(all, t->profiler);
	t->share = all ? (double)t->profiler / (double)all : 0;
}

double cp_report_profile__overhead_share(const struct cp_report_profile *rp)
{
	if (rp->cpu_sampled) {
		struct cp_sample_tally t;

		cp_report_profile__sample_tally(rp, &t);
		return (double)t.program + (double)t.profiler >= CP_OVERHEAD_MIN_SAMPLES ? t.share :
											 -1;
	}
	if (rp->timed && rp->compensated && rp->raw_ns) {
		/* Of the time on the CPU, where measured: a preempted run is no cheaper. */
		uint64_t off = 0;

		for (uint32_t i = 0; rp->split && i < rp->ntrees; i++)
			CP_ADD_SAT(off, rp->trees[i].n[0].wait_ns + rp->trees[i].n[0].inactive_ns);
		if (off >= rp->raw_ns || rp->subtracted_ns >= rp->raw_ns - off)
			return rp->subtracted_ns ? 1 : 0;
		return (double)rp->subtracted_ns / (double)(rp->raw_ns - off);
	}
	return -1;
}

const char *cp_report_profile__overhead_base(const struct cp_report_profile *rp)
{
	return rp->cpu_sampled ? "CPU time" : rp->split ? "clocked time on the CPU" :
							   "clocked time";
}

/* A real function's call (not a pseudo-frame, nor sampled code without hooks). */
static int hooked(const struct cp_report_profile *rp, const struct cp_rnode *n)
{
	return n->fn != CP_NONE && !n->uninstrumented && !(rp->fns[n->fn].flags & CP_RFN_PSEUDO);
}

/*
 * Whether a sample at ip, in the context of NODES record r, is the
 * profiler's: in the runtime's code, or in the program's PLT stub of a
 * hook (as report/profile.c, cpu_samples, tells them apart).
 */
static int profilers_sample(struct cp_report_profile *rp, const struct cp_node_rec *r, uint64_t ip)
{
	uint64_t entry;

	if (ip < CP_IP_PSEUDO_LIMIT)
		return 0;
	if (cp_profile_file__in_runtime(rp->pf, ip))
		return 1;
	if (rp->no_files)
		return 0;
	entry = cp_symbolizer__fn_entry(rp->sym, ip);
	return entry && entry != r->fn &&
	       !strncmp(cp_symbolizer__fn_name(rp->sym, entry), "__cyg_profile_func_", 19);
}

/*
 * The functions excluded at record time (--exclude, --include): they have
 * no context, but their calls still run the hooks (the entry finds them
 * excluded, the exit too), so they cost what any call costs.  Their
 * NODES markers (CP_NODE_EXCLUDED) say in which context and how often;
 * each excluded function gets a slot after rp's functions, in the order
 * first seen.
 */
struct excluded {
	struct cp_u64map slot;	     /* address -> slot - rp->nfns */
	struct excluded_fn {
		uint64_t addr;
		double calls;	     /* all contexts */
	} *fn;			     /* per slot */
	uint32_t n, alloc;
	struct marker {
		uint32_t node;	     /* the context, in trees[0] */
		uint32_t slot;
		double calls;
	} *m;
	uint32_t nm, m_alloc;
	double *in_context;	     /* per tree node: its excluded calls */
};

static void find_excluded(const struct cp_report_profile *rp, struct excluded *ex)
{
	const struct cp_profile_file *pf = rp->pf;
	const struct cp_rtree *t = &rp->trees[0];

	cp_u64map__init(&ex->slot, 16);
	ex->in_context = xcalloc(t->nn ? t->nn : 1, sizeof(*ex->in_context));
	for (uint32_t i = 0; i < pf->nnodes; i++) {
		const struct cp_node_rec *r = &pf->nodes[i];
		uint32_t n = rp->node_map[i], slot;

		if (!(r->flags & CP_NODE_EXCLUDED) || n == CP_NONE)
			continue;
		slot = cp_u64map__get_or_add(&ex->slot, r->fn, ex->n);
		if (slot == ex->n) { /* first seen */
			ALLOC_GROW(ex->fn, ex->n + 1, ex->alloc);
			ex->fn[ex->n++] = (struct excluded_fn){ r->fn, 0 };
		}
		ex->fn[slot].calls += (double)r->calls;
		ex->in_context[n] += (double)r->calls;
		ALLOC_GROW(ex->m, ex->nm + 1, ex->m_alloc);
		ex->m[ex->nm++] = (struct marker){ n, slot, (double)r->calls };
	}
}

static void release_excluded(struct excluded *ex)
{
	cp_u64map__release(&ex->slot);
	free(ex->fn);
	free(ex->m);
	free(ex->in_context);
}

/*
 * cpu mode: est[fn] += the runtime's samples, shared by calls as above
 * (an excluded function's calls in a context count with its children's).
 */
static void share_samples(struct cp_report_profile *rp, const struct excluded *ex, double *est)
{
	const struct cp_profile_file *pf = rp->pf;
	const struct cp_rtree *t = &rp->trees[0];
	double *in = xcalloc(t->nn ? t->nn : 1, sizeof(*in));
	double *all = xcalloc(t->nn ? t->nn : 1, sizeof(*all));

	for (uint32_t i = 0; i < pf->nlines; i++) {
		const struct cp_line_rec *l = &pf->lines[i];
		uint32_t n = rp->node_map[l->node];

		if (n != CP_NONE && profilers_sample(rp, &pf->nodes[l->node], l->ip))
			in[n] += (double)l->samples;
	}
	for (uint32_t i = 0; i < t->nn; i++) {
		const struct cp_rnode *n = &t->n[i];

		if (!in[i])
			continue;
		all[i] = ex->in_context[i];
		if (hooked(rp, n))
			all[i] += (double)n->calls;
		for (uint32_t c = n->first_child; c != CP_NONE; c = t->n[c].next)
			if (hooked(rp, &t->n[c]))
				all[i] += (double)t->n[c].calls;
		if (!all[i])
			continue;
		if (hooked(rp, n))
			est[n->fn] += in[i] * (double)n->calls / all[i];
		for (uint32_t c = n->first_child; c != CP_NONE; c = t->n[c].next)
			if (hooked(rp, &t->n[c]))
				est[t->n[c].fn] += in[i] * (double)t->n[c].calls / all[i];
	}
	for (uint32_t i = 0; i < ex->nm; i++) {
		const struct marker *m = &ex->m[i];

		if (all[m->node])
			est[rp->nfns + m->slot] += in[m->node] * m->calls / all[m->node];
	}
	free(all);
	free(in);
}

/* qsort_r order of function indexes, larger estimate (arg: double[]) first. */
static int est_cmp(const void *pa, const void *pb, void *arg)
{
	const double *sort_est = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (sort_est[a] != sort_est[b])
		return sort_est[a] > sort_est[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

int cp_report_overhead(struct cp_report_profile *rp, struct cp_overhead *ov)
{
	const struct cp_rtree *t;
	struct excluded ex = { 0 };
	double *est, *calls, *own, sum = 0, cum = 0;
	uint32_t *order, nf;

	memset(ov, 0, sizeof(*ov));
	ov->share = cp_report_profile__overhead_share(rp);
	if (ov->share < 0)
		return -1;
	if (rp->ntrees != 1 || rp->threads != CP_THREADS_MERGED)
		BUG("the overhead verdict wants a profile loaded with threads merged");
	t = &rp->trees[0];
	find_excluded(rp, &ex);
	nf = rp->nfns + ex.n; /* the program's functions, then the excluded ones */
	est = xcalloc(nf ? nf : 1, sizeof(*est));
	calls = xcalloc(nf ? nf : 1, sizeof(*calls));
	own = xcalloc(nf ? nf : 1, sizeof(*own));
	order = xmalloc((nf ? nf : 1) * sizeof(*order));
	for (uint32_t i = 1; i < t->nn; i++) {
		const struct cp_rnode *n = &t->n[i];

		if (!hooked(rp, n))
			continue;
		calls[n->fn] += (double)n->calls;
		own[n->fn] += (double)cp_rnode__self_cpu(n); /* off the CPU is no work */
		/* The clock: the calibrated cost of each call (count-only ones cost less). */
		if (!rp->cpu_sampled)
			est[n->fn] += (double)n->calls *
				      (n->untimed ? rp->untimed_ns : rp->inside_ns + rp->outside_ns);
	}
	for (uint32_t f = rp->nfns; f < nf; f++) {
		calls[f] = ex.fn[f - rp->nfns].calls;
		/* The clock: an excluded call is not timed; it costs at least what a count does. */
		if (!rp->cpu_sampled)
			est[f] += calls[f] * (double)rp->untimed_ns;
	}
	if (rp->cpu_sampled)
		share_samples(rp, &ex, est);
	for (uint32_t f = 0; f < nf; f++) {
		order[f] = f;
		sum += est[f];
	}
	qsort_r(order, nf, sizeof(*order), est_cmp, est);
	for (uint32_t k = 0; sum > 0 && k < nf && ov->ntop < CP_OVERHEAD_TOP; k++) {
		uint32_t f = order[k];
		double share = est[f] / sum;
		int excluded = f >= rp->nfns;
		uint64_t addr = excluded ? ex.fn[f - rp->nfns].addr : rp->fns[f].addr;

		if (share < CP_OVERHEAD_MIN_FN_SHARE || cum >= CP_OVERHEAD_COVERED)
			break;
		/*
		 * Its own work is many times its hooks' cost: not worth leaving
		 * out.  (An excluded function's own time is its callers'.)
		 */
		if (own[f] > CP_OVERHEAD_TINY * est[f] * (rp->cpu_sampled ? (double)rp->period_ns : 1))
			continue;
		cum += share;
		ov->top[ov->ntop++] = (struct cp_overhead_fn){
			.fn = excluded ? CP_NONE : f,
			.addr = addr,
			.name = excluded ? cp_symbolizer__fn_name(rp->sym, addr) : rp->fns[f].name,
			.excluded = excluded,
			.calls = (uint64_t)calls[f],
			.own_ns = cp_ns_from_double(own[f]),
			.share = share,
		};
	}
	if (ov->ntop && !rp->no_files)
		ov->producer = cp_symbolizer__producer(rp->sym, ov->top[0].addr);
	for (uint32_t k = 0; k < ov->ntop && !rp->no_files; k++)
		if (cp_symbolizer__was_inlined(rp->sym, ov->top[k].addr) > 0)
			ov->inlined = 1;
	free(order);
	free(own);
	free(calls);
	free(est);
	release_excluded(&ex);
	return 0;
}

/* Whether s ends with suffix; then cut it off. */
static int cut_suffix(char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	if (n < k || strcmp(s + n - k, suffix))
		return 0;
	s[n - k] = '\0';
	return 1;
}

/* A name gcc's list can hold: no separator, space, bracket or brace of a lambda. */
static int listable(const char *s)
{
	return *s && !strpbrk(s, ", ()[]{}<>'`\"\\");
}

/*
 * If s ends with close, cut it at the open that matches: 0, or -1 when
 * none does.
 */
static int cut_group(char *s, char open, char close)
{
	int depth = 0;
	char *p;

	if (!*s || s[strlen(s) - 1] != close)
		return 0;
	for (p = s + strlen(s); p-- > s;) {
		depth += *p == close ? 1 : *p == open ? -1 : 0;
		if (!depth) {
			*p = '\0';
			return 0;
		}
	}
	return -1;
}

char *cp_exclude_name(const char *name)
{
	char *s = xstrdup(name), *p, *last;
	int depth;

	/* gcc's clones: "f(int) [clone .isra.0]" (C++), "f.part.0" (C). */
	while ((p = strstr(s, " [clone ")))
		*p = '\0';
	while (cut_suffix(s, " const") || cut_suffix(s, " volatile") || cut_suffix(s, " &&") ||
	       cut_suffix(s, " &"))
		;
	/* The parameter list: from the last ')' back to its '('. */
	if (cut_group(s, '(', ')'))
		goto none;
	if (strstr(s, "operator"))
		goto none; /* "operator<", "operator long": no safe spelling */
	/* A function template's arguments: gcc spells them its way ("long int"). */
	if (cut_group(s, '<', '>'))
		goto none;
	/* A return type, which c++filt prints for template instances: up to the last outer space. */
	depth = 0;
	for (p = last = s; *p; p++) {
		depth += *p == '<' ? 1 : *p == '>' ? -1 : 0;
		if (!depth && *p == ' ')
			last = p + 1;
	}
	memmove(s, last, strlen(last) + 1);
	if (!strstr(s, "::") && (p = strchr(s, '.')))
		*p = '\0'; /* C clones: "f.part.0" */
	if (listable(s))
		return s;
	/*
	 * Template arguments of a class ("ns::Vec<int, 3>::at") or an anonymous
	 * namespace inside the name: its last part, which gcc matches as a
	 * substring of the whole.
	 */
	for (p = s + strlen(s); p > s && !(p[-1] == ':' && p - 1 > s && p[-2] == ':'); p--)
		;
	if (p > s && listable(p)) {
		memmove(s, p, strlen(p) + 1);
		return s;
	}
none:
	free(s);
	return NULL;
}
