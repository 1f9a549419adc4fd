/*
 * merge-file.c - `callprof merge`: many profiles (the processes of a job,
 * the ranks of an MPI run, runs on many machines) into one profile file
 * that every report and export reads, with each calling context's spread
 * across the inputs (minimum, maximum; the mean is the sum over the
 * number of inputs).
 *
 * Inputs are taken one at a time and freed, so memory holds the merged
 * tree and one input, not all of them.  Functions are matched by name, as
 * report does for several files.  Addresses are moved into one made-up
 * address space: the module with path P and build-id B gets the range
 * starting at module_base(k), and an address keeps its offset in its
 * module, so equal builds share addresses and `--addresses` still shows
 * real module offsets.  Names and lines go into the file's SYMBOLS
 * section, resolved once per (module, offset): the inputs of one program
 * cost one symbol lookup per function, however many there are, and the
 * merged file reads where the binaries are missing.
 *
 * Times were compensated in each input (with that process's own
 * calibration) before they were added; the file keeps the compensated
 * times in nanoseconds and no overhead figures, and INPUTS keeps what was
 * subtracted from each.
 *
 * Cpu-mode inputs (exact counts, CPU time sampled) make a cpu-mode file:
 * their CPU time stays samples, in LINES per merged context (addresses
 * moved like the rest, so the kernel's, the lost and the runtime's samples
 * stay apart), wait and inactive time in nanoseconds, and the node records
 * carry no ticks, as the runtime writes them.  Samples add up only at one
 * period: inputs sampled at another period than the first are refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "symbolize/symbolize.h"
#include "util/util.h"

/*
 * Above any user-space address (below 2^47) and below the range of
 * unloaded modules (2^63): each module gets 2^36 bytes.
 */
static uint64_t module_base(uint32_t k)
{
	return (1ull << 48) + ((uint64_t)k << 36);
}

struct mmodule {
	uint32_t path; /* strtab index */
	uint32_t build_id_size;
	uint8_t build_id[32];
	uint32_t first_map, nmaps; /* in merge.maps */
	uint32_t flags;		   /* CP_MODULE_RUNTIME kept: its samples are the profiler's */
	void *image;		   /* a module that is no file (the vDSO): its image, or NULL */
	uint64_t image_size;
};

/* A cpu-mode input's samples at ip, charged to merged context node. */
struct mline {
	uint32_t node;
	uint64_t ip; /* moved into the merged address space, or a pseudo address */
	uint64_t samples;
};

/* A source position: strtab index of the file (CP_NONE if unknown) and line. */
struct srcpos {
	uint32_t file;
	uint32_t line;
};

struct range {
	uint64_t start, end, bias;
	uint32_t module; /* merged module */
};

struct merge {
	struct cp_report_profile *rp; /* the merged functions and tree */
	struct cp_name_map names;
	struct cp_strtab str;	/* strings kept for the output, each once */
	uint32_t *str_off;	/* while writing: their offsets in the pool, or CP_NO_STRING */
	struct mmodule *mods;
	uint32_t nmods, mods_alloc;
	struct cp_map *maps; /* rebased; module = merged module */
	uint32_t nmaps, maps_alloc;
	struct cp_u64map fn_at;	  /* made-up address (or signal key) to function */
	struct srcpos *fn_src;	  /* per function */
	size_t fn_src_alloc;	  /* its capacity (ALLOC_GROW) */
	uint32_t *region_id;	  /* per function: its id in REGIONS, if a region */
	struct cp_u64map site_at; /* made-up return address to sites[] */
	uint64_t *site_addr;
	struct srcpos *site_src;
	uint32_t nsites, sites_alloc;
	struct cp_u64map ctx;	 /* (parent << 32 | fn) to merged node */
	struct cp_input_rec *inputs; /* strings as strtab indices until written */
	uint32_t ninputs, inputs_alloc;
	/* Per merged node, what the input being added gave it. */
	struct cp_rspread *cur;
	uint32_t *touched, ntouched, cur_alloc;
	struct cp_meta meta;
	uint32_t argv_len;	/* its bytes */
	char *argv;
	uint32_t nthreads;
	uint64_t open_frames;
	uint64_t cpu_ns;	/* the threads' kernel CPU time */
	uint32_t cpu_unknown;	/* threads without it */
	uint64_t unclocked;	/* the threads' kernel periods left out (cpu mode) */
	uint32_t hosts;		/* distinct host names */
	int cpu;		/* cpu-mode inputs: samples in lines[] */
	uint64_t period_ns;	/* ... all at this period */
	struct mline *lines;
	size_t nlines, lines_alloc;
	struct cp_u64map host_seen;
};

