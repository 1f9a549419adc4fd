/*
 * profile.c - build the report model from a profile file: convert ticks to
 * nanoseconds, name functions, merge threads, derive self time.
 *
 * Conversion floors each node's ticks to whole nanoseconds, which keeps
 * "the children's totals never exceed their parent's" true after
 * conversion (floor(a) + floor(b) <= floor(a + b)).  Raw data can break it
 * by a few ticks when a thread migrates between CPUs whose TSCs differ
 * slightly; such parents are raised to their children's sum so that self
 * time is never negative.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "symbolize/symbolize.h"
#include "util/util.h"

static uint64_t to_ns(const struct cp_profile_file *pf, uint64_t ticks)
{
	uint64_t tps = pf->meta.ticks_per_sec;

	if (pf->meta.clock == CP_CLOCK_NONE || !tps)
		return 0;
	if (tps == 1000000000u)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / tps);
}

uint32_t cp_rtree__add(struct cp_rtree *t, uint32_t parent, uint32_t fn)
{
	struct cp_rnode *n;

	ALLOC_GROW(t->n, t->nn + 1, t->alloc);
	n = &t->n[t->nn];
	memset(n, 0, sizeof(*n));
	n->fn = fn;
	n->parent = parent;
	n->first_child = n->next = n->sites = CP_NONE;
	if (parent != CP_NONE) {
		n->depth = t->n[parent].depth + 1;
		n->next = t->n[parent].first_child;
		t->n[parent].first_child = t->nn;
	}
	return t->nn++;
}

static uint32_t new_site(struct cp_rtree *t, uint64_t site, uint64_t calls,
			 uint64_t total_ns, uint64_t overhead_ns, uint32_t next)
{
	struct cp_rsite *s;

	ALLOC_GROW(t->sites, t->nsites + 1, t->sites_alloc);
	s = &t->sites[t->nsites];
	s->site = site;
	s->calls = calls;
	s->total_ns = total_ns;
	s->overhead_ns = overhead_ns;
	s->next = next;
	return t->nsites++;
}

void cp_rtree__add_site(struct cp_rtree *t, uint32_t id, uint64_t site, uint64_t calls,
			uint64_t total_ns, uint64_t overhead_ns, int several)
{
	struct cp_rnode *n = &t->n[id];
	uint32_t k, last;

	if (!calls && !total_ns)
		return;
	if (n->sites == CP_NONE) {
		if (!n->calls && !n->total_ns && !several) {
			n->site = site; /* the first site with calls */
			return;
		}
		if (n->site == site && !several)
			return;
		if (!n->calls && !n->total_ns) {
			/* The first of several sites, before any count: a list of its own. */
			n->site = site;
			n->sites = new_site(t, site, calls, total_ns, overhead_ns, CP_NONE);
			return;
		}
		n->sites = new_site(t, n->site, n->calls, n->total_ns, n->overhead_ns, CP_NONE);
	}
	for (k = n->sites;; k = t->sites[k].next) {
		struct cp_rsite *s = &t->sites[k];

		if (s->site == site) {
			CP_ADD_SAT(s->calls, calls);
			CP_ADD_SAT(s->total_ns, total_ns);
			CP_ADD_SAT(s->overhead_ns, overhead_ns);
			return;
		}
		if (s->next == CP_NONE)
			break;
	}
	/* new_site() may move sites[]: link the new one in after. */
	last = k;
	k = new_site(t, site, calls, total_ns, overhead_ns, CP_NONE);
	t->sites[last].next = k;
}

uint32_t cp_rtree__path(const struct cp_rtree *t, uint32_t i, uint32_t **path, size_t *alloc)
{
	uint32_t depth = 0;

	for (uint32_t p = i; p != 0 && p != CP_NONE; p = t->n[p].parent) {
		ALLOC_GROW(*path, depth + 1, *alloc);
		(*path)[depth++] = p;
	}
	return depth;
}

void cp_rnode__add_counts(struct cp_rnode *dst, const struct cp_rnode *src)
{
	/* Sampled code without hooks stays so only if all its parts are. */
	if (!dst->calls && !dst->self_samples && !dst->samples && !dst->total_ns)
		dst->uninstrumented = src->uninstrumented; /* a node just made */
	else
		dst->uninstrumented &= src->uninstrumented;
	if (src->calls && (!dst->calls || src->min_ns < dst->min_ns))
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	if (!dst->site)
		dst->site = src->site;
	CP_ADD_SAT(dst->calls, src->calls);
	CP_ADD_SAT(dst->open_at_start, src->open_at_start);
	CP_ADD_SAT(dst->total_ns, src->total_ns);
	dst->untimed |= src->untimed;
	CP_ADD_SAT(dst->self_wait_ns, src->self_wait_ns);
	CP_ADD_SAT(dst->self_inactive_ns, src->self_inactive_ns);
	CP_ADD_SAT(dst->self_switches_vol, src->self_switches_vol);
	CP_ADD_SAT(dst->self_switches_invol, src->self_switches_invol);
	CP_ADD_SAT(dst->self_samples, src->self_samples);
}

/* 128-bit sum, saturating (sums of squares of crafted figures). */
static unsigned __int128 add_sat128(unsigned __int128 a, unsigned __int128 b)
{
	return a + b < a ? ~(unsigned __int128)0 : a + b;
}

void cp_rspread__add(struct cp_rspread *dst, const struct cp_rspread *src)
{
	if (!src->inputs)
		return;
	if (!dst->inputs) {
		*dst = *src;
		return;
	}
	dst->inputs += src->inputs;
	dst->dist &= src->dist;
	/* Of equal values the lower input, whichever side it is on: the order does not matter. */
#define LOWER(f, in) \
	if (src->f < dst->f || (src->f == dst->f && src->in < dst->in)) { \
		dst->f = src->f; \
		dst->in = src->in; \
	}
#define HIGHER(f, in) \
	if (src->f > dst->f || (src->f == dst->f && src->in < dst->in)) { \
		dst->f = src->f; \
		dst->in = src->in; \
	}
	LOWER(min_calls, min_calls_in);
	LOWER(min_total_ns, min_total_in);
	LOWER(min_self_ns, min_self_in);
	LOWER(min_cpu_ns, min_cpu_in);
	HIGHER(max_calls, max_calls_in);
	HIGHER(max_total_ns, max_total_in);
	HIGHER(max_self_ns, max_self_in);
	HIGHER(max_cpu_ns, max_cpu_in);
#undef LOWER
#undef HIGHER
	if (src->absent < dst->absent)
		dst->absent = src->absent;
	CP_ADD_SAT(dst->sum_cpu_ns, src->sum_cpu_ns);
	dst->sumsq_calls = add_sat128(dst->sumsq_calls, src->sumsq_calls);
	dst->sumsq_cpu = add_sat128(dst->sumsq_cpu, src->sumsq_cpu);
}

