/*
 * merge.c - one report over several profiles: the processes of one run
 * (a parent, its fork children, the programs it exec'd), or runs to add up.
 *
 * Each file is loaded, symbolised and compensated on its own (its own
 * module map, its own calibration), then its trees are added into the
 * result.  Across processes addresses mean nothing (ASLR, other
 * executables), so functions are matched by name; call paths of equal
 * names add up.  The parts stay loaded: a node's call site is resolved by
 * the symbolizer of the part it came from (cp_rnode.part).
 */
#include <inttypes.h>
#include <string.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

static void name_map__grow(struct cp_name_map *m, const struct cp_report_profile *rp)
{
	uint64_t slots = (m->mask + 1) * 2;
	uint32_t *tab = xmalloc(slots * sizeof(*tab));

	memset(tab, 0xff, slots * sizeof(*tab));
	for (uint64_t i = 0; m->slot && i <= m->mask; i++) {
		uint64_t j;

		if (m->slot[i] == CP_NONE)
			continue;
		for (j = cp_str_hash(rp->fns[m->slot[i]].name) & (slots - 1); tab[j] != CP_NONE;
		     j = (j + 1) & (slots - 1))
			;
		tab[j] = m->slot[i];
	}
	free(m->slot);
	m->slot = tab;
	m->mask = slots - 1;
}

uint32_t cp_name_map__fn(struct cp_name_map *m, struct cp_report_profile *rp,
			 const struct cp_rfn *f)
{
	uint64_t i;

	if (!m->slot || (uint64_t)(m->count + 1) * 2 > m->mask + 1)
		name_map__grow(m, rp);
	for (i = cp_str_hash(f->name) & m->mask; m->slot[i] != CP_NONE; i = (i + 1) & m->mask)
		if (!strcmp(rp->fns[m->slot[i]].name, f->name))
			return m->slot[i];
	ALLOC_GROW(rp->fns, rp->nfns + 1, rp->fns_alloc);
	rp->fns[rp->nfns] = *f;
	m->slot[i] = rp->nfns;
	m->count++;
	return rp->nfns++;
}

static uint32_t add_child(struct cp_rtree *t, uint32_t parent, uint32_t fn)
{
	for (uint32_t c = t->n[parent].first_child; c != CP_NONE; c = t->n[c].next)
		if (t->n[c].fn == fn)
			return c;
	return cp_rtree__add(t, parent, fn);
}

/* Parts are already compensated: self time and overhead add up too. */
static void add_node(struct cp_rnode *d, const struct cp_rnode *s, uint32_t part)
{
	if (!d->site && s->site)
		d->part = part;
	cp_rnode__add_counts(d, s);
	CP_ADD_SAT(d->wait_ns, s->wait_ns);
	CP_ADD_SAT(d->inactive_ns, s->inactive_ns);
	CP_ADD_SAT(d->switches_vol, s->switches_vol);
	CP_ADD_SAT(d->switches_invol, s->switches_invol);
	CP_ADD_SAT(d->samples, s->samples);
	CP_ADD_SAT(d->self_ns, s->self_ns);
	CP_ADD_SAT(d->overhead_ns, s->overhead_ns);
	CP_ADD_SAT(d->self_overhead_ns, s->self_overhead_ns);
}

/*
 * Add src (a tree of part p) into dst.  Children come after their parents
 * in src, so one forward pass with a map from src to dst nodes does it.
 * Children are found by a walk of the parent's list: merging is rare and
 * trees of the same program have few children per node.
 */
static void merge_tree(struct cp_rtree *dst, const struct cp_rtree *src, const uint32_t *fnmap,
		       uint32_t p)
{
	uint32_t *map = xmalloc(src->nn * sizeof(*map));

	map[0] = 0;
	add_node(&dst->n[0], &src->n[0], p);
	for (uint32_t i = 1; i < src->nn; i++) {
		const struct cp_rnode *s = &src->n[i];

		map[i] = add_child(dst, map[s->parent], fnmap[s->fn]);
		if (s->sites == CP_NONE)
			cp_rtree__add_site(dst, map[i], s->site, p, s->calls, s->total_ns,
					   s->overhead_ns);
		for (uint32_t k = s->sites; k != CP_NONE; k = src->sites[k].next) {
			const struct cp_rsite *e = &src->sites[k];

			cp_rtree__add_site(dst, map[i], e->site, p, e->calls, e->total_ns,
					   e->overhead_ns);
		}
		add_node(&dst->n[map[i]], s, p);
	}
	dst->nthreads += src->nthreads;
	CP_ADD_SAT(dst->cpu_ns, src->cpu_ns);
	dst->cpu_unknown += src->cpu_unknown;
	free(map);
}

static struct cp_rtree *new_tree(struct cp_report_profile *rp, char *label, uint32_t tid)
{
	struct cp_rtree *t;