static uint32_t merge__module(struct merge *m, const struct cp_profile_file *pf, uint32_t i)
{
	const struct cp_module *src = &pf->modules[i];
	const char *path = cp_profile_file__str(pf, src->path);
	uint32_t p = cp_strtab__add(&m->str, path ? path : ""), k;
	struct mmodule *d;

	for (k = 0; k < m->nmods; k++)
		if (m->mods[k].path == p && m->mods[k].build_id_size == src->build_id_size &&
		    !memcmp(m->mods[k].build_id, src->build_id, src->build_id_size))
			return k;
	ALLOC_GROW(m->mods, m->nmods + 1, m->mods_alloc);
	d = &m->mods[m->nmods];
	d->path = p;
	d->build_id_size = src->build_id_size;
	memcpy(d->build_id, src->build_id, sizeof(d->build_id));
	d->first_map = m->nmaps;
	d->nmaps = src->nmaps;
	d->flags = src->flags & CP_MODULE_RUNTIME;
	d->image = NULL;
	d->image_size = 0;
	if (src->flags & CP_MODULE_IMAGE) {
		/* Kept: the merged file names its functions from it, as the input did. */
		const void *img = cp_profile_file__image(pf, i, &d->image_size);

		d->image = img ? xmalloc(d->image_size ? d->image_size : 1) : NULL;
		if (img)
			memcpy(d->image, img, d->image_size);
	}
	for (uint32_t j = 0; j < src->nmaps; j++) {
		struct cp_map mp = pf->maps[src->first_map + j];

		mp.start = mp.start - src->load_bias + module_base(k);
		mp.end = mp.end - src->load_bias + module_base(k);
		mp.module = k;
		ALLOC_GROW(m->maps, m->nmaps + 1, m->maps_alloc);
		m->maps[m->nmaps++] = mp;
	}
	return m->nmods++;
}

static int range__cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The made-up address of addr of the input whose ranges are r[0..n). */
static uint64_t rebase(const struct range *r, uint32_t n, uint64_t addr)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (addr < r[mid].start)
			hi = mid;
		else if (addr >= r[mid].end)
			lo = mid + 1;
		else
			return addr - r[mid].bias + module_base(r[mid].module);
	}
	return addr; /* in no module: kept, below every module_base() */
}

static struct srcpos srcpos(struct merge *m, int ok, const char *file, int line)
{
	struct srcpos s = { CP_NONE, 0 };

	if (ok == 0 && file && line > 0) {
		s.file = cp_strtab__add(&m->str, file);
		s.line = (uint32_t)line;
	}
	return s;
}

/* The merged function of input function f of p. */
static uint32_t merge__fn(struct merge *m, struct cp_report_profile *p, uint32_t f,
			  const struct range *r, uint32_t nr)
{
	const struct cp_rfn *src = &p->fns[f];
	int signal = src->flags & CP_RFN_SIGNAL, region = src->flags & CP_RFN_REGION;
	uint64_t at = signal ? src->addr | 1ull << 62 : rebase(r, nr, src->addr);
	/* A region's id is its input's own: regions are matched by name only. */
	uint32_t fn = region ? CP_NONE : cp_u64map__get(&m->fn_at, at);
	struct cp_rfn nf = { .addr = signal ? src->addr : at, .flags = src->flags };
	const char *file = NULL;
	int line = 0, ok = -1;
	uint32_t before, i;

	if (fn != CP_NONE)
		return fn;
	nf.name = signal ? cp_symbolizer__signal_name(p->sym, src->addr) :
		  region ? src->name : cp_symbolizer__fn_name(p->sym, src->addr);
	i = cp_strtab__add(&m->str, nf.name); /* may move str.s */
	nf.name = m->str.s[i];
	before = m->rp->nfns;
	fn = cp_name_map__fn(&m->names, m->rp, &nf);
	if (m->rp->nfns != before) { /* a new name */
		ALLOC_GROW(m->fn_src, m->rp->nfns, m->fn_src_alloc);
		if (!signal && !region)
			ok = cp_symbolizer__fn_src(p->sym, src->addr, &file, &line);
		m->fn_src[fn] = srcpos(m, ok, file, line);
	}
	if (!region)
		cp_u64map__get_or_add(&m->fn_at, at, fn);
	return fn;
}

/* The made-up address of call site `site` of p, its line resolved once. */
static uint64_t merge__site(struct merge *m, struct cp_report_profile *p, uint64_t site,
			    const struct range *r, uint32_t nr)
{
	uint64_t at;
	const char *file = NULL;
	int line = 0, ok;

	if (site <= CP_SITE_INLINED)
		return site;
	at = rebase(r, nr, site);
	if (cp_u64map__get(&m->site_at, at) != CP_NONE)
		return at;
	ALLOC_GROW(m->site_addr, m->nsites + 1, m->sites_alloc);
	m->site_src = xrealloc(m->site_src, m->sites_alloc * sizeof(*m->site_src));
	ok = cp_symbolizer__site(p->sym, site, &file, &line);
	m->site_addr[m->nsites] = at;
	m->site_src[m->nsites] = srcpos(m, ok, file, line);
	cp_u64map__get_or_add(&m->site_at, at, m->nsites++);
	return at;
}