void cp_rspread__from_rec(struct cp_rspread *s, const struct cp_spread_rec *r)
{
	s->dist = 1;
	s->min_calls_in = r->min_calls_input;
	s->max_calls_in = r->max_calls_input;
	s->min_total_in = r->min_ticks_input;
	s->max_total_in = r->max_ticks_input;
	s->min_self_in = r->min_self_input;
	s->max_self_in = r->max_self_input;
	s->min_cpu_in = r->min_cpu_input;
	s->max_cpu_in = r->max_cpu_input;
	s->absent = r->absent_input == CP_NO_INPUT ? CP_NONE : r->absent_input;
	s->min_cpu_ns = r->min_cpu_ns;
	s->max_cpu_ns = r->max_cpu_ns;
	s->sum_cpu_ns = r->sum_cpu_ns;
	s->sumsq_calls = (unsigned __int128)r->sumsq_calls[1] << 64 | r->sumsq_calls[0];
	s->sumsq_cpu = (unsigned __int128)r->sumsq_cpu[1] << 64 | r->sumsq_cpu[0];
}

void cp_rspread__to_rec(struct cp_spread_rec *r, const struct cp_rspread *s)
{
	memset(r, 0, sizeof(*r));
	r->inputs = s->inputs;
	r->min_calls = s->min_calls;
	r->max_calls = s->max_calls;
	r->min_ticks = s->min_total_ns;
	r->max_ticks = s->max_total_ns;
	r->min_self = s->min_self_ns;
	r->max_self = s->max_self_ns;
	if (!s->dist)
		return;
	r->flags = CP_SPREAD_DIST;
	r->min_calls_input = s->min_calls_in;
	r->max_calls_input = s->max_calls_in;
	r->min_ticks_input = s->min_total_in;
	r->max_ticks_input = s->max_total_in;
	r->min_self_input = s->min_self_in;
	r->max_self_input = s->max_self_in;
	r->min_cpu_input = s->min_cpu_in;
	r->max_cpu_input = s->max_cpu_in;
	r->absent_input = s->absent == CP_NONE ? CP_NO_INPUT : s->absent;
	r->min_cpu_ns = s->min_cpu_ns;
	r->max_cpu_ns = s->max_cpu_ns;
	r->sum_cpu_ns = s->sum_cpu_ns;
	r->sumsq_calls[0] = (uint64_t)s->sumsq_calls;
	r->sumsq_calls[1] = (uint64_t)(s->sumsq_calls >> 64);
	r->sumsq_cpu[0] = (uint64_t)s->sumsq_cpu;
	r->sumsq_cpu[1] = (uint64_t)(s->sumsq_cpu >> 64);
}

/*
 * A merged profile's spreads (SPREAD) of thread th, onto the nodes of t
 * they were mapped to.  Merged profiles have one thread; were there more,
 * their spreads would be combined like those of inputs.
 */
static void add_spread(const struct cp_profile_file *pf, struct cp_rtree *t,
		       const struct cp_thread_rec *th, const uint32_t *map)
{
	if (t->nspread < t->nn) {
		t->spread = xrealloc(t->spread, t->nn * sizeof(*t->spread));
		memset(t->spread + t->nspread, 0, (t->nn - t->nspread) * sizeof(*t->spread));
		t->nspread = t->nn;
	}
	for (uint32_t k = 1; k < th->nnodes; k++) {
		const struct cp_spread_rec *r = &pf->spread[th->first_node + k];
		struct cp_rspread s = {
			.inputs = r->inputs,
			.min_calls = r->min_calls,
			.max_calls = r->max_calls,
			.min_total_ns = to_ns(pf, r->min_ticks),
			.max_total_ns = to_ns(pf, r->max_ticks),
			.min_self_ns = to_ns(pf, r->min_self),
			.max_self_ns = to_ns(pf, r->max_self),
			.absent = CP_NONE,
		};

		if (r->flags & CP_SPREAD_DIST)
			cp_rspread__from_rec(&s, r);

		if (!(pf->nodes[th->first_node + k].flags & CP_NODE_SITE))
			cp_rspread__add(&t->spread[map[k]], &s);
	}
}

void cp_report_count_thread(const struct cp_profile_file *pf, uint32_t ti, uint64_t *calls,
			    uint64_t *paths)
{
	const struct cp_thread_rec *th = &pf->threads[ti];

	for (uint32_t k = 1; k < th->nnodes; k++) {
		const struct cp_node_rec *r = &pf->nodes[th->first_node + k];

		if (r->flags & CP_NODE_EXCLUDED)
			continue; /* counted apart (excluded_calls), not a context */
		if (!(r->flags & (CP_NODE_SIGNAL | CP_NODE_REGION))) /* pseudo-frames: not calls */
			CP_ADD_SAT(*calls, r->calls);
		if (!(r->flags & CP_NODE_SITE)) /* another call site of a path counted */
			(*paths)++;
	}
}

/*
 * CP_MODE_CPU: samples whose instruction lies in a function other than
 * their context's (a library function it called, which has no hooks; the
 * prologue of an instrumented callee before its hook ran): charged to that
 * function as a child of the context, as a profiler of the plain program
 * would charge them to it.
 */
struct foreign {
	uint32_t node;	  /* NODES record of the context */
	int hooked;	  /* entry is an instrumented function (it has contexts) */
	uint64_t entry;	  /* the function holding the instruction */
	uint64_t samples;
};

struct cpu_samples {
	uint64_t *own;		 /* per NODES record: samples in its own function */
	struct foreign *foreign; /* by node */
	size_t nforeign, alloc;
};

/* context(): the "[kernel]" pseudo-function (no NODES flag has this bit). */
#define CTX_KERNEL (1u << 31)

/*
 * The functions of a profile being read: by entry address, and by name,
 * under which the copies of one source function share one entry of
 * rp->fns (see same_function()).
 */
struct fn_index {
	struct cp_u64map addr;	/* key as in context() -> index into rp->fns */
	struct cp_strtab names; /* names of functions met */
	uint32_t *first;	/* per name: the last function made with it */
	size_t first_alloc;	/* allocated entries of first */
	uint32_t *next;		/* per function: the one made before it with its name */
	size_t next_alloc;	/* allocated entries of next */
};

/*
 * The function that addr, named name, is a copy of: a static (inline)
 * function of a header has one copy per translation unit that uses it,
 * each at its own address, with the same name and declaration (DWARF's
 * DW_AT_decl_file and DW_AT_decl_line, or the line its code begins at).
 * Declarations are looked up only when a name comes again.  Returns its
 * index in rp->fns, or CP_NONE for a new function; *name_k is then the
 * number of its name in fi->names (CP_NONE: no name), for note_function().
 */