	ALLOC_GROW(rp->trees, rp->ntrees + 1, rp->trees_alloc);
	t = &rp->trees[rp->ntrees++];
	memset(t, 0, sizeof(*t));
	t->label = label;
	t->tid = tid;
	cp_rtree__add(t, CP_NONE, CP_NONE);
	return t;
}

void cp_meta__add(struct cp_meta *dst, const struct cp_meta *src)
{
	CP_ADD_SAT(dst->lost_calls, src->lost_calls);
	CP_ADD_SAT(dst->lost_events, src->lost_events);
	CP_ADD_SAT(dst->unpaired_exits, src->unpaired_exits);
	CP_ADD_SAT32(dst->nthreads_lost, src->nthreads_lost);
	CP_ADD_SAT(dst->reconciled_frames, src->reconciled_frames);
	CP_ADD_SAT(dst->lost_signals, src->lost_signals);
	dst->flags |= src->flags;
	if (src->start_realtime_ns < dst->start_realtime_ns)
		dst->start_realtime_ns = src->start_realtime_ns;
	/* Sampling: the first rate and unwinder stand for all. */
	if (!dst->sample_hz) {
		dst->sample_hz = src->sample_hz;
		dst->sample_period_ns = src->sample_period_ns;
		dst->sample_flags = src->sample_flags;
	}
	CP_ADD_SAT(dst->samples, src->samples);
	CP_ADD_SAT(dst->samples_lost, src->samples_lost);
}

static int measured(uint32_t switches)
{
	return switches == CP_SWITCHES_ON || switches == CP_SWITCHES_PARTIAL;
}

void cp_meta__add_switches(struct cp_meta *dst, uint32_t dst_threads, const struct cp_meta *src,
			   uint32_t src_threads)
{
	if (!dst_threads) {
		dst->switches = src->switches;
		dst->switch_errno = src->switch_errno;
		dst->switch_lost = src->switch_lost;
		dst->switch_threads_failed = src->switch_threads_failed;
		return;
	}
	CP_ADD_SAT(dst->switch_lost, src->switch_lost);
	if (measured(dst->switches) && measured(src->switches)) {
		if (src->switches == CP_SWITCHES_PARTIAL)
			dst->switches = CP_SWITCHES_PARTIAL;
		CP_ADD_SAT32(dst->switch_threads_failed, src->switch_threads_failed);
	} else if (measured(dst->switches)) {
		dst->switches = CP_SWITCHES_PARTIAL;
		CP_ADD_SAT32(dst->switch_threads_failed, src_threads);
	} else if (measured(src->switches)) {
		dst->switches = CP_SWITCHES_PARTIAL;
		dst->switch_threads_failed = dst_threads + src->switch_threads_failed;
	} else if (dst->switches == CP_SWITCHES_OFF) {
		dst->switches = src->switches;
		dst->switch_errno = src->switch_errno;
	}
}

/* The banner's numbers for the whole set: a copy of the first file's view. */
static struct cp_profile_file *summary_file(struct cp_report_profile **parts, uint32_t n)
{
	struct cp_profile_file *pf = xmalloc(sizeof(*pf));

	*pf = *parts[0]->pf;
	pf->path = xstrfmt("%s and %u more", parts[0]->pf->path, n - 1);
	pf->nthreads = 0;
	pf->meta.lost_calls = pf->meta.lost_events = pf->meta.unpaired_exits = 0;
	pf->meta.nthreads_lost = 0;
	pf->meta.reconciled_frames = pf->meta.lost_signals = 0;
	pf->meta.flags = 0;
	pf->meta.samples = pf->meta.samples_lost = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct cp_meta *m = &parts[i]->pf->meta;

		cp_meta__add_switches(&pf->meta, pf->nthreads, m, parts[i]->pf->nthreads);
		pf->nthreads += parts[i]->pf->nthreads;
		cp_meta__add(&pf->meta, m);
	}
	return pf;
}

/*
 * With --threads selectors: fail (one error line) if one picks no thread
 * of the profiles kept, else note the selection for the banner.
 */
static int check_threads(struct cp_report_profile **parts, uint32_t n,
			 const char *const *sel, char **note)
{
	struct strbuf sb = STRBUF_INIT;
	uint32_t all = 0, kept = 0;

	for (uint32_t k = 0; sel[k]; k++) {
		int hit = 0;

		for (uint32_t p = 0; p < n && !hit; p++)
			for (uint32_t i = 0; i < parts[p]->pf->nthreads && !hit; i++)
				hit = cp_thread_sel__match(sel[k], parts[p]->pf, i,
							   parts[p]->thread_labels[i]);
		if (!hit && n == 1)
			return cp_error("no thread matches '%s' in profile '%s'", sel[k],
				     parts[0]->pf->path);
		if (!hit)
			return cp_error("no thread matches '%s' in the %u profiles given", sel[k], n);
	}
	for (uint32_t k = 0; sel[k]; k++)
		strbuf_addf(&sb, "%s%s", k ? "," : "", cp_visible(sel[k]));
	for (uint32_t p = 0; p < n; p++) {
		const struct cp_profile_file *pf = parts[p]->pf;

		for (uint32_t i = 0; i < pf->nthreads; i++) {
			all += pf->threads[i].nthreads;
			if (parts[p]->thread_tree[i] != CP_NONE)
				kept += pf->threads[i].nthreads;
		}
	}
	*note = xstrfmt("# threads: %s (%u of %u threads)\n", sb.buf, kept, all);
	strbuf_release(&sb);
	return 0;
}