/* Room for node t->nn - 1 (just added) in cur[] and spread[]. */
static void merge__grow(struct merge *m)
{
	struct cp_rtree *t = &m->rp->trees[0];
	uint32_t old = m->cur_alloc;

	if (t->nn > old) {
		m->cur_alloc = t->nn * 2;
		m->cur = xrealloc(m->cur, m->cur_alloc * sizeof(*m->cur));
		memset(m->cur + old, 0, (m->cur_alloc - old) * sizeof(*m->cur));
		m->touched = xrealloc(m->touched, m->cur_alloc * sizeof(*m->touched));
		t->spread = xrealloc(t->spread, m->cur_alloc * sizeof(*t->spread));
		memset(t->spread + old, 0, (m->cur_alloc - old) * sizeof(*t->spread));
	}
	t->nspread = t->nn;
}

/* Merged node for function fn under merged node parent. */
static uint32_t merge__child(struct merge *m, uint32_t parent, uint32_t fn)
{
	struct cp_rtree *t = &m->rp->trees[0];
	uint32_t id = cp_u64map__get_or_add(&m->ctx, (uint64_t)parent << 32 | fn, t->nn);

	if (id == t->nn) {
		cp_rtree__add(t, parent, fn);
		merge__grow(m);
	}
	return id;
}

/* The rank of the job that input pf was (its JOB), or CP_NO_RANK. */
static uint32_t input_rank(const struct cp_profile_file *pf)
{
	return pf->job ? pf->job->rank : CP_NO_RANK;
}

/*
 * The spread of an input that is no merged profile: the context's values
 * in input k (cur's maxima, the sums over its nodes of the context).
 */
static void spread_of_one(struct cp_rspread *c, uint32_t k)
{
	c->inputs = 1;
	c->dist = 1;
	c->min_calls = c->max_calls;
	c->min_total_ns = c->max_total_ns;
	c->min_self_ns = c->max_self_ns;
	c->min_cpu_ns = c->max_cpu_ns;
	c->min_calls_in = c->max_calls_in = c->min_total_in = c->max_total_in = k;
	c->min_self_in = c->max_self_in = c->min_cpu_in = c->max_cpu_in = k;
	c->absent = CP_NONE;
	c->sum_cpu_ns = c->max_cpu_ns;
	c->sumsq_calls = (unsigned __int128)c->max_calls * c->max_calls;
	c->sumsq_cpu = (unsigned __int128)c->max_cpu_ns * c->max_cpu_ns;
}

/* A merged input's spread s, its inputs numbered from k on, into c. */
static void spread_of_merged(struct cp_rspread *c, const struct cp_rspread *s, uint32_t k)
{
	struct cp_rspread x = *s;
	int again = c->inputs != 0;

	x.min_calls_in += k;
	x.max_calls_in += k;
	x.min_total_in += k;
	x.max_total_in += k;
	x.min_self_in += k;
	x.max_self_in += k;
	x.min_cpu_in += k;
	x.max_cpu_in += k;
	if (x.absent != CP_NONE)
		x.absent += k;
	cp_rspread__add(c, &x);
	/* Two contexts of one input met here: per input, their values add up. */
	if (again)
		c->dist = 0;
}

/*
 * Join s, the spread over inputs covered.. (numbered already), into d,
 * that over inputs 0..covered-1.  While merging, d->absent stays CP_NONE
 * as long as the inputs that entered the context are 0..d->inputs-1 (the
 * inputs added later without it are not visited): its lowest absent input
 * is then d->inputs, if below covered.  spread_absent() resolves it.
 */
static void spread_join(struct cp_rspread *d, const struct cp_rspread *s, uint32_t covered)
{
	uint32_t absent;

	if (!d->inputs)
		absent = covered ? 0 : CP_NONE;
	else if (d->absent != CP_NONE)
		absent = d->absent;
	else
		absent = d->inputs < covered ? d->inputs : CP_NONE;
	cp_rspread__add(d, s);
	d->absent = absent != CP_NONE ? absent : s->absent;
}

static uint32_t spread_absent(const struct cp_rspread *d, uint32_t ninputs)
{
	if (d->absent != CP_NONE)
		return d->absent;
	return d->inputs < ninputs ? d->inputs : CP_NONE;
}

static void add_input_record(struct merge *m, const struct cp_input_rec *src,
			     const struct cp_profile_file *pf)
{
	struct cp_input_rec in = *src;
	const char *host;

	/* Strings as strtab indices (CP_NONE for none) until written. */
	in.path = src->path == CP_NO_STRING ? CP_NONE :
		cp_strtab__add(&m->str, cp_profile_file__str(pf, src->path));
	in.exe = src->exe == CP_NO_STRING ? CP_NONE :
		cp_strtab__add(&m->str, cp_profile_file__str(pf, src->exe));
	host = cp_profile_file__str(pf, src->hostname);
	in.hostname = host ? cp_strtab__add(&m->str, host) : CP_NONE;
	if (host && cp_u64map__get(&m->host_seen, in.hostname) == CP_NONE) {
		cp_u64map__get_or_add(&m->host_seen, in.hostname, 1);
		m->hosts++;
	}
	ALLOC_GROW(m->inputs, m->ninputs + 1, m->inputs_alloc);
	m->inputs[m->ninputs++] = in;
}

