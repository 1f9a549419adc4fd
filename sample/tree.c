/*
 * tree.c - the calling-context trees of sampled stacks, and the profile
 * file that holds them.
 *
 * A sample adds one to every context on its stack (so calls are
 * inclusive), like the runtime's tree keyed by (parent, function): a
 * context's record keeps the return address of the first call site seen,
 * and other sites of the same context get CP_NODE_SITE records, so the
 * file reads exactly like an instrumented one (docs/profile-format.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "format/format.h"
#include "sample/internal.h"
#include "util/util.h"

static struct cp_u64map addr_numbers;

uint32_t sp_addr_number(uint64_t addr)
{
	if (!addr_numbers.keys)
		cp_u64map__init(&addr_numbers, 4096);
	return cp_u64map__get_or_add(&addr_numbers, addr, (uint32_t)addr_numbers.count);
}

static uint32_t tree__new_node(struct sp_tree *t, uint64_t fn, uint64_t site, uint32_t parent,
			       uint32_t flags)
{
	ALLOC_GROW(t->nodes, t->nnodes + 1, t->nodes_alloc);
	t->nodes[t->nnodes] = (struct sp_node){
		.fn = fn, .site = site, .parent = parent, .flags = flags
	};
	return t->nnodes++;
}

void sp_tree__init(struct sp_tree *t)
{
	memset(t, 0, sizeof(*t));
	cp_u64map__init(&t->ctx, 64);
	cp_u64map__init(&t->sites, 16);
	cp_u64map__init(&t->at, 64);
	tree__new_node(t, 0, 0, CP_NO_PARENT, 0);
}

void sp_tree__release(struct sp_tree *t)
{
	cp_u64map__release(&t->ctx);
	cp_u64map__release(&t->sites);
	cp_u64map__release(&t->at);
	FREE_AND_NULL(t->nodes);
	FREE_AND_NULL(t->lines);
}

static void node__count(struct sp_node *n, uint64_t period)
{
	n->calls++;
	n->ticks += period;
}

/* The record that counts the calls of context c from site: c's own, or a site record. */
static uint32_t tree__site_record(struct sp_tree *t, uint32_t c, uint64_t site)
{
	uint32_t r;

	if (t->nodes[c].site == site)
		return c;
	r = cp_u64map__get_or_add(&t->sites, (uint64_t)c << 32 | sp_addr_number(site), t->nnodes);
	if (r == t->nnodes)
		tree__new_node(t, t->nodes[c].fn, site, t->nodes[c].parent, CP_NODE_SITE);
	return r;
}

void sp_tree__add(struct sp_tree *t, const struct sp_frame *f, int n, uint64_t ip,
		  uint64_t period)
{
	uint32_t parent = 0, line;

	node__count(&t->nodes[0], period);
	for (int i = 0; i < n; i++) {
		uint64_t key = (uint64_t)parent << 32 | sp_addr_number(f[i].fn);
		uint32_t c = cp_u64map__get_or_add(&t->ctx, key, t->nnodes), r;

		if (c == t->nnodes)
			tree__new_node(t, f[i].fn, f[i].site, parent, 0);
		/* Not in one expression: t->nodes may be loaded before the call moves it. */
		r = tree__site_record(t, c, f[i].site);
		node__count(&t->nodes[r], period);
		parent = c;
	}
	if (!parent)
		return; /* no frame: nothing to say where the instruction was */
	line = cp_u64map__get_or_add(&t->at, (uint64_t)parent << 32 | sp_addr_number(ip),
				     t->nlines);
	if (line == t->nlines) {
		ALLOC_GROW(t->lines, t->nlines + 1, t->lines_alloc);
		t->lines[t->nlines++] = (struct sp_line){ .node = parent, .ip = ip };
	}
	t->lines[line].samples++;
}

/* ---- the profile file ---- */

static void write_modules(struct cp_writer *w, const struct sp_proc *p)
{
	uint32_t first = 0;

	cp_writer__section(w, CP_SEC_MODULES, sizeof(struct cp_module));
	for (size_t i = 0; i < p->nmods; i++) {
		const struct sp_module *m = &p->mods[i];
		struct cp_module r = {
			.path = cp_writer__string(w, m->path),
			.build_id_size = m->elf.build_id_size,
			.load_bias = m->bias,
			.loaded_at = m->bias,
			.first_map = first,
			.nmaps = (uint32_t)m->elf.nsegs,
		};

		memcpy(r.build_id, m->elf.build_id, sizeof(r.build_id));
		first += r.nmaps;
		cp_writer__put(w, &r, sizeof(r));
	}
	cp_writer__section(w, CP_SEC_MAPS, sizeof(struct cp_map));
	for (size_t i = 0; i < p->nmods; i++) {
		const struct sp_module *m = &p->mods[i];

		for (size_t k = 0; k < m->elf.nsegs; k++) {
			const struct cp_elf_seg *s = &m->elf.segs[k];
			struct cp_map r = { .start = m->bias + s->vaddr,
					    .end = m->bias + s->vaddr + s->memsz,
					    .offset = s->offset,
					    .prot = s->flags,
					    .module = (uint32_t)i };

			cp_writer__put(w, &r, sizeof(r));
		}
	}
	/* The vDSO has no file: its image (the tool's, the same kernel's). */
	cp_writer__vdso(w, p->vdso_at);
}

