/*
 * merge.c - one report over several profiles: the processes of one run
 * (a parent, its fork children, the programs it exec'd), or runs to add up.
 *
 * Each file is loaded, symbolised and compensated on its own (its own
 * module map, its own calibration), then its trees are added into the
 * result and it is freed: memory holds the result and one file, and grows
 * with the distinct call paths, not with the files (report of 1,500 files
 * once kept them all, 1.7 GB).  Across processes addresses mean nothing
 * (ASLR, other executables), so functions are matched by name; call paths
 * of equal names add up.  The files' symbolizers share one set of module
 * images (each program's files are opened and indexed once), and the
 * addresses that stay in the result (functions, call sites, sampled
 * lines) move to the set's common address space, where equal code of
 * different processes has one address and one symbolizer answers for all.
 */
#include <inttypes.h>
#include <string.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "symbolize/symbolize.h"
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

/* Files are compensated each on its own: self time and overhead add up too. */
static void add_node(struct cp_rnode *d, const struct cp_rnode *s)
{
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

/* A call site of a file, in the common space (where it is in a module). */
static uint64_t common_site(struct cp_report_profile *src, uint64_t site)
{
	return site && site != CP_SITE_INLINED ? cp_symbolizer__common_addr(src->sym, site) : site;
}

/*
 * Add src's tree st into dst; returns the map from st's nodes to dst's
 * (the caller frees it).  Children come after their parents in st, so one
 * forward pass does it.  Children are found by a walk of the parent's
 * list: merging is rare and trees of the same program have few children
 * per node.
 */
static uint32_t *merge_tree(struct cp_rtree *dst, struct cp_report_profile *src,
			    const struct cp_rtree *st, const uint32_t *fnmap)
{
	uint32_t *map = xmalloc(st->nn * sizeof(*map));

	map[0] = 0;
	add_node(&dst->n[0], &st->n[0]);
	for (uint32_t i = 1; i < st->nn; i++) {
		const struct cp_rnode *s = &st->n[i];

		map[i] = add_child(dst, map[s->parent], fnmap[s->fn]);
		if (s->sites == CP_NONE)
			cp_rtree__add_site(dst, map[i], common_site(src, s->site), s->calls,
					   s->total_ns, s->overhead_ns, 0);
		for (uint32_t k = s->sites; k != CP_NONE; k = st->sites[k].next) {
			const struct cp_rsite *e = &st->sites[k];

			cp_rtree__add_site(dst, map[i], common_site(src, e->site), e->calls,
					   e->total_ns, e->overhead_ns, 1);
		}
		add_node(&dst->n[map[i]], s);
	}
	dst->nthreads += st->nthreads;
	CP_ADD_SAT(dst->cpu_ns, st->cpu_ns);
	dst->cpu_unknown += st->cpu_unknown;
	return map;
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

/* The sampled lines of the merged trees, found by (tree, node, ip). */
struct line_index {
	uint32_t *slot; /* index into rp->lines + 1, 0 for empty */
	uint64_t mask;
};

static uint64_t line_hash(uint32_t tree, uint32_t node, uint64_t ip)
{
	return cp_u64_hash(((uint64_t)tree << 32 | node) ^ cp_u64_hash(ip));
}

static void line_index__grow(struct line_index *x, const struct cp_report_profile *rp)
{
	uint64_t slots = x->slot ? (x->mask + 1) * 2 : 1024;

	free(x->slot);
	x->slot = xcalloc(slots, sizeof(*x->slot));
	x->mask = slots - 1;
	for (uint32_t i = 0; i < rp->nlines; i++) {
		const struct cp_rline *l = &rp->lines[i];
		uint64_t j = line_hash(l->tree, l->node, l->ip) & x->mask;

		while (x->slot[j])
			j = (j + 1) & x->mask;
		x->slot[j] = i + 1;
	}
}

static void add_line(struct cp_report_profile *rp, struct line_index *x, uint32_t tree,
		     uint32_t node, uint64_t ip, uint64_t samples, uint64_t ns)
{
	uint64_t j;
	struct cp_rline *l;

	if (!x->slot || (uint64_t)(rp->nlines + 1) * 2 > x->mask + 1)
		line_index__grow(x, rp);
	for (j = line_hash(tree, node, ip) & x->mask; x->slot[j]; j = (j + 1) & x->mask) {
		l = &rp->lines[x->slot[j] - 1];
		if (l->tree == tree && l->node == node && l->ip == ip) {
			CP_ADD_SAT(l->samples, samples);
			CP_ADD_SAT(l->ns, ns);
			return;
		}
	}
	ALLOC_GROW(rp->lines, rp->nlines + 1, rp->lines_alloc);
	rp->lines[rp->nlines] = (struct cp_rline){
		.tree = tree, .node = node, .ip = ip, .samples = samples, .ns = ns,
	};
	x->slot[j] = ++rp->nlines;
}

/* Which of src's trees node k of its file is in (CP_NONE: its thread was not selected). */
static uint32_t tree_of(const struct cp_report_profile *src, uint32_t k)
{
	const struct cp_profile_file *pf = src->pf;

	for (uint32_t i = 0; i < pf->nthreads; i++)
		if (k < pf->threads[i].first_node + pf->threads[i].nnodes)
			return src->thread_tree[i];
	return CP_NONE;
}

/*
 * src's sampled addresses (LINES) into rp's lines, at the merged contexts
 * (maps[k]: src's tree k to rp's tree first + k, or to tree 0 with the
 * threads merged) and common addresses.  The profiler's own samples are
 * in no context's time (as in lines.c) and left out.
 */
static void add_lines(struct cp_report_profile *rp, struct line_index *x,
		      struct cp_report_profile *src, uint32_t first, uint32_t *const *maps)
{
	const struct cp_profile_file *pf = src->pf;

	for (uint32_t k = 0; k < pf->nlines; k++) {
		const struct cp_line_rec *l = &pf->lines[k];
		uint32_t ti = tree_of(src, l->node), id = src->node_map[l->node];
		uint64_t ip = l->ip;

		if (ti == CP_NONE || id == CP_NONE || src->trees[ti].n[id].fn == CP_NONE ||
		    cp_report_profile__profilers_ip(src, ip))
			continue;
		if (ip >= CP_IP_PSEUDO_LIMIT || pf->meta.mode != CP_MODE_CPU)
			ip = cp_symbolizer__common_addr(src->sym, ip);
		add_line(rp, x, rp->threads == CP_THREADS_EACH ? first + ti : 0, maps[ti][id], ip,
			 l->samples, l->samples * pf->meta.sample_period_ns);
	}
}

/* src's facts for the banner and json's "processes", copied. */
static void add_process(struct cp_report_profile *rp, const struct cp_profile_file *pf)
{
	struct cp_rprocess *pr = &rp->procs[rp->nfiles];
	const char *exe = cp_profile_file__str(pf, pf->meta.exe);
	const char *host = cp_profile_file__str(pf, pf->meta.hostname);

	pr->file = xstrdup(pf->path);
	pr->meta = pf->meta;
	pr->argc = pf->argc;
	pr->argv = xcalloc(pf->argc + 1, sizeof(*pr->argv));
	for (uint32_t i = 0; i < pf->argc; i++)
		pr->argv[i] = xstrdup(pf->argv[i]);
	pr->exe = exe ? xstrdup(exe) : NULL;
	pr->hostname = host ? xstrdup(host) : NULL;
	pr->job = pf->job ? *pf->job : (struct cp_job_rec){ .rank = CP_NO_RANK };
	if (pf->job && pf->job->jobid != CP_NO_STRING)
		pr->jobid = xstrdup(cp_profile_file__str(pf, pf->job->jobid));
}

/* The --threads selectors over all the files: which picked a thread, and how many threads. */
struct selection {
	const char *const *sel; /* NULL-terminated, or NULL */
	char *hit;		/* per selector */
	uint32_t all, kept;	/* threads of the files kept, and those selected */
};

static void selection__add(struct selection *s, const struct cp_report_profile *p)
{
	const struct cp_profile_file *pf = p->pf;

	for (uint32_t k = 0; s->sel && s->sel[k]; k++)
		for (uint32_t i = 0; i < pf->nthreads && !s->hit[k]; i++)
			s->hit[k] = (char)cp_thread_sel__match(s->sel[k], pf, i,
							       p->thread_labels[i]);
	for (uint32_t i = 0; i < pf->nthreads; i++) {
		s->all += pf->threads[i].nthreads;
		if (p->thread_tree[i] != CP_NONE)
			s->kept += pf->threads[i].nthreads;
	}
}

/*
 * With --threads selectors: fail (one error line) if one picks no thread
 * of the files kept, else note the selection for the banner.
 */
static int selection__check(const struct selection *s, uint32_t nfiles, const char *path,
			    char **note)
{
	struct strbuf sb = STRBUF_INIT;

	for (uint32_t k = 0; s->sel[k]; k++) {
		if (s->hit[k])
			continue;
		if (nfiles == 1)
			return cp_error("no thread matches '%s' in profile '%s'", s->sel[k], path);
		return cp_error("no thread matches '%s' in the %u profiles given", s->sel[k], nfiles);
	}
	for (uint32_t k = 0; s->sel[k]; k++)
		strbuf_addf(&sb, "%s%s", k ? "," : "", cp_visible(s->sel[k]));
	*note = xstrfmt("# threads: %s (%u of %u threads)\n", sb.buf, s->kept, s->all);
	strbuf_release(&sb);
	return 0;
}

/* The result of several files, started from the first: a summary pf pointing into its arrays. */
static struct cp_report_profile *start_merged(struct cp_report_profile *first,
					      const struct cp_report_opts *opts, uint32_t n)
{
	struct cp_report_profile *rp = xcalloc(1, sizeof(*rp));
	struct cp_profile_file *pf = xmalloc(sizeof(*pf));

	*pf = *first->pf;
	pf->path = NULL; /* "FIRST and N more", at the end */
	pf->nthreads = 0;
	pf->meta.lost_calls = pf->meta.lost_events = pf->meta.unpaired_exits = 0;
	pf->meta.nthreads_lost = 0;
	pf->meta.reconciled_frames = pf->meta.lost_signals = 0;
	pf->meta.flags = 0;
	pf->meta.samples = pf->meta.samples_lost = 0;
	rp->pf = pf;
	rp->first = first;
	rp->images = opts->images;
	rp->sym = cp_symbolizer__new_common(opts->images);
	rp->procs = xcalloc(n, sizeof(*rp->procs));
	rp->threads = opts->threads;
	rp->timed = first->timed;
	rp->sampled = first->sampled;
	/* Cpu mode: each file's times use its own period; the first's is shown. */
	rp->cpu_sampled = first->cpu_sampled;
	rp->period_ns = first->period_ns;
	rp->compensated = 1;
	rp->outside_ns = first->outside_ns;
	rp->inside_ns = first->inside_ns;
	rp->untimed_ns = first->untimed_ns;
	if (opts->threads == CP_THREADS_MERGED)
		new_tree(rp, xstrdup("all threads"), 0);
	return rp;
}

/* Fold src (a file) into rp. */
static void add_file(struct cp_report_profile *rp, struct cp_name_map *names,
		     struct line_index *lx, struct cp_report_profile *src)
{
	uint32_t *fnmap = xmalloc((src->nfns ? src->nfns : 1) * sizeof(*fnmap));
	uint32_t **maps = xcalloc(src->ntrees ? src->ntrees : 1, sizeof(*maps));
	uint32_t first = rp->ntrees;

	if (src->pf->nsymbols) /* a merged file's own names and lines, binaries or not */
		cp_symbolizer__add_resolved_common(rp->sym, src->sym);
	for (uint32_t f = 0; f < src->nfns; f++) {
		struct cp_rfn fn = src->fns[f];

		if (!(fn.flags & CP_RFN_PSEUDO))
			fn.addr = cp_symbolizer__common_addr(src->sym, fn.addr);
		fnmap[f] = cp_name_map__fn(names, rp, &fn);
		if (fnmap[f] == rp->nfns - 1 && rp->fns[fnmap[f]].name == fn.name && fn.name) {
			/* New: the name outlives src. */
			ALLOC_GROW(rp->names, rp->nnames + 1, rp->names_alloc);
			rp->names[rp->nnames] = xstrdup(fn.name);
			rp->fns[fnmap[f]].name = rp->names[rp->nnames++];
		}
	}
	for (uint32_t k = 0; k < src->ntrees; k++) {
		const struct cp_rtree *st = &src->trees[k];
		struct cp_rtree *dt = rp->threads == CP_THREADS_MERGED ? &rp->trees[0] :
			new_tree(rp, xstrfmt("pid %u: %s", src->pf->meta.pid, st->label), st->tid);

		maps[k] = merge_tree(dt, src, st, fnmap);
	}
	if (src->pf->nlines)
		add_lines(rp, lx, src, first, maps);
	for (uint32_t k = 0; k < src->ntrees; k++)
		free(maps[k]);
	free(maps);
	free(fnmap);
	cp_meta__add_switches(&rp->pf->meta, rp->pf->nthreads, &src->pf->meta, src->pf->nthreads);
	rp->pf->nthreads += src->pf->nthreads;
	cp_meta__add(&rp->pf->meta, &src->pf->meta);
	CP_ADD_SAT(rp->shares.program, src->shares.program);
	CP_ADD_SAT(rp->shares.runtime, src->shares.runtime);
	CP_ADD_SAT(rp->shares.kernel, src->shares.kernel);
	CP_ADD_SAT(rp->shares.lost, src->shares.lost);
	CP_ADD_SAT(rp->calls, src->calls);
	CP_ADD_SAT(rp->open_at_start, src->open_at_start);
	CP_ADD_SAT(rp->paths, src->paths);
	CP_ADD_SAT(rp->excluded_calls, src->excluded_calls);
	CP_ADD_SAT(rp->raw_ns, src->raw_ns);
	CP_ADD_SAT(rp->subtracted_ns, src->subtracted_ns);
	rp->unsampled += src->unsampled;
	rp->compensated &= src->compensated;
	add_process(rp, src->pf);
	rp->nfiles++;
}

struct cp_report_profile *cp_report_profile__load_many(const char *const *paths, uint32_t n,
						       const struct cp_report_opts *opts)
{
	struct cp_report_opts o = *opts;
	struct cp_report_profile *one = NULL, *rp = NULL;
	struct cp_name_map names = { 0 };
	struct line_index lx = { 0 };
	struct selection sel = { .sel = opts->select_threads };
	uint32_t kept = 0;
	char *note = NULL;

	if (n == 1) /* no set of images to share: the file's symbolizer has its own */
		o.images = NULL;
	else
		o.images = cp_sym_images__new(&(struct cp_symbolizer_opts){
			.debug_dirs = opts->debug_dirs,
			.symfs = opts->symfs,
			.mangled = opts->mangled,
			.no_files = opts->no_files,
			.quiet = opts->no_files || opts->quiet,
		});
	if (sel.sel && !*sel.sel)
		sel.sel = NULL;
	if (sel.sel) {
		uint32_t k = 0;

		while (sel.sel[k])
			k++;
		sel.hit = xcalloc(k, 1);
	}
	for (uint32_t i = 0; i < n; i++) {
		struct cp_report_profile *p = cp_report_profile__load(paths[i], &o);

		if (!p)
			goto fail;
		if (opts->pid && p->pf->meta.pid != opts->pid) {
			cp_report_profile__free(p);
			continue;
		}
		if (kept && p->pf->meta.mode != (one ? one : rp->first)->pf->meta.mode) {
			cp_error("profile '%s' was recorded in another mode than '%s': they cannot be "
			      "merged", p->pf->path, (one ? one : rp->first)->pf->path);
			cp_report_profile__free(p);
			goto fail;
		}
		selection__add(&sel, p);
		kept++;
		if (kept == 1) {
			one = p; /* alone, it is the result as it is */
			continue;
		}
		if (kept == 2) {
			rp = start_merged(one, &o, n);
			add_file(rp, &names, &lx, one);
			one = NULL;
		}
		add_file(rp, &names, &lx, p);
		cp_report_profile__free(p);
	}
	if (!kept) {
		cp_error("no profile of pid %u among the %u file%s given", opts->pid, n,
		      n == 1 ? "" : "s");
		goto fail;
	}
	if (sel.sel && selection__check(&sel, kept, (one ? one : rp->first)->pf->path, &note))
		goto fail;
	free(sel.hit);
	free(names.slot);
	free(lx.slot);
	if (one) {
		one->images = o.images;
		one->filters = note;
		return one;
	}
	rp->filters = note;
	rp->pf->path = xstrfmt("%s and %u more", rp->first->pf->path, kept - 1);
	rp->split = rp->timed && measured(rp->pf->meta.switches);
	cp_report_profile__sort(rp, (enum cp_sort_key)
						   cp_report_profile__weight(rp, NULL, 0));
	return rp;

fail:
	free(sel.hit);
	free(names.slot);
	free(lx.slot);
	if (rp) {
		rp->pf->path = xstrdup("");
		cp_report_profile__free(rp); /* frees the images */
	} else {
		cp_report_profile__free(one);
		cp_sym_images__free(o.images);
	}
	return NULL;
}