/* Add input p (one tree, threads merged), given as path. */
static void merge__add(struct merge *m, struct cp_report_profile *p, const char *path)
{
	const struct cp_profile_file *pf = p->pf;
	const struct cp_rtree *src = &p->trees[0];
	struct cp_rtree *t = &m->rp->trees[0];
	uint32_t *fnmap = xmalloc((p->nfns ? p->nfns : 1) * sizeof(*fnmap));
	uint32_t *map = xmalloc(src->nn * sizeof(*map));
	struct range *r = xcalloc(pf->nmaps ? pf->nmaps : 1, sizeof(*r));
	uint32_t *modmap = xcalloc(pf->nmodules ? pf->nmodules : 1, sizeof(*modmap));
	/*
	 * Cpu mode: the contexts a NODES record made.  The others (a function
	 * without hooks the samples fell in, "[kernel]") the reader derives
	 * from LINES again: written as nodes, they would be there twice.
	 */
	uint8_t *real = NULL;
	uint32_t base = m->ninputs; /* the number of pf's first input */

	for (uint32_t i = 0; i < pf->nmodules; i++)
		modmap[i] = merge__module(m, pf, i);
	for (uint32_t i = 0; i < pf->nmaps; i++) {
		r[i].start = pf->maps[i].start;
		r[i].end = pf->maps[i].end;
		r[i].bias = pf->modules[pf->maps[i].module].load_bias;
		r[i].module = modmap[pf->maps[i].module];
	}
	qsort(r, pf->nmaps, sizeof(*r), range__cmp);
	for (uint32_t f = 0; f < p->nfns; f++)
		fnmap[f] = merge__fn(m, p, f, r, pf->nmaps);

	if (m->cpu) {
		real = xcalloc(src->nn, 1);
		for (uint32_t k = 0; k < pf->nnodes; k++)
			if (p->node_map[k] != CP_NONE)
				real[p->node_map[k]] = 1;
	}
	map[0] = 0;
	cp_rnode__add_counts(&t->n[0], &src->n[0]);
	m->ntouched = 0;
	for (uint32_t i = 1; i < src->nn; i++) {
		const struct cp_rnode *s = &src->n[i];
		uint32_t id;
		struct cp_rnode add = *s;
		struct cp_rspread *c;

		if (real && !real[i]) {
			map[i] = CP_NONE;
			continue;
		}
		id = merge__child(m, map[s->parent], fnmap[s->fn]);
		c = &m->cur[id];
		map[i] = id;
		if (s->sites == CP_NONE)
			cp_rtree__add_site(t, id, merge__site(m, p, s->site, r, pf->nmaps),
					   s->calls, s->total_ns, s->overhead_ns, 0);
		for (uint32_t k = s->sites; k != CP_NONE; k = src->sites[k].next) {
			const struct cp_rsite *e = &src->sites[k];

			cp_rtree__add_site(t, id, merge__site(m, p, e->site, r, pf->nmaps),
					   e->calls, e->total_ns, e->overhead_ns, 1);
		}
		add.site = t->n[id].site;
		cp_rnode__add_counts(&t->n[id], &add);
		CP_ADD_SAT(t->n[id].self_ns, s->self_ns);
		CP_ADD_SAT(t->n[id].overhead_ns, s->overhead_ns);
		CP_ADD_SAT(t->n[id].self_overhead_ns, s->self_overhead_ns);
		/* Two functions of one name under one caller meet in one node. */
		if (!c->inputs)
			m->touched[m->ntouched++] = id;
		if (src->spread) {
			spread_of_merged(c, &src->spread[i], base);
		} else {
			c->inputs = 1;
			CP_ADD_SAT(c->max_calls, s->calls);
			CP_ADD_SAT(c->max_total_ns, s->total_ns);
			CP_ADD_SAT(c->max_self_ns, s->self_ns);
			CP_ADD_SAT(c->max_cpu_ns, cp_rnode__self_cpu(s));
		}
	}
	for (uint32_t k = 0; k < m->ntouched; k++) {
		uint32_t id = m->touched[k];

		if (!src->spread)
			spread_of_one(&m->cur[id], base);
		spread_join(&t->spread[id], &m->cur[id], base);
		memset(&m->cur[id], 0, sizeof(m->cur[id]));
	}
	/* Cpu mode: the samples go to the merged contexts of theirs. */
	for (uint32_t k = 0; m->cpu && k < pf->nlines; k++) {
		const struct cp_line_rec *l = &pf->lines[k];
		uint32_t node = p->node_map[l->node];

		if (node == CP_NONE) /* a context the report leaves out */
			continue;
		ALLOC_GROW(m->lines, m->nlines + 1, m->lines_alloc);
		m->lines[m->nlines].node = map[node];
		m->lines[m->nlines].ip = l->ip < CP_IP_PSEUDO_LIMIT ? l->ip :
							      rebase(r, pf->nmaps, l->ip);
		m->lines[m->nlines++].samples = l->samples;
	}

	if (pf->ninputs) {
		for (uint32_t i = 0; i < pf->ninputs; i++)
			add_input_record(m, &pf->inputs[i], pf);
	} else {
		struct cp_input_rec in = {
			.path = CP_NO_STRING,
			.exe = pf->meta.exe,
			.hostname = pf->meta.hostname,
			.pid = pf->meta.pid,
			.start_realtime_ns = pf->meta.start_realtime_ns,
			.duration_ns = pf->meta.duration_ns,
			.calls = p->calls,
			.raw_ns = p->raw_ns,
			.subtracted_ns = p->subtracted_ns,
			.nthreads = pf->nthreads,
			.flags = pf->meta.flags,
			.rank = input_rank(pf),
		};

		add_input_record(m, &in, pf);
		m->inputs[m->ninputs - 1].path = cp_strtab__add(&m->str, path);
	}
	CP_ADD_SAT(m->rp->calls, p->calls);
	CP_ADD_SAT(m->rp->open_at_start, p->open_at_start);
	cp_meta__add_switches(&m->meta, m->nthreads, &pf->meta, src->nthreads);
	cp_meta__add(&m->meta, &pf->meta);
	if (pf->meta.duration_ns > m->meta.duration_ns)
		m->meta.duration_ns = pf->meta.duration_ns;
	for (uint32_t i = 0; i < pf->nthreads; i++) {
		m->nthreads += pf->threads[i].nthreads;
		m->open_frames += pf->threads[i].open_frames;
		CP_ADD_SAT(m->unclocked, pf->threads[i].unclocked);
	}
	CP_ADD_SAT(m->cpu_ns, src->cpu_ns);
	m->cpu_unknown += src->cpu_unknown;
	free(real);
	free(modmap);
	free(r);
	free(map);
	free(fnmap);
}