static void write_nodes(struct cp_writer *w, const struct sp_proc *p)
{
	cp_writer__section(w, CP_SEC_NODES, sizeof(struct cp_node_rec));
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct sp_tree *t = &p->threads[i].tree;

		for (uint32_t k = 0; k < t->nnodes; k++) {
			const struct sp_node *n = &t->nodes[k];
			struct cp_node_rec r = { .fn = n->fn,
						 .site = n->site,
						 .parent = n->parent,
						 .flags = n->flags,
						 .calls = n->calls,
						 .ticks = n->ticks };

			cp_writer__put(w, &r, sizeof(r));
		}
	}
	cp_writer__section(w, CP_SEC_LINES, sizeof(struct cp_line_rec));
	for (size_t i = 0, base = 0; i < p->nthreads; i++) {
		const struct sp_tree *t = &p->threads[i].tree;

		for (uint32_t k = 0; k < t->nlines; k++) {
			struct cp_line_rec r = { .node = (uint32_t)(base + t->lines[k].node),
						 .ip = t->lines[k].ip,
						 .samples = t->lines[k].samples };

			cp_writer__put(w, &r, sizeof(r));
		}
		base += t->nnodes;
	}
}

static void write_threads(struct cp_writer *w, const struct sp_proc *p)
{
	uint32_t first = 0;

	cp_writer__section(w, CP_SEC_THREADS, sizeof(struct cp_thread_rec));
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct sp_thread *t = &p->threads[i];
		struct cp_thread_rec r = {
			.tid = t->tid,
			.name = cp_writer__string(w, t->name ? t->name : ""),
			.first_node = first,
			.nnodes = t->tree.nnodes,
			.start_ns = t->start_ns - p->start_ns,
			.end_ns = (t->exited ? t->end_ns : p->end_ns) - p->start_ns,
			.flags = t->exited ? CP_THREAD_EXITED : 0,
			.seq = t->seq,
			.nthreads = 1,
			.cpu_ns = t->cpu_ns,
		};

		first += r.nnodes;
		cp_writer__put(w, &r, sizeof(r));
	}
}

static void fill_meta(struct cp_meta *m, const struct sp_proc *p, const struct sp_run *run)
{
	uint64_t ns = 0;

	for (size_t i = 0; i < p->nthreads; i++)
		ns += p->threads[i].cpu_ns;
	*m = (struct cp_meta){
		.pid = p->pid,
		.ppid = p->ppid,
		.mode = CP_MODE_SAMPLED,
		.clock = CP_CLOCK_MONOTONIC,
		.ticks_per_sec = 1000000000u,
		.start_realtime_ns = p->start_ns + run->mono_to_real,
		.duration_ns = p->end_ns - p->start_ns,
		.flags = p->forked ? CP_META_FORKED : 0,
		.sample_hz = run->hz,
		.sample_period_ns = p->samples ? ns / p->samples : 0,
		.samples = p->samples,
		.samples_lost = p->lost + p->unwound_none,
		.sample_flags = run->unwind ? CP_SAMPLE_FP : CP_SAMPLE_DWARF,
	};
}

/* PATH for the process record started, PATH.PID for the others; then suffix. */
static char *proc_path(const struct sp_proc *p, const struct sp_run *run, const char *suffix)
{
	if (p->pid == run->root_pid)
		return xstrfmt("%s%s", run->out, suffix);
	return xstrfmt("%s.%u%s", run->out, p->pid, suffix);
}

int sp_proc__write(const struct sp_proc *p, const struct sp_run *run, const char *suffix)
{
	struct cp_writer *w = xcalloc(1, sizeof(*w));
	char *path = proc_path(p, run, suffix);
	struct cp_meta meta;
	struct utsname un;
	int ret;

	ret = cp_writer__begin(w, path);
	if (ret)
		goto out;
	fill_meta(&meta, p, run);
	/* Never over a profile of a process that ran meanwhile (format/writer.c). */
	w->since_ns = meta.start_realtime_ns;
	w->pid = meta.pid;
	meta.exe = cp_writer__string(w, p->exe ? p->exe : "");
	meta.hostname = cp_writer__string(w, uname(&un) ? "" : un.nodename);
	cp_writer__section(w, CP_SEC_META, sizeof(meta));
	cp_writer__put(w, &meta, sizeof(meta));
	cp_writer__section(w, CP_SEC_CMDLINE, 1);
	cp_writer__put(w, p->cmdline, p->cmdline_len);
	write_modules(w, p);
	write_nodes(w, p);
	write_threads(w, p);
	ret = cp_writer__finish(w, CP_FEAT_TIMING);
out:
	if (ret) {
		cp_writer__abort(w);
		cp_error("cannot write profile '%s': %s", path, strerror(-ret));
	}
	free(path);
	free(w);
	return ret ? -1 : 0;
}