static uint32_t same_function(struct cp_report_profile *rp, struct fn_index *fi, const char *name,
			      uint64_t addr, uint32_t *name_k)
{
	const char *file, *ffile;
	int line, fline;
	uint32_t before = fi->names.n, k;

	*name_k = CP_NONE;
	/* --addresses names each copy by its address: the user asked to see them apart. */
	if (!name || rp->addresses)
		return CP_NONE;
	*name_k = k = cp_strtab__add(&fi->names, name);
	if (k >= before) {
		ALLOC_GROW(fi->first, k + 1, fi->first_alloc);
		fi->first[k] = CP_NONE;
		return CP_NONE;
	}
	if (cp_symbolizer__fn_decl(rp->sym, addr, &file, &line))
		return CP_NONE;
	for (uint32_t f = fi->first[k]; f != CP_NONE; f = fi->next[f])
		if (!cp_symbolizer__fn_decl(rp->sym, rp->fns[f].addr, &ffile, &fline) &&
		    fline == line && !strcmp(ffile, file))
			return f;
	return CP_NONE;
}

/* Function fn was made with name number name_k (CP_NONE: none). */
static void note_function(struct fn_index *fi, uint32_t fn, uint32_t name_k)
{
	if (name_k == CP_NONE)
		return;
	ALLOC_GROW(fi->next, fn + 1, fi->next_alloc);
	fi->next[fn] = fi->first[name_k];
	fi->first[name_k] = fn;
}

/*
 * The context of function addr (a NODES record's fn, with its flags) under
 * parent in t, made if new, and the function's entry in rp->fns.
 */
static uint32_t context(struct cp_report_profile *rp, struct cp_rtree *t, struct cp_u64map *ctx,
			struct fn_index *fnmap, uint32_t parent, uint64_t addr, uint32_t flags)
{
	const struct cp_profile_file *pf = rp->pf;
	/* Pseudo-functions get keys no address can have. */
	uint64_t key = (flags & CP_NODE_SIGNAL) ? addr | 1ull << 62 :
		       (flags & CP_NODE_REGION) ? addr | 1ull << 61 :
		       (flags & CTX_KERNEL) ? 1ull << 60 : addr;
	uint32_t fn = cp_u64map__get(&fnmap->addr, key), id;
	uint64_t ctx_key;

	if (fn == CP_NONE) {
		/* Regions are named even with --unnamed: they have no address to show. */
		const char *name = (flags & CTX_KERNEL) ? "[kernel]" : (flags & CP_NODE_REGION) ?
			cp_symbolizer__region_name(rp->sym, cp_profile_file__region_name(pf, addr)) :
			rp->unnamed ? NULL : (flags & CP_NODE_SIGNAL) ?
			cp_symbolizer__signal_name(rp->sym, addr) :
			rp->addresses ? cp_symbolizer__fn_name_at(rp->sym, addr) :
			cp_symbolizer__fn_name(rp->sym, addr);
		uint32_t name_k = CP_NONE;

		if (!(flags & (CP_NODE_SIGNAL | CP_NODE_REGION | CTX_KERNEL)))
			fn = same_function(rp, fnmap, name, addr, &name_k);
		if (fn == CP_NONE) {
			fn = rp->nfns++;
			ALLOC_GROW(rp->fns, rp->nfns, rp->fns_alloc);
			rp->fns[fn] = (struct cp_rfn){
				.addr = addr,
				.name = name,
				.flags = (flags & CP_NODE_SIGNAL) ? CP_RFN_SIGNAL :
					 (flags & CP_NODE_REGION) ? CP_RFN_REGION :
					 (flags & CTX_KERNEL) ? CP_RFN_KERNEL : 0,
			};
			note_function(fnmap, fn, name_k);
		}
		cp_u64map__get_or_add(&fnmap->addr, key, fn);
	}
	/* Context key: parent node in t and function index. */
	ctx_key = ((uint64_t)parent << 32) | fn;
	id = cp_u64map__get(ctx, ctx_key);
	if (id == CP_NONE)
		id = cp_u64map__get_or_add(ctx, ctx_key, cp_rtree__add(t, parent, fn));
	return id;
}

/*
 * CP_MODE_CPU: thread th's samples in functions other than their
 * context's, as children of the context (no calls: uninstrumented code is
 * not counted; an instrumented callee's context gets its samples).
 */
static void add_foreign(struct cp_report_profile *rp, struct cp_rtree *t, struct cp_u64map *ctx,
			struct fn_index *fnmap, const struct cpu_samples *cs,
			const struct cp_thread_rec *th, const uint32_t *map)
{
	size_t lo = 0, hi = cs->nforeign;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cs->foreign[mid].node < th->first_node)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < cs->nforeign && cs->foreign[lo].node - th->first_node < th->nnodes; lo++) {
		const struct foreign *f = &cs->foreign[lo];
		struct cp_rnode src = { 0 };
		uint32_t parent = map[f->node - th->first_node], id, fn;

		if (f->hooked) {
			/*
			 * An instrumented function's code outside its hooks (its
			 * prologue before the enter hook, its epilogue after the
			 * exit hook, a signal handler's entry): its context under
			 * this one if the program made that call, else this
			 * context's own time, never a call path that did not happen.
			 */
			fn = cp_u64map__get(&fnmap->addr, f->entry);
			id = fn == CP_NONE ? CP_NONE : cp_u64map__get(ctx, ((uint64_t)parent << 32) | fn);
			if (id == CP_NONE)
				id = parent;
		} else {
			id = context(rp, t, ctx, fnmap, parent, f->entry,
				     f->entry == CP_IP_KERNEL ? CTX_KERNEL : 0);
			src.uninstrumented = 1;
		}
		src.self_samples = f->samples;
		src.total_ns = cp_mul_sat(f->samples, rp->period_ns);
		cp_rnode__add_counts(&t->n[id], &src);
	}
}

/*
 * Add thread ti of the file to tree t, merging equal (parent, function)
 * contexts: map[] gives, per file node, its node in t.
 */
static void add_thread(struct cp_report_profile *rp, struct cp_rtree *t, struct cp_u64map *ctx,
		       struct fn_index *fnmap, uint32_t ti, const struct cpu_samples *cs)
{
	const struct cp_profile_file *pf = rp->pf;
	const struct cp_thread_rec *th = &pf->threads[ti];
	uint32_t *map = xmalloc(th->nnodes * sizeof(*map));