/* Node record of context n with one of its call sites' figures. */
static struct cp_node_rec node_rec(const struct merge *m, const struct cp_rnode *n,
				   uint32_t parent, uint64_t site, uint64_t calls, uint64_t total_ns)
{
	struct cp_node_rec r = { 0 };

	r.fn = n->fn == CP_NONE ? 0 : m->rp->fns[n->fn].addr;
	r.flags = n->fn != CP_NONE && (m->rp->fns[n->fn].flags & CP_RFN_SIGNAL) ? CP_NODE_SIGNAL : 0;
	if (n->fn != CP_NONE && (m->rp->fns[n->fn].flags & CP_RFN_REGION)) {
		r.flags = CP_NODE_REGION;
		r.fn = m->region_id[n->fn];
	}
	r.parent = parent;
	r.site = site;
	r.calls = calls;
	if (m->cpu) /* the time is in LINES; min and max were not measured */
		return r;
	r.ticks = total_ns; /* the file's clock counts ns */
	r.min_ticks = n->min_ns;
	r.max_ticks = n->max_ns;
	return r;
}

/*
 * The context's exclusive off-CPU figures and its calls open at attach
 * (known per context, not per site), on its first record only.
 */
static void node_rec_offcpu(struct cp_node_rec *r, const struct cp_rnode *n)
{
	r->open_at_start = n->open_at_start;
	r->wait_ticks = n->self_wait_ns;
	r->inactive_ticks = n->self_inactive_ns;
	r->switches_vol = n->self_switches_vol;
	r->switches_invol = n->self_switches_invol;
}

