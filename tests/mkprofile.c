/*
 * mkprofile.c - write a profile from a text description, for end-to-end
 * tests of what no recording on this machine can produce on demand:
 * off-CPU time, thread CPU time, sampled profiles and their LINES.
 *
 *   mkprofile OUT <DESCRIPTION
 *
 * One record per line, "KEY=VALUE" arguments (numbers in C notation),
 * '#' starts a comment:
 *
 *   meta mode= clock= tps= pid= switches= errno= switch_lost= failed= hz=
 *        period= samples= samples_lost= sample_flags= duration= exe=
 *        flags=                enum cp_meta_flags (32: CP_META_ATTACHED)
 *   cmd ARG...                 the command line
 *   module PATH bias=ADDR flags=
 *                              an ELF file loaded at ADDR - its vaddrs; its
 *                              PT_LOAD headers become the maps; flags: enum
 *                              cp_module_flags (2: callprof's runtime)
 *   thread tid= name= cpu= nthreads= unclocked=
 *   node parent= fn= site= calls= ticks= min= max= wait= inactive= vol=
 *        invol= flags= open=   a node of the last thread; no parent: its root;
 *                              open: its calls open at attach (version 7)
 *   line node= ip= samples=    node: index in the file's NODES
 *   region id= name=           a REGIONS record (nodes name it with
 *                              flags=4 fn=ID)
 *
 * Nothing is checked beyond what the writer needs: the reader is the judge.
 * Threads, nodes, lines and regions have no fixed limit, so generated
 * descriptions (a million-deep chain, a million siblings) can be fed in.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"

#define MAX 4096

static struct cp_writer w;
static struct cp_meta meta;
static struct cp_module mods[16];
static struct cp_map maps[64];
static struct cp_thread_rec *threads;
static struct cp_node_rec *nodes;
static struct cp_line_rec *lines;
static struct cp_region_rec *regions;
static uint32_t nmods, nmaps, nthreads, nnodes, nlines, nregions;
static uint32_t threads_cap, nodes_cap, lines_cap, regions_cap;
static int any_open; /* a node has open= (the file needs a version 7 reader) */
static char cmdline[MAX];
static size_t cmdline_len;

static void fail(const char *fmt, const char *arg)
{
	fprintf(stderr, "mkprofile: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

/* Room for element n of arr (of *cap elements of size bytes), grown by doubling. */
static void *grow(void *arr, uint32_t n, uint32_t *cap, size_t size)
{
	if (n < *cap)
		return arr;
	*cap = *cap ? *cap * 2 : 1024;
	arr = realloc(arr, (size_t)*cap * size);
	if (!arr)
		fail("out of memory%s", "");
	return arr;
}

/* The value of KEY= in the arguments args[0..n), or NULL. */
static const char *arg(char **args, int n, const char *key)
{
	size_t len = strlen(key);

	for (int i = 0; i < n; i++)
		if (!strncmp(args[i], key, len) && args[i][len] == '=')
			return args[i] + len + 1;
	return NULL;
}

static uint64_t num(char **args, int n, const char *key, uint64_t dflt)
{
	const char *v = arg(args, n, key);
	char *end;
	uint64_t x;

	if (!v)
		return dflt;
	x = strtoull(v, &end, 0);
	if (*end || end == v)
		fail("not a number: '%s'", v);
	return x;
}

/* The PT_LOAD segments of ELF file path as maps, at load bias bias; flags: the module's. */
static void add_module(const char *path, uint64_t bias, uint32_t flags)
{
	FILE *f = fopen(path, "rb");
	Elf64_Ehdr eh;
	struct cp_module *m = &mods[nmods];

	if (!f || fread(&eh, sizeof(eh), 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		fail("cannot read ELF file '%s'", path);
	memset(m, 0, sizeof(*m));
	m->path = cp_writer__string(&w, path);
	m->load_bias = m->loaded_at = bias;
	m->flags = flags;
	m->first_map = nmaps;
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * eh.e_phentsize), SEEK_SET) ||
		    fread(&ph, sizeof(ph), 1, f) != 1)
			fail("cannot read the program headers of '%s'", path);
		if (ph.p_type != PT_LOAD || nmaps == sizeof(maps) / sizeof(maps[0]))
			continue;
		maps[nmaps++] = (struct cp_map){ .start = bias + ph.p_vaddr,
						 .end = bias + ph.p_vaddr + ph.p_memsz,
						 .offset = ph.p_offset, .prot = ph.p_flags,
						 .module = nmods };
		m->nmaps++;
	}
	fclose(f);
	nmods++;
}