struct cp_report_profile *cp_report_profile__load_many(const char *const *paths, uint32_t n,
						       const struct cp_report_opts *opts)
{
	struct cp_report_profile **parts = xcalloc(n ? n : 1, sizeof(*parts)), *rp;
	struct cp_name_map names = { 0 };
	uint32_t kept = 0;
	char *note = NULL;

	for (uint32_t i = 0; i < n; i++) {
		struct cp_report_profile *p = cp_report_profile__load(paths[i], opts);

		if (!p)
			goto fail;
		if (opts->pid && p->pf->meta.pid != opts->pid) {
			cp_report_profile__free(p);
			continue;
		}
		if (kept && p->pf->meta.mode != parts[0]->pf->meta.mode) {
			cp_error("profile '%s' was recorded in another mode than '%s': they cannot be "
			      "merged", p->pf->path, parts[0]->pf->path);
			cp_report_profile__free(p);
			goto fail;
		}
		parts[kept++] = p;
	}
	if (!kept) {
		cp_error("no profile of pid %u among the %u file%s given", opts->pid, n,
		      n == 1 ? "" : "s");
		goto fail;
	}
	if (opts->select_threads && *opts->select_threads &&
	    check_threads(parts, kept, opts->select_threads, &note))
		goto fail;
	if (kept == 1) {
		rp = parts[0];
		rp->filters = note;
		free(parts);
		return rp;
	}

	rp = xcalloc(1, sizeof(*rp));
	rp->parts = parts;
	rp->nparts = kept;
	rp->filters = note;
	rp->pf = summary_file(parts, kept);
	rp->sym = parts[0]->sym;
	rp->threads = opts->threads;
	rp->timed = parts[0]->timed;
	rp->sampled = parts[0]->sampled;
	/* Cpu mode: each part's times use its own period; the first's is shown. */
	rp->cpu_sampled = parts[0]->cpu_sampled;
	rp->period_ns = parts[0]->period_ns;
	for (uint32_t p = 0; p < kept; p++) {
		CP_ADD_SAT(rp->shares.program, parts[p]->shares.program);
		CP_ADD_SAT(rp->shares.runtime, parts[p]->shares.runtime);
		CP_ADD_SAT(rp->shares.kernel, parts[p]->shares.kernel);
		CP_ADD_SAT(rp->shares.lost, parts[p]->shares.lost);
	}
	rp->split = rp->timed && measured(rp->pf->meta.switches);
	rp->compensated = 1;
	rp->outside_ns = parts[0]->outside_ns;
	rp->inside_ns = parts[0]->inside_ns;
	rp->untimed_ns = parts[0]->untimed_ns;
	if (opts->threads == CP_THREADS_MERGED)
		new_tree(rp, xstrdup("all threads"), 0);
	for (uint32_t p = 0; p < kept; p++) {
		struct cp_report_profile *src = parts[p];
		uint32_t *fnmap = xmalloc((src->nfns ? src->nfns : 1) * sizeof(*fnmap));

		for (uint32_t f = 0; f < src->nfns; f++) {
			struct cp_rfn fn = src->fns[f];

			fn.part = p; /* its symbolizer, for file and line */
			fnmap[f] = cp_name_map__fn(&names, rp, &fn);
		}
		for (uint32_t k = 0; k < src->ntrees; k++) {
			const struct cp_rtree *st = &src->trees[k];
			struct cp_rtree *dt = opts->threads == CP_THREADS_MERGED ? &rp->trees[0] :
				new_tree(rp, xstrfmt("pid %u: %s", src->pf->meta.pid, st->label), st->tid);

			merge_tree(dt, st, fnmap, p);
		}
		free(fnmap);
		CP_ADD_SAT(rp->calls, src->calls);
		CP_ADD_SAT(rp->open_at_start, src->open_at_start);
		CP_ADD_SAT(rp->paths, src->paths);
		CP_ADD_SAT(rp->excluded_calls, src->excluded_calls);
		CP_ADD_SAT(rp->raw_ns, src->raw_ns);
		CP_ADD_SAT(rp->subtracted_ns, src->subtracted_ns);
		rp->compensated &= src->compensated;
	}
	free(names.slot);
	cp_report_profile__sort(rp, (enum cp_sort_key)
						   cp_report_profile__weight(rp, NULL, 0));
	return rp;

fail:
	for (uint32_t i = 0; i < kept; i++)
		cp_report_profile__free(parts[i]);
	free(parts);
	return NULL;
}