	cp_report_count_thread(pf, ti, &rp->calls, &rp->paths);
	for (uint32_t k = 0; k < th->nnodes; k++) {
		const struct cp_node_rec *r = &pf->nodes[th->first_node + k];
		struct cp_rnode src = { 0 };
		uint32_t id;

		src.site = r->site;
		src.calls = r->calls;
		src.open_at_start = r->open_at_start;
		src.total_ns = to_ns(pf, r->ticks);
		src.min_ns = to_ns(pf, r->min_ticks);
		src.max_ns = to_ns(pf, r->max_ticks);
		src.self_wait_ns = to_ns(pf, r->wait_ticks);
		src.self_inactive_ns = to_ns(pf, r->inactive_ticks);
		src.self_switches_vol = r->switches_vol;
		src.self_switches_invol = r->switches_invol;
		if (cs) {
			/* Its own time so far; derive_self adds the children's. */
			src.self_samples = cs->own[th->first_node + k];
			src.total_ns = cp_mul_sat(src.self_samples, rp->period_ns);
			CP_ADD_SAT(src.total_ns, src.self_wait_ns);
			CP_ADD_SAT(src.total_ns, src.self_inactive_ns);
		}
		if (r->flags & CP_NODE_EXCLUDED) {
			/* Calls of an excluded function: not a context, only counted. */
			CP_ADD_SAT(rp->excluded_calls, r->calls);
			map[k] = map[r->parent];
			rp->node_map[th->first_node + k] = map[k];
			continue;
		}
		if (k)
			CP_ADD_SAT(rp->open_at_start, r->open_at_start);
		if (r->flags & CP_NODE_UNTIMED) {
			/* Its ticks cover only the calls before its demotion: unknown. */
			src.untimed = 1;
			src.total_ns = src.min_ns = src.max_ns = 0;
		}
		if (k == 0) {
			id = 0;
			src.calls = 0; /* the root stands for threads, not calls */
			src.open_at_start = 0;
		} else {
			uint32_t parent = map[r->parent];

			id = context(rp, t, ctx, fnmap, parent, r->fn, r->flags);
			/* Sampled time is per context, not per call site. */
			cp_rtree__add_site(t, id, r->site, src.calls, cs ? 0 : src.total_ns, 0, 0);
		}
		cp_rnode__add_counts(&t->n[id], &src);
		map[k] = id;
		rp->node_map[th->first_node + k] = id;
	}
	if (cs)
		add_foreign(rp, t, ctx, fnmap, cs, th, map);
	t->nthreads += th->nthreads;
	CP_ADD_SAT(t->cpu_ns, th->cpu_ns);
	if (!th->cpu_ns)
		t->cpu_unknown += th->nthreads;
	if (pf->spread)
		add_spread(pf, t, th, map);
	free(map);
}

static int has_site(const struct cp_rtree *t, const struct cp_rnode *n, uint64_t site)
{
	if (n->sites == CP_NONE)
		return n->site == site;
	for (uint32_t k = n->sites; k != CP_NONE; k = t->sites[k].next)
		if (t->sites[k].site == site)
			return 1;
	return 0;
}

/*
 * A function inlined into its caller gets the caller's own return address
 * as its call site (CP_SITE_INLINED from here on).  So a site of n that is
 * also a site of its parent p is such a call, unless p was called by its
 * own function (recursion, also through a function pointer): then p's
 * sites lie in p's own code and n may really have been called there.
 * (A function inlined into a recursive one keeps a wrong line.)  Children
 * (higher indices) are marked before their parents, whose sites are then
 * still the addresses.
 */
static void mark_inlined_sites(struct cp_rtree *t)
{
	for (uint32_t i = t->nn; i-- > 1;) {
		struct cp_rnode *n = &t->n[i];
		const struct cp_rnode *p = &t->n[n->parent];

		if (n->parent == 0 || t->n[p->parent].fn == p->fn)
			continue;
		if (n->sites == CP_NONE) {
			if (n->site && n->site != CP_SITE_INLINED && has_site(t, p, n->site))
				n->site = CP_SITE_INLINED;
			continue;
		}
		for (uint32_t k = n->sites; k != CP_NONE; k = t->sites[k].next)
			if (t->sites[k].site != CP_SITE_INLINED && has_site(t, p, t->sites[k].site))
				t->sites[k].site = CP_SITE_INLINED;
	}
}

/*
 * Whether callee k took longer than its caller n beyond what clock
 * granularity and overhead compensation explain (more than 1 ms and 10% of
 * the caller): a recording never gives that, a crafted or corrupt file may.
 * The root (the thread) and count-only callers (their time is their
 * children's) are not checked, nor profiles with threads that were still
 * running at the dump (cp_report_profile__from_file).
 */
static int child_outlasts(const struct cp_rnode *n, const struct cp_rnode *k)
{
	uint64_t over;

	if (n->parent == CP_NONE || n->untimed || k->total_ns <= n->total_ns)
		return 0;
	over = k->total_ns - n->total_ns;
	return over > 1000000 && over > n->total_ns / 10;
}

/*
 * Bottom-up: lift parents below their children's sum, then derive self;
 * off-CPU time and switches go the other way, from the exclusive figures
 * of the file to the subtree's sums.  Returns the number of contexts with a
 * callee that outlasted them (child_outlasts), when check is set.
 */
static uint64_t derive_self(struct cp_rtree *t, int check, int cpu_sampled)
{
	uint64_t outlasted = 0;

	/* Children always have larger indices than their parents. */
	for (uint32_t i = t->nn; i-- > 0;) {
		struct cp_rnode *n = &t->n[i];
		uint64_t sum = 0, off;
		int outlasts = 0;

		if (n->untimed && n->parent != CP_NONE) {
			/* Count-only: its own off-CPU time is its caller's, like its own time. */
			CP_ADD_SAT(t->n[n->parent].self_wait_ns, n->self_wait_ns);
			CP_ADD_SAT(t->n[n->parent].self_inactive_ns, n->self_inactive_ns);
			n->self_wait_ns = n->self_inactive_ns = 0;
		}
		n->wait_ns = n->self_wait_ns;
		n->inactive_ns = n->self_inactive_ns;
		n->switches_vol = n->self_switches_vol;
		n->switches_invol = n->self_switches_invol;
		n->samples = n->self_samples;
		for (uint32_t c = n->first_child; c != CP_NONE; c = t->n[c].next) {
			const struct cp_rnode *k = &t->n[c];

			if (check && !outlasts && child_outlasts(n, k))
				outlasts = 1;
			CP_ADD_SAT(sum, k->total_ns);
			CP_ADD_SAT(n->wait_ns, k->wait_ns);
			CP_ADD_SAT(n->inactive_ns, k->inactive_ns);
			CP_ADD_SAT(n->switches_vol, k->switches_vol);
			CP_ADD_SAT(n->switches_invol, k->switches_invol);
			CP_ADD_SAT(n->samples, k->samples);
		}
		/* Sampled: the file gives what it spent itself, the total adds the subtree. */
		if (cpu_sampled)
			CP_ADD_SAT(n->total_ns, sum);
		if (sum > n->total_ns)
			n->total_ns = sum;
		n->self_ns = n->total_ns - sum;
		/*
		 * Clocked: own time off the CPU longer than the own time (clocks
		 * that disagree a little, a crafted file) lifts it, as a total
		 * below its children's: cpu then adds up over the subtree (a
		 * child's never above its parent's) without a clamp.
		 */
		off = n->self_wait_ns;
		CP_ADD_SAT(off, n->self_inactive_ns);
		if (off > n->self_ns) {
			CP_ADD_SAT(n->total_ns, off - n->self_ns);
			n->self_ns = n->total_ns - sum;
		}
		outlasted += outlasts;
	}
	return outlasted;
}