static void record(char **a, int n)
{
	if (!strcmp(a[0], "meta")) {
		meta.mode = (uint32_t)num(a, n, "mode", CP_MODE_TIMING);
		meta.clock = (uint32_t)num(a, n, "clock", CP_CLOCK_MONOTONIC);
		meta.ticks_per_sec = num(a, n, "tps", 1000000000u);
		meta.pid = (uint32_t)num(a, n, "pid", 1);
		meta.switches = (uint32_t)num(a, n, "switches", 0);
		meta.switch_errno = (uint32_t)num(a, n, "errno", 0);
		meta.switch_lost = num(a, n, "switch_lost", 0);
		meta.switch_threads_failed = (uint32_t)num(a, n, "failed", 0);
		meta.sample_hz = (uint32_t)num(a, n, "hz", 0);
		meta.sample_period_ns = num(a, n, "period", 0);
		meta.samples = num(a, n, "samples", 0);
		meta.samples_lost = num(a, n, "samples_lost", 0);
		meta.sample_flags = (uint32_t)num(a, n, "sample_flags", 0);
		meta.duration_ns = num(a, n, "duration", 0);
		meta.overhead_ticks = num(a, n, "overhead", 0);
		meta.self_overhead_ticks = num(a, n, "self_overhead", 0);
		meta.flags = (uint32_t)num(a, n, "flags", 0);
		meta.exe = cp_writer__string(&w, arg(a, n, "exe") ? arg(a, n, "exe") : "prog");
		meta.hostname = cp_writer__string(&w, "host");
	} else if (!strcmp(a[0], "cmd")) {
		for (int i = 1; i < n; i++) {
			size_t len = strlen(a[i]) + 1;

			if (cmdline_len + len > sizeof(cmdline))
				fail("command line too long at '%s'", a[i]);
			memcpy(cmdline + cmdline_len, a[i], len);
			cmdline_len += len;
		}
	} else if (!strcmp(a[0], "module") && n > 1) {
		if (nmods == sizeof(mods) / sizeof(mods[0]))
			fail("too many modules at '%s'", a[1]);
		add_module(a[1], num(a, n, "bias", 0), (uint32_t)num(a, n, "flags", 0));
	} else if (!strcmp(a[0], "thread")) {
		struct cp_thread_rec *t;

		threads = grow(threads, nthreads, &threads_cap, sizeof(*threads));
		t = memset(&threads[nthreads++], 0, sizeof(*t));
		t->tid = (uint32_t)num(a, n, "tid", nthreads);
		t->name = cp_writer__string(&w, arg(a, n, "name") ? arg(a, n, "name") : "main");
		t->first_node = nnodes;
		t->cpu_ns = num(a, n, "cpu", 0);
		t->nthreads = (uint32_t)num(a, n, "nthreads", 1);
		t->unclocked = (uint32_t)num(a, n, "unclocked", 0);
		t->seq = nthreads - 1;
	} else if (!strcmp(a[0], "node") && nthreads) {
		struct cp_node_rec *r;

		nodes = grow(nodes, nnodes, &nodes_cap, sizeof(*nodes));
		r = memset(&nodes[nnodes++], 0, sizeof(*r));
		r->parent = (uint32_t)num(a, n, "parent", CP_NO_PARENT);
		r->fn = num(a, n, "fn", 0);
		r->site = num(a, n, "site", 0);
		r->calls = num(a, n, "calls", 0);
		r->ticks = num(a, n, "ticks", 0);
		r->min_ticks = num(a, n, "min", 0);
		r->max_ticks = num(a, n, "max", 0);
		r->wait_ticks = num(a, n, "wait", 0);
		r->inactive_ticks = num(a, n, "inactive", 0);
		r->switches_vol = num(a, n, "vol", 0);
		r->switches_invol = num(a, n, "invol", 0);
		r->flags = (uint32_t)num(a, n, "flags", 0);
		r->open_at_start = num(a, n, "open", 0);
		any_open |= r->open_at_start != 0;
		threads[nthreads - 1].nnodes++;
	} else if (!strcmp(a[0], "line")) {
		lines = grow(lines, nlines, &lines_cap, sizeof(*lines));
		lines[nlines++] = (struct cp_line_rec){ .node = (uint32_t)num(a, n, "node", 0),
							.ip = num(a, n, "ip", 0),
							.samples = num(a, n, "samples", 1) };
	} else if (!strcmp(a[0], "region")) {
		const char *name = arg(a, n, "name");

		regions = grow(regions, nregions, &regions_cap, sizeof(*regions));
		regions[nregions].id = (uint32_t)num(a, n, "id", nregions);
		regions[nregions++].name = cp_writer__string(&w, name ? name : "region");
	} else {
		fail("unknown record '%s'", a[0]);
	}
}