static int mline_cmp(const void *pa, const void *pb)
{
	const struct mline *a = pa, *b = pb;

	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

/* Cpu mode: LINES, one record per merged context and address; at[] maps nodes to records. */
static void write_lines(struct merge *m, struct cp_writer *w, const uint32_t *at)
{
	size_t k = 0;

	if (!m->cpu)
		return;
	if (m->nlines)
		qsort(m->lines, m->nlines, sizeof(*m->lines), mline_cmp);
	cp_writer__section(w, CP_SEC_LINES, sizeof(struct cp_line_rec));
	while (k < m->nlines) {
		struct cp_line_rec l = { .node = at[m->lines[k].node], .ip = m->lines[k].ip };
		size_t j = k;

		for (; j < m->nlines && !mline_cmp(&m->lines[j], &m->lines[k]); j++)
			CP_ADD_SAT(l.samples, m->lines[j].samples);
		if (l.samples)
			cp_writer__put(w, &l, sizeof(l));
		k = j;
	}
}

static void write_nodes(struct merge *m, struct cp_writer *w, uint32_t *nrec)
{
	const struct cp_rtree *t = &m->rp->trees[0];
	uint32_t *at = xmalloc(t->nn * sizeof(*at)), n = 0;
	struct cp_spread_rec none = { 0 };

	/* A context's call-site records follow its own record. */
	for (uint32_t i = 0; i < t->nn; i++) {
		at[i] = n++;
		for (uint32_t k = t->n[i].sites; k != CP_NONE && t->sites[k].next != CP_NONE;
		     k = t->sites[k].next)
			n++;
	}
	cp_writer__section(w, CP_SEC_NODES, sizeof(struct cp_node_rec));
	for (uint32_t i = 0; i < t->nn; i++) {
		const struct cp_rnode *nd = &t->n[i];
		uint32_t parent = i ? at[nd->parent] : CP_NO_PARENT;
		struct cp_node_rec r;

		if (nd->open_at_start && w->min_reader < CP_MIN_READER_ATTACH)
			w->min_reader = CP_MIN_READER_ATTACH;
		if (nd->sites == CP_NONE) {
			r = node_rec(m, nd, parent, nd->site, nd->calls, nd->total_ns);
			node_rec_offcpu(&r, nd);
			cp_writer__put(w, &r, sizeof(r));
			continue;
		}
		for (uint32_t k = nd->sites; k != CP_NONE; k = t->sites[k].next) {
			const struct cp_rsite *s = &t->sites[k];

			r = node_rec(m, nd, parent, s->site, s->calls, s->total_ns);
			if (k == nd->sites) {
				node_rec_offcpu(&r, nd);
			} else {
				r.flags |= CP_NODE_SITE;
			}
			cp_writer__put(w, &r, sizeof(r));
		}
	}
	cp_writer__section(w, CP_SEC_SPREAD, sizeof(struct cp_spread_rec));
	for (uint32_t i = 0; i < t->nn; i++) {
		struct cp_rspread s = t->spread[i];
		struct cp_spread_rec r;

		s.absent = spread_absent(&s, m->ninputs);
		cp_rspread__to_rec(&r, &s);
		cp_writer__put(w, i && s.inputs ? &r : &none, sizeof(r));
		for (uint32_t k = t->n[i].sites; k != CP_NONE && t->sites[k].next != CP_NONE;
		     k = t->sites[k].next)
			cp_writer__put(w, &none, sizeof(none));
	}
	*nrec = n;
	write_lines(m, w, at);
	free(at);
}

/* Offset in w's pool of kept string i (CP_NONE: none), added there once. */
static uint32_t string_off(struct merge *m, uint32_t i, struct cp_writer *w)
{
	if (i == CP_NONE)
		return CP_NO_STRING;
	if (m->str_off[i] == CP_NO_STRING)
		m->str_off[i] = cp_writer__string(w, m->str.s[i]);
	return m->str_off[i];
}

/*
 * The images of the modules that are no file (the vDSO), at their merged
 * load bias: the reader gives each to its MODULES record of that name and
 * bias (format version 8).
 */
static void write_images(struct merge *m, struct cp_writer *w)
{
	uint64_t offset = 0;
	uint32_t n = 0;

	for (uint32_t k = 0; k < m->nmods; k++)
		n += m->mods[k].image != NULL;
	if (!n)
		return;
	cp_writer__section(w, CP_SEC_IMAGES, sizeof(struct cp_image_rec));
	for (uint32_t k = 0; k < m->nmods; k++) {
		struct cp_image_rec r = { 0 };

		if (!m->mods[k].image)
			continue;
		r.load_bias = module_base(k);
		r.offset = offset;
		r.size = m->mods[k].image_size;
		r.name = string_off(m, m->mods[k].path, w);
		cp_writer__put(w, &r, sizeof(r));
		offset += r.size;
	}
	cp_writer__section(w, CP_SEC_IMAGE_DATA, 1);
	for (uint32_t k = 0; k < m->nmods; k++)
		if (m->mods[k].image)
			cp_writer__put(w, m->mods[k].image, m->mods[k].image_size);
}

/*
 * Number the regions (matched by name across the inputs) for the REGIONS
 * section, which the file then needs a version 5 reader for.
 */
static void number_regions(struct merge *m, struct cp_writer *w)
{
	uint32_t n = 0;

	m->region_id = xcalloc(m->rp->nfns + 1, sizeof(*m->region_id));
	for (uint32_t f = 0; f < m->rp->nfns; f++)
		if (m->rp->fns[f].flags & CP_RFN_REGION)
			m->region_id[f] = n++;
	if (n && w->min_reader < CP_MIN_READER_SELECTION)
		w->min_reader = CP_MIN_READER_SELECTION;
}

static void write_regions(struct merge *m, struct cp_writer *w)
{
	int any = 0;

	for (uint32_t f = 0; f < m->rp->nfns; f++) {
		const char *name = m->rp->fns[f].name;
		struct cp_region_rec r = { .id = m->region_id[f] };
		size_t len;
		char *bare;

		if (!(m->rp->fns[f].flags & CP_RFN_REGION))
			continue;
		if (!any++)
			cp_writer__section(w, CP_SEC_REGIONS, sizeof(r));
		/* "[NAME]" as report shows it: the file keeps NAME */
		len = strlen(name);
		bare = len >= 2 && name[0] == '[' ? xstrfmt("%.*s", (int)(len - 2), name + 1) : xstrdup(name);
		r.name = cp_writer__string(w, bare);
		free(bare);
		cp_writer__put(w, &r, sizeof(r));
	}
}

static int merge__write(struct merge *m, const char *out)
{
	struct cp_writer *w = xcalloc(1, sizeof(*w));
	struct cp_thread_rec th = { 0 };
	uint32_t nrec;
	int ret = cp_writer__begin(w, out);

	if (ret) {
		free(w);
		return cp_error("cannot write '%s': %s", out, strerror(-ret));
	}
	m->str_off = xmalloc((m->str.n ? m->str.n : 1) * sizeof(*m->str_off));
	memset(m->str_off, 0xff, m->str.n * sizeof(*m->str_off));
	m->meta.exe = string_off(m, m->inputs[0].exe, w);
	m->meta.hostname = m->hosts == 1 ? string_off(m, m->inputs[0].hostname, w) :
		cp_writer__string(w, "");
	cp_writer__section(w, CP_SEC_META, sizeof(m->meta));
	cp_writer__put(w, &m->meta, sizeof(m->meta));
	cp_writer__section(w, CP_SEC_CMDLINE, 1);
	cp_writer__put(w, m->argv, m->argv_len);

	cp_writer__section(w, CP_SEC_MODULES, sizeof(struct cp_module));
	for (uint32_t k = 0; k < m->nmods; k++) {
		struct cp_module mod = { 0 };

		mod.path = string_off(m, m->mods[k].path, w);
		mod.build_id_size = m->mods[k].build_id_size;
		memcpy(mod.build_id, m->mods[k].build_id, sizeof(mod.build_id));
		mod.load_bias = mod.loaded_at = module_base(k);
		mod.first_map = m->mods[k].first_map;
		mod.nmaps = m->mods[k].nmaps;
		mod.flags = m->mods[k].flags;
		cp_writer__put(w, &mod, sizeof(mod));
	}
	cp_writer__section(w, CP_SEC_MAPS, sizeof(struct cp_map));
	cp_writer__put(w, m->maps, (size_t)m->nmaps * sizeof(*m->maps));
	write_images(m, w);

	if (m->cpu && w->min_reader < CP_MIN_READER_CPU)
		w->min_reader = CP_MIN_READER_CPU;
	number_regions(m, w);
	write_nodes(m, w, &nrec);
	write_regions(m, w);
	th.name = cp_writer__string(w, "merged");
	th.nnodes = nrec;
	th.end_ns = m->meta.duration_ns;
	th.open_frames = m->open_frames;
	th.nthreads = m->nthreads ? m->nthreads : 1;
	th.cpu_ns = m->cpu_unknown ? 0 : m->cpu_ns; /* known for all, or not known */
	th.unclocked = m->unclocked < UINT32_MAX ? (uint32_t)m->unclocked : UINT32_MAX;
	cp_writer__section(w, CP_SEC_THREADS, sizeof(th));
	cp_writer__put(w, &th, sizeof(th));

	cp_writer__section(w, CP_SEC_SYMBOLS, sizeof(struct cp_symbol));
	for (uint32_t f = 0; f < m->rp->nfns; f++) {
		struct cp_symbol y = { 0 };

		if (m->rp->fns[f].flags & CP_RFN_PSEUDO)
			continue;
		y.addr = m->rp->fns[f].addr;
		y.kind = CP_SYM_FUNCTION;
		y.name = cp_writer__string(w, m->rp->fns[f].name);
		y.file = string_off(m, m->fn_src[f].file, w);
		y.line = m->fn_src[f].line;
		cp_writer__put(w, &y, sizeof(y));
	}
	for (uint32_t s = 0; s < m->nsites; s++) {
		struct cp_symbol y = { 0 };

		y.addr = m->site_addr[s];
		y.kind = CP_SYM_SITE;
		y.name = CP_NO_STRING;
		y.file = string_off(m, m->site_src[s].file, w);
		y.line = m->site_src[s].line;
		cp_writer__put(w, &y, sizeof(y));
	}
	cp_writer__section(w, CP_SEC_INPUTS, sizeof(struct cp_input_rec));
	for (uint32_t i = 0; i < m->ninputs; i++) {
		struct cp_input_rec in = m->inputs[i];

		in.path = string_off(m, in.path, w);
		in.exe = string_off(m, in.exe, w);
		in.hostname = string_off(m, in.hostname, w);
		cp_writer__put(w, &in, sizeof(in));
	}
	ret = cp_writer__finish(w, m->meta.clock != CP_CLOCK_NONE ? CP_FEAT_TIMING : 0);
	free(w);
	FREE_AND_NULL(m->region_id);
	if (ret)
		return cp_error("cannot write '%s': %s", out, strerror(-ret));
	return 0;
}

/* "[=====     ] 123/1000" on a terminal, redrawn when it changes. */
static void progress(uint32_t done, uint32_t n, int *shown)
{
	int width = 40, fill = (int)((uint64_t)done * width / n);

	if (fill == *shown && done != n)
		return;
	*shown = fill;
	fprintf(stderr, "\rmerging [%.*s%*s] %u/%u", fill, "========================================",
		width - fill, "", done, n);
	if (done == n)
		fprintf(stderr, "\r%*s\r", width + 32, "");
	fflush(stderr);
}

int cp_merge_files(const char *const *paths, uint32_t n, const char *out,
		   const struct cp_report_opts *opts, int show_progress,
		   struct cp_merge_result *res)
{
	struct cp_report_opts o = *opts;
	struct merge m = { 0 };
	struct cp_rtree *t;
	int ret = -1, shown = -1;

	o.threads = CP_THREADS_MERGED;
	o.unnamed = 1;
	o.addresses = 0;
	/* The inputs' symbolizers share their modules' files: one program's are read once. */
	o.images = cp_sym_images__new(&(struct cp_symbolizer_opts){
		.debug_dirs = opts->debug_dirs,
		.symfs = opts->symfs,
		.mangled = opts->mangled,
		.no_files = opts->no_files,
		.quiet = opts->no_files || opts->quiet,
	});
	m.rp = xcalloc(1, sizeof(*m.rp));
	m.rp->ntrees = 1;
	m.rp->trees = t = xcalloc(1, sizeof(*t));
	cp_rtree__add(t, CP_NONE, CP_NONE);
	cp_u64map__init(&m.fn_at, 1024);
	cp_u64map__init(&m.site_at, 1024);
	cp_u64map__init(&m.ctx, 1024);
	cp_u64map__init(&m.host_seen, 16);
	merge__grow(&m);
	m.meta.start_realtime_ns = UINT64_MAX;

	for (uint32_t i = 0; i < n; i++) {
		struct cp_report_profile *p = cp_report_profile__load(paths[i], &o);

		if (!p)
			goto out;
		if (!i) {
			const struct cp_profile_file *pf = p->pf;
			size_t len = 0;

			m.meta.mode = pf->meta.mode;
			m.cpu = p->cpu_sampled;
			m.period_ns = p->period_ns;
			m.meta.clock = p->timed ? CP_CLOCK_MONOTONIC : CP_CLOCK_NONE;
			m.meta.ticks_per_sec = p->timed ? 1000000000u : 0;
			for (uint32_t a = 0; a < pf->argc; a++)
				len += strlen(pf->argv[a]) + 1;
			m.argv = xmalloc(len ? len : 1);
			for (uint32_t a = 0; a < pf->argc; a++) {
				size_t l = strlen(pf->argv[a]) + 1;

				memcpy(m.argv + m.argv_len, pf->argv[a], l);
				m.argv_len += l;
			}
		} else if (p->pf->meta.mode != m.meta.mode) {
			cp_error("profile '%s' was recorded in another mode than '%s': they cannot be "
			      "merged", paths[i], paths[0]);
			cp_report_profile__free(p);
			goto out;
		} else if (m.cpu && p->period_ns != m.period_ns && p->shares.program +
			   p->shares.kernel + p->shares.lost + p->shares.runtime && m.period_ns) {
			cp_error("profile '%s' was sampled every %" PRIu64 " ns of CPU time, '%s' every "
			      "%" PRIu64 " ns: their samples cannot be added up", paths[i],
			      p->period_ns, paths[0], m.period_ns);
			cp_report_profile__free(p);
			goto out;
		}
		if (m.cpu && !m.period_ns) /* the first had no sample: the next sets it */
			m.period_ns = p->period_ns;
		merge__add(&m, p, paths[i]);
		cp_report_profile__free(p);
		if (show_progress)
			progress(i + 1, n, &shown);
	}
	if (m.cpu) /* the first file may have had no sample, and no period */
		m.meta.sample_period_ns = m.period_ns;
	m.meta.flags |= CP_META_MERGED;
	m.meta.flags &= ~(uint32_t)CP_META_FORKED;
	if (merge__write(&m, out))
		goto out;
	res->inputs = m.ninputs;
	res->hosts = m.hosts;
	res->calls = m.rp->calls;
	res->paths = t->nn - 1;
	ret = 0;
out:
	if (ret && show_progress && shown >= 0)
		fprintf(stderr, "\n");
	cp_sym_images__free(o.images);
	cp_strtab__release(&m.str);
	free(m.str_off);
	cp_u64map__release(&m.fn_at);
	cp_u64map__release(&m.site_at);
	cp_u64map__release(&m.ctx);
	cp_u64map__release(&m.host_seen);
	for (uint32_t k = 0; k < m.nmods; k++)
		free(m.mods[k].image);
	free(m.mods);
	free(m.maps);
	free(m.fn_src);
	free(m.site_addr);
	free(m.site_src);
	free(m.inputs);
	free(m.cur);
	free(m.touched);
	free(m.lines);
	free(m.argv);
	free(m.names.slot);
	free(t->n);
	free(t->sites);
	free(t->spread);
	free(t);
	free(m.rp->fns);
	free(m.rp);
	return ret;
}