/*
 * The compensation of a context called from several sites, shared among
 * them in proportion to their raw time: the overhead is a cost per call
 * made inside, and what is known per site is its time, not the calls made
 * below it (a site whose calls do less - fib(n - 2) against fib(n - 1) -
 * has fewer calls below it).  Every site keeps the same fraction of its
 * time, and the sites still add up to the context's total.
 */
static void share_overhead(struct cp_rtree *t, const struct cp_rnode *n)
{
	uint64_t left = n->overhead_ns, raw_left = n->total_ns + n->overhead_ns;

	for (uint32_t k = n->sites; k != CP_NONE; k = t->sites[k].next) {
		struct cp_rsite *s = &t->sites[k];
		uint64_t oh = s->next == CP_NONE ? left : raw_left ?
			(uint64_t)((unsigned __int128)left * s->total_ns / raw_left) : 0;

		if (oh > s->total_ns)
			oh = s->total_ns;
		raw_left -= s->total_ns < raw_left ? s->total_ns : raw_left;
		s->overhead_ns = oh;
		s->total_ns -= oh;
		left -= oh;
	}
}

/*
 * The shortest and longest call of n, compensated; raw is n's total before
 * compensation.  Each call loses its callee part (inside, exactly once per
 * call).  The hooks of the calls it made inside are known only for all
 * calls together: each call loses its share of them in proportion to its
 * length (what is left after inside), as the context's total does, the
 * rule share_overhead applies to call sites.  A longer call usually made
 * more calls.  Subtracting only inside left min and max above what the
 * total allows, and the clamp then pulled both down to the average
 * (`8 ~1.153s ~144.14ms ~144.14ms ~144.14ms` where the raw calls ranged
 * from 244 ms to 2.066 s); subtracting the average compensation instead
 * takes a short call to 0.  Scaling keeps min <= avg <= max.
 */
static void compensate_min_max(const struct cp_report_profile *rp, struct cp_rnode *n, uint64_t raw)
{
	uint64_t inside = n->untimed ? 0 : cp_ns_from_double(rp->inside_ns + 0.5);
	uint64_t own = n->calls ? inside * n->calls : 0;
	double scale = raw > own ? (double)n->total_ns / (double)(raw - own) : 0;

	if (scale > 1)
		scale = 1;
	n->min_ns = n->min_ns > inside ? cp_ns_from_double((double)(n->min_ns - inside) * scale) : 0;
	n->max_ns = n->max_ns > inside ? cp_ns_from_double((double)(n->max_ns - inside) * scale) : 0;
}

/*
 * A last bound, where the raw figures disagree among themselves (a total
 * raised to its children's sum, a clamped self time): no call is longer
 * than the total less the other calls at their minimum, the shortest is no
 * longer than the average, and min <= max.  Without it a function called
 * once (main) could keep a max above its compensated total.
 */
static void clamp_min_max(struct cp_rnode *n)
{
	if (!n->calls)
		return;
	if (n->min_ns > n->total_ns / n->calls)
		n->min_ns = n->total_ns / n->calls;
	if (n->max_ns > n->total_ns - (n->calls - 1) * n->min_ns)
		n->max_ns = n->total_ns - (n->calls - 1) * n->min_ns;
	if (n->max_ns < n->min_ns)
		n->max_ns = n->min_ns;
}

/*
 * Subtract the calibrated hook overhead, bottom-up (children first, they
 * have larger indices).  A node's self time holds `outside` for every call
 * of its children and `inside` for each of its own calls; its total is then
 * rebuilt as self plus the children's compensated totals, so the tree stays
 * consistent and nothing goes below zero: a node cannot lose more than its
 * own CPU time (self less its own wait and inactive time, which
 * derive_self keeps within self), so every metric's self stays >= 0 and a
 * child's cpu never exceeds its parent's.  The rationale and the limits:
 * docs/internals/overhead.md.
 */
static void compensate(struct cp_report_profile *rp, struct cp_rtree *t)
{
	for (uint32_t i = t->nn; i-- > 0;) {
		struct cp_rnode *n = &t->n[i];
		uint64_t child_calls = 0, untimed_calls = 0, child_total = 0, oh, raw = n->total_ns;

		for (uint32_t c = n->first_child; c != CP_NONE; c = t->n[c].next) {
			if (t->n[c].untimed)
				CP_ADD_SAT(untimed_calls, t->n[c].calls);
			else
				CP_ADD_SAT(child_calls, t->n[c].calls);
			CP_ADD_SAT(child_total, t->n[c].total_ns);
		}
		/* A count-only call costs its caller what its untimed hooks cost. */
		oh = cp_ns_from_double((n->untimed ? 0 : rp->inside_ns * (double)n->calls) +
				       rp->outside_ns * (double)child_calls +
				       rp->untimed_ns * (double)untimed_calls + 0.5);
		/* The hooks ran on the CPU: their cost comes out of the own CPU time only. */
		n->self_overhead_ns = cp_rnode__self_cpu(n) > oh ? oh : cp_rnode__self_cpu(n);
		n->self_ns -= n->self_overhead_ns;
		n->total_ns = n->self_ns + child_total;
		n->overhead_ns = raw - n->total_ns;
		compensate_min_max(rp, n, raw);
		clamp_min_max(n);
		share_overhead(t, n);
	}
	CP_ADD_SAT(rp->raw_ns, t->n[0].total_ns + t->n[0].overhead_ns);
	CP_ADD_SAT(rp->subtracted_ns, t->n[0].overhead_ns);
}

int cp_thread_sel__match(const char *sel, const struct cp_profile_file *pf, uint32_t i,
			 const char *label)
{
	const char *name = cp_profile_file__str(pf, pf->threads[i].name);
	uint64_t tid;

	if (!cp_parse_u64(sel, &tid))
		return tid == pf->threads[i].tid;
	return (name && !fnmatch(sel, name, 0)) || !fnmatch(sel, label, 0);
}

/* Whether thread i is among those opts->select_threads picks (all without any). */
static int thread_selected(const struct cp_report_profile *rp, const struct cp_report_opts *opts,
			   uint32_t i)
{
	const char *const *sel = opts->select_threads;

	if (!sel || !*sel)
		return 1;
	for (; *sel; sel++)
		if (cp_thread_sel__match(*sel, rp->pf, i, rp->thread_labels[i]))
			return 1;
	return 0;
}

/*
 * A thread is labelled with its name when no other thread has it, else
 * with name/tid.  The names are counted through a hash table: comparing
 * every pair took minutes for a profile of 100,000 differently named
 * threads.
 */