int main(int argc, char **argv)
{
	char buf[MAX], *args[64];
	int ret;

	if (argc != 2)
		fail("usage: %s OUT <DESCRIPTION", "mkprofile");
	ret = cp_writer__begin(&w, argv[1]);
	if (ret)
		fail("cannot write '%s'", argv[1]);
	while (fgets(buf, sizeof(buf), stdin)) {
		char *p = strchr(buf, '#'), *tok, *save;
		int n = 0;

		if (p)
			*p = '\0';
		for (tok = strtok_r(buf, " \t\n", &save); tok && n < 64;
		     tok = strtok_r(NULL, " \t\n", &save))
			args[n++] = tok;
		if (n)
			record(args, n);
	}
	cp_writer__section(&w, CP_SEC_META, sizeof(meta));
	cp_writer__put(&w, &meta, sizeof(meta));
	cp_writer__section(&w, CP_SEC_CMDLINE, 1);
	cp_writer__put(&w, cmdline, cmdline_len);
	cp_writer__section(&w, CP_SEC_MODULES, sizeof(mods[0]));
	cp_writer__put(&w, mods, nmods * sizeof(mods[0]));
	cp_writer__section(&w, CP_SEC_MAPS, sizeof(maps[0]));
	cp_writer__put(&w, maps, nmaps * sizeof(maps[0]));
	cp_writer__section(&w, CP_SEC_NODES, sizeof(nodes[0]));
	cp_writer__put(&w, nodes, (size_t)nnodes * sizeof(nodes[0]));
	cp_writer__section(&w, CP_SEC_THREADS, sizeof(threads[0]));
	cp_writer__put(&w, threads, nthreads * sizeof(threads[0]));
	if (nlines) {
		cp_writer__section(&w, CP_SEC_LINES, sizeof(lines[0]));
		cp_writer__put(&w, lines, nlines * sizeof(lines[0]));
	}
	if (nregions) {
		cp_writer__section(&w, CP_SEC_REGIONS, sizeof(regions[0]));
		cp_writer__put(&w, regions, nregions * sizeof(regions[0]));
		w.min_reader = CP_MIN_READER_SELECTION;
	}
	if (any_open)
		w.min_reader = CP_MIN_READER_ATTACH;
	ret = cp_writer__finish(&w, meta.clock != CP_CLOCK_NONE ? CP_FEAT_TIMING : 0);
	if (ret)
		fail("cannot write the profile: %s", strerror(-ret));
	return 0;
}