static void make_labels(struct cp_report_profile *rp)
{
	const struct cp_profile_file *pf = rp->pf;
	struct cp_strtab names = { 0 };
	uint32_t *id = xmalloc((pf->nthreads + 1) * sizeof(*id)), *count;

	for (uint32_t i = 0; i < pf->nthreads; i++) {
		const char *name = cp_profile_file__str(pf, pf->threads[i].name);

		id[i] = name && *name ? cp_strtab__add(&names, name) : CP_NONE;
	}
	count = xcalloc(names.n + 1, sizeof(*count));
	for (uint32_t i = 0; i < pf->nthreads; i++)
		if (id[i] != CP_NONE)
			count[id[i]]++;
	rp->thread_labels = xcalloc(pf->nthreads + 1, sizeof(char *));
	for (uint32_t i = 0; i < pf->nthreads; i++) {
		const char *name = cp_profile_file__str(pf, pf->threads[i].name);
		int unique = id[i] != CP_NONE && count[id[i]] == 1;

		if (pf->threads[i].flags & CP_THREAD_AGGREGATE)
			rp->thread_labels[i] = xstrfmt("%s (exited)", name);
		else if (unique)
			rp->thread_labels[i] = xstrdup(name);
		else if (name && *name)
			rp->thread_labels[i] = xstrfmt("%s/%u", name, pf->threads[i].tid);
		else
			rp->thread_labels[i] = xstrfmt("tid %u", pf->threads[i].tid);
	}
	cp_strtab__release(&names);
	free(count);
	free(id);
}

struct cp_report_profile *cp_report_profile__load(const char *path,
						  const struct cp_report_opts *opts)
{
	char err[1024];
	int code;
	struct cp_profile_file *pf = cp_profile_file__open(path, err, sizeof(err), &code);

	if (!pf) {
		cp_error("%s", err);
		return NULL;
	}
	return cp_report_profile__from_file(pf, opts);
}

int cp_report_profile__profilers_ip(struct cp_report_profile *rp, uint64_t ip)
{
	if (ip < CP_IP_PSEUDO_LIMIT)
		return 0;
	return cp_profile_file__in_runtime(rp->pf, ip) ||
	       !strncmp(cp_symbolizer__fn_name(rp->sym, ip), "__cyg_profile_func_", 19);
}

size_t cp_fn_name_bare_len(const char *name)
{
	size_t n = strlen(name);

	if (n < 4 || name[n - 1] != ')')
		return n;
	for (size_t i = n - 2; i > 0; i--) {
		if (name[i] == ')')
			return n;
		if (name[i] == '(')
			return name[i - 1] == ' ' && i - 1 > 0 ? i - 1 : n;
	}
	return n;
}

int cp_fn_name_matches(const char *name, const char *fn)
{
	size_t len;

	if (!strcmp(name, fn))
		return 1;
	len = cp_fn_name_bare_len(name);
	return len < strlen(name) && !strncmp(name, fn, len) && !fn[len];
}

/* The part of a function's name that tells it from others named the same. */
static char *fn_label(struct cp_report_profile *rp, uint32_t fn, int long_form)
{
	const struct cp_rfn *f = &rp->fns[fn];
	const char *file, *base;
	uint64_t offset = 0;
	int line;

	if (!cp_symbolizer__fn_decl(rp->sym, f->addr, &file, &line)) {
		base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
		return long_form ? xstrfmt("%s:%d", base, line) : xstrdup(base);
	}
	file = cp_symbolizer__module(rp->sym, f->addr, &offset);
	if (!file)
		return xstrfmt("0x%" PRIx64, f->addr);
	base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	return long_form ? xstrfmt("%s+0x%" PRIx64, base, offset) : xstrdup(base);
}

/*
 * Different functions that have the same name (a static helper() in a.c
 * and another in b.c; copies of one source function share an entry
 * already, see same_function()) are named "NAME (FILE)": FILE the base
 * name of the declaring file, with ":LINE" where that is not enough, or
 * the module's base name (with "+0xOFFSET") when the declaration is not
 * known.  Names that are not ambiguous stay as they are.
 */
static void tell_apart(struct cp_report_profile *rp)
{
	struct cp_strtab names = { 0 }, labels = { 0 };
	uint32_t *count, *nlabel, *key;

	if (rp->addresses || rp->unnamed || !rp->nfns)
		return;
	count = xcalloc(rp->nfns, sizeof(*count));
	key = xmalloc(rp->nfns * sizeof(*key));
	for (uint32_t i = 0; i < rp->nfns; i++) {
		key[i] = CP_NONE;
		if (rp->fns[i].name && !(rp->fns[i].flags & CP_RFN_PSEUDO))
			count[key[i] = cp_strtab__add(&names, rp->fns[i].name)]++;
	}
	/* Short labels first; where two of one name share one, the long form. */
	nlabel = xcalloc(rp->nfns, sizeof(*nlabel)); /* per label: at most one per function */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < rp->nfns; i++) {
			char *label, *full;
			uint32_t k;

			if (key[i] == CP_NONE || count[key[i]] < 2)
				continue;
			label = fn_label(rp, i, 0);
			full = xstrfmt("%s (%s)", rp->fns[i].name, label);
			k = cp_strtab__add(&labels, full);
			free(label);
			if (pass == 0) {
				nlabel[k]++;
				free(full);
				continue;
			}
			if (nlabel[k] > 1) {
				free(full);
				label = fn_label(rp, i, 1);
				full = xstrfmt("%s (%s)", names.s[key[i]], label);
				free(label);
			}
			ALLOC_GROW(rp->names, rp->nnames + 1, rp->names_alloc);
			rp->fns[i].name = rp->names[rp->nnames++] = full;
		}
	}
	free(nlabel);
	free(key);
	free(count);
	cp_strtab__release(&names);
	cp_strtab__release(&labels);
}

/* Whether record r is a call of a function (not a root, signal or region). */
static int is_call(const struct cp_node_rec *r)
{
	return r->parent != CP_NO_PARENT && !(r->flags & (CP_NODE_SIGNAL | CP_NODE_REGION));
}

static int foreign_cmp(const void *a, const void *b)
{
	const struct foreign *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->entry > y->entry) - (x->entry < y->entry);
}

/*
 * The program's samples per NODES record (those in the runtime's code are
 * the profiler's, in no context).  Samples are kept on a context's own
 * record, never on a site record.  Kernel time and dropped samples are
 * the context's own.
 */
static void cpu_samples(struct cp_report_profile *rp, struct cpu_samples *cs)
{
	const struct cp_profile_file *pf = rp->pf;
	struct cp_u64map hooked;

	memset(cs, 0, sizeof(*cs));
	cs->own = xcalloc(pf->nnodes ? pf->nnodes : 1, sizeof(*cs->own));
	/* The instrumented functions: those with a context (or a marker) anywhere. */
	cp_u64map__init(&hooked, 256);
	for (uint32_t i = 0; i < pf->nnodes; i++)
		if (is_call(&pf->nodes[i]))
			cp_u64map__get_or_add(&hooked, pf->nodes[i].fn, 0);
	for (uint32_t i = 0; i < pf->nlines; i++) {
		const struct cp_line_rec *l = &pf->lines[i];
		const struct cp_node_rec *r = &pf->nodes[l->node];
		uint64_t entry;

		if (l->ip == CP_IP_KERNEL) {
			/* A "[kernel]" child of the context, as a profiler that sees the kernel
			 * shows it (entry CP_IP_KERNEL stands for it). */
			entry = CP_IP_KERNEL;
		} else if (l->ip < CP_IP_PSEUDO_LIMIT || rp->no_files) {
			/* Dropped samples are the context's; without files there are no
			 * symbols to tell functions apart. */
			CP_ADD_SAT(cs->own[l->node], l->samples);
			continue;
		} else if (cp_profile_file__in_runtime(pf, l->ip)) {
			continue; /* the profiler's share */
		} else {
			entry = cp_symbolizer__fn_entry(rp->sym, l->ip);
			/* The program's stubs that jump to our hooks are the profiler's too. */
			if (entry && entry != r->fn &&
			    !strncmp(cp_symbolizer__fn_name(rp->sym, entry), "__cyg_profile_func_", 19)) {
				uint64_t moved = l->samples < rp->shares.program ? l->samples :
										 rp->shares.program;

				rp->shares.program -= moved;
				CP_ADD_SAT(rp->shares.runtime, moved);
				continue;
			}
			if (!entry || (entry == r->fn && is_call(r))) {
				CP_ADD_SAT(cs->own[l->node], l->samples);
				continue;
			}
		}
		ALLOC_GROW(cs->foreign, cs->nforeign + 1, cs->alloc);
		cs->foreign[cs->nforeign++] = (struct foreign){
			.node = l->node,
			.hooked = entry != CP_IP_KERNEL && cp_u64map__get(&hooked, entry) != CP_NONE,
			.entry = entry,
			.samples = l->samples,
		};
	}
	cp_u64map__release(&hooked);
	if (cs->nforeign) /* qsort(NULL, 0, ...) is undefined: glibc declares it nonnull */
		qsort(cs->foreign, cs->nforeign, sizeof(*cs->foreign), foreign_cmp);
}

struct cp_report_profile *cp_report_profile__from_file(struct cp_profile_file *pf,
						       const struct cp_report_opts *opts)
{
	struct cp_report_profile *rp;
	struct cp_symbolizer_opts so = { 0 };
	struct cp_u64map ctx;
	struct fn_index fnmap = { 0 };
	struct cpu_samples cs = { 0 };
	uint64_t outlasted = 0;
	int check;

	rp = xcalloc(1, sizeof(*rp));
	rp->pf = pf;
	rp->threads = opts->threads;
	rp->addresses = opts->addresses;
	rp->unnamed = opts->unnamed;
	rp->no_files = opts->no_files;
	so.debug_dirs = opts->debug_dirs;
	so.symfs = opts->symfs;
	so.mangled = opts->mangled;
	so.no_files = opts->no_files;
	so.quiet = opts->no_files || opts->quiet; /* nothing to warn about, or not here */
	so.images = opts->images;
	rp->sym = cp_symbolizer__new(pf, &so);
	if (!rp->sym)
		cp_die("out of memory setting up symbols");
	make_labels(rp);
	/* Nodes of threads not selected are in no tree. */
	rp->node_map = xmalloc((pf->nnodes ? pf->nnodes : 1) * sizeof(*rp->node_map));
	memset(rp->node_map, 0xff, (pf->nnodes ? pf->nnodes : 1) * sizeof(*rp->node_map));
	rp->thread_tree = xmalloc((pf->nthreads ? pf->nthreads : 1) * sizeof(*rp->thread_tree));

	rp->cpu_sampled = pf->meta.mode == CP_MODE_CPU;
	if (rp->cpu_sampled) {
		rp->period_ns = pf->meta.sample_period_ns;
		cp_profile_file__sample_shares(pf, &rp->shares);
		cpu_samples(rp, &cs);
	}
	cp_u64map__init(&fnmap.addr, 256);
	if (opts->threads == CP_THREADS_EACH) {
		rp->trees = xcalloc(pf->nthreads ? pf->nthreads : 1, sizeof(*rp->trees));
		for (uint32_t i = 0; i < pf->nthreads; i++) {
			struct cp_rtree *t = &rp->trees[rp->ntrees];

			rp->thread_tree[i] = CP_NONE;
			if (!thread_selected(rp, opts, i))
				continue;
			rp->thread_tree[i] = rp->ntrees++;
			cp_u64map__init(&ctx, pf->threads[i].nnodes);
			t->label = xstrdup(rp->thread_labels[i]);
			t->tid = pf->threads[i].tid;
			cp_rtree__add(t, CP_NONE, CP_NONE);
			add_thread(rp, t, &ctx, &fnmap, i, rp->cpu_sampled ? &cs : NULL);
			cp_u64map__release(&ctx);
		}
	} else {
		struct cp_rtree *t;

		rp->ntrees = 1;
		rp->trees = t = xcalloc(1, sizeof(*rp->trees));
		t->label = xstrdup("all threads");
		cp_rtree__add(t, CP_NONE, CP_NONE);
		cp_u64map__init(&ctx, pf->nnodes);
		for (uint32_t i = 0; i < pf->nthreads; i++) {
			rp->thread_tree[i] = thread_selected(rp, opts, i) ? 0 : CP_NONE;
			if (!rp->thread_tree[i])
				add_thread(rp, t, &ctx, &fnmap, i, rp->cpu_sampled ? &cs : NULL);
		}
		cp_u64map__release(&ctx);
	}
	cp_u64map__release(&fnmap.addr);
	cp_strtab__release(&fnmap.names);
	free(fnmap.first);
	free(fnmap.next);
	tell_apart(rp);
	free(cs.own);
	free(cs.foreign);
	for (uint32_t i = 0; i < pf->nthreads; i++) {
		if (pf->threads[i].flags & CP_THREAD_UNSAMPLED)
			rp->unsampled += pf->threads[i].nthreads;
		CP_ADD_SAT(rp->unclocked, pf->threads[i].unclocked);
	}
	rp->timed = pf->meta.clock != CP_CLOCK_NONE;
	rp->sampled = pf->meta.mode == CP_MODE_SAMPLED;
	rp->split = rp->timed && (pf->meta.switches == CP_SWITCHES_ON ||
				  pf->meta.switches == CP_SWITCHES_PARTIAL);
	if (rp->timed && pf->meta.ticks_per_sec) {
		double ns_per_tick = 1e9 / (double)pf->meta.ticks_per_sec;

		rp->outside_ns = (double)pf->meta.overhead_ticks * ns_per_tick;
		rp->inside_ns = (double)pf->meta.self_overhead_ticks * ns_per_tick;
		rp->untimed_ns = (double)pf->meta.untimed_overhead_ticks * ns_per_tick;
	}
	rp->compensated = rp->timed && !opts->no_compensate &&
			  (rp->outside_ns > 0 || rp->inside_ns > 0);
	/*
	 * Threads still running at the dump are read while they run: a callee
	 * that returned meanwhile may show more time than its open caller.
	 */
	check = rp->timed && !rp->sampled && !rp->cpu_sampled;
	for (uint32_t i = 0; i < pf->nthreads; i++)
		if (pf->threads[i].open_frames)
			check = 0;
	for (uint32_t i = 0; i < rp->ntrees; i++) {
		mark_inlined_sites(&rp->trees[i]);
		outlasted += derive_self(&rp->trees[i], check, rp->cpu_sampled);
		if (rp->compensated)
			compensate(rp, &rp->trees[i]);
		else
			CP_ADD_SAT(rp->raw_ns, rp->trees[i].n[0].total_ns);
	}
	if (outlasted)
		cp_warning("profile '%s': %llu call %s a callee that took longer than the "
			   "caller (by over 1 ms and 10%%): its time is raised to its callees' sum",
			   pf->path, (unsigned long long)outlasted,
			   outlasted == 1 ? "path has" : "paths have");
	rp->ninputs = pf->spread ? pf->ninputs : 0;
	if (pf->ninputs) {
		/* Merged: each input was compensated before it was added. */
		rp->raw_ns = rp->subtracted_ns = 0;
		for (uint32_t i = 0; i < pf->ninputs; i++) {
			CP_ADD_SAT(rp->raw_ns, pf->inputs[i].raw_ns);
			CP_ADD_SAT(rp->subtracted_ns, pf->inputs[i].subtracted_ns);
		}
		rp->compensated = rp->subtracted_ns > 0; /* in each input */
	}
	if (!rp->unnamed)
		cp_report_profile__sort(rp, (enum cp_sort_key)
							   cp_report_profile__weight(rp, NULL, 0));
	return rp;
}

void cp_report_profile__free(struct cp_report_profile *rp)
{
	if (!rp)
		return;
	for (uint32_t i = 0; i < rp->ntrees; i++) {
		free(rp->trees[i].label);
		free(rp->trees[i].n);
		free(rp->trees[i].sites);
		free(rp->trees[i].spread);
	}
	free(rp->trees);
	free(rp->fns);
	for (uint32_t i = 0; i < rp->nnames; i++)
		free(rp->names[i]);
	free(rp->names);
	free(rp->filters);
	if (rp->nfiles) {
		/* pf is a summary copy: its arrays are the first file's. */
		cp_report_profile__free(rp->first);
		for (uint32_t i = 0; i < rp->nfiles; i++) {
			struct cp_rprocess *pr = &rp->procs[i];

			free(pr->file);
			for (uint32_t k = 0; k < pr->argc; k++)
				free(pr->argv[k]);
			free(pr->argv);
			free(pr->exe);
			free(pr->hostname);
			free(pr->jobid);
		}
		free(rp->procs);
		free(rp->lines);
		cp_symbolizer__free(rp->sym);
		cp_sym_images__free(rp->images);
		free(rp->pf->path);
		free(rp->pf);
		free(rp);
		return;
	}
	free(rp->node_map);
	free(rp->thread_tree);
	if (rp->thread_labels)
		for (uint32_t i = 0; i < rp->pf->nthreads; i++)
			free(rp->thread_labels[i]);
	free(rp->thread_labels);
	cp_symbolizer__free(rp->sym);
	cp_sym_images__free(rp->images); /* after its symbolizer */
	cp_profile_file__free(rp->pf);
	free(rp);
}

const char *cp_rnode__name(const struct cp_report_profile *rp, const struct cp_rnode *n)
{
	return n->fn == CP_NONE ? "[root]" : rp->fns[n->fn].name;
}

int cp_rnode_cmp(const struct cp_report_profile *rp, const struct cp_rnode *a,
		 const struct cp_rnode *b, enum cp_sort_key key)
{
	uint64_t va = key == CP_SORT_NAME ? 0 : cp_rnode__metric(a, (enum cp_metric)key);
	uint64_t vb = key == CP_SORT_NAME ? 0 : cp_rnode__metric(b, (enum cp_metric)key);
	int c;

	if (va != vb)
		return va > vb ? -1 : 1;
	c = strcmp(cp_rnode__name(rp, a), cp_rnode__name(rp, b));
	if (c)
		return c;
	/* Same name: keep a stable order by address, then by call site. */
	if (a->fn != b->fn && a->fn != CP_NONE && b->fn != CP_NONE)
		return rp->fns[a->fn].addr < rp->fns[b->fn].addr ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

/* The qsort_r context of cmp_idx: the siblings sorted are node indexes of tree. */
struct sibling_order {
	const struct cp_report_profile *rp; /* the functions' names and addresses */
	const struct cp_rtree *tree;	    /* the nodes indexed */
	enum cp_sort_key key;		    /* the order */
};

static int cmp_idx(const void *pa, const void *pb, void *arg)
{
	const uint32_t *a = pa, *b = pb;
	const struct sibling_order *o = arg;

	return cp_rnode_cmp(o->rp, &o->tree->n[*a], &o->tree->n[*b], o->key);
}

void cp_rtree__sort_children(struct cp_rtree *t, int (*cmp)(const void *, const void *, void *),
			     void *arg)
{
	uint32_t *kids = NULL;
	size_t alloc = 0;

	for (uint32_t i = 0; i < t->nn; i++) {
		uint32_t nk = 0;

		for (uint32_t c = t->n[i].first_child; c != CP_NONE; c = t->n[c].next) {
			ALLOC_GROW(kids, nk + 1, alloc);
			kids[nk++] = c;
		}
		if (nk < 2)
			continue;
		qsort_r(kids, nk, sizeof(*kids), cmp, arg);
		t->n[i].first_child = kids[0];
		for (uint32_t k = 0; k + 1 < nk; k++)
			t->n[kids[k]].next = kids[k + 1];
		t->n[kids[nk - 1]].next = CP_NONE;
	}
	free(kids);
}

void cp_report_profile__sort(struct cp_report_profile *rp, enum cp_sort_key key)
{
	struct sibling_order order = { .rp = rp, .key = key };

	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		order.tree = &rp->trees[ti];
		cp_rtree__sort_children(&rp->trees[ti], cmp_idx, &order);
	}
}

void cp_report_profile__fn_where(struct cp_report_profile *rp, uint32_t fn,
				 struct cp_fn_where *w)
{
	const struct cp_rfn *f = &rp->fns[fn];
	struct cp_symbolizer *sym = rp->sym;

	memset(w, 0, sizeof(*w));
	if (f->flags & CP_RFN_PSEUDO)
		return;
	w->module = cp_symbolizer__module(sym, f->addr, &w->offset);
	if (cp_symbolizer__fn_src(sym, f->addr, &w->file, &w->line)) {
		w->file = NULL;
		w->line = 0;
	}
}

void cp_report_profile__site_where(struct cp_report_profile *rp, uint64_t site,
				   const char **file, int *line)
{
	*file = NULL;
	*line = 0;
	if (site && site != CP_SITE_INLINED &&
	    cp_symbolizer__site(rp->sym, site, file, line)) {
		*file = NULL;
		*line = 0;
	}
}
