/*
 * session.c - run a program under perf sampling events and turn the
 * records into one calling-context tree per thread, one profile per
 * process image.
 *
 * The program is forked stopped on a pipe, so the events exist before it
 * runs a single instruction of its own; enable_on_exec starts them at the
 * exec, and inherit follows its threads and children.  One event per
 * online CPU (the kernel refuses to mmap an inherited per-task event that
 * is not bound to a CPU), each with its own ring, drained from a poll
 * loop.  Rings of different CPUs are not ordered with each other, so the
 * records of a round are sorted by time, and those younger than the start
 * of the round wait for the next one: a fork or mmap recorded on one CPU
 * then comes before the samples it explains from another.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "sample/internal.h"
#include "sample/sample.h"
#include "symbolize/unwind.h"
#include "util/strbuf.h"
#include "util/util.h"

/*
 * Bytes of user stack copied per sample for DWARF unwinding.  16 KiB held
 * the whole stack of all but one in 150 samples of CPython, 8 KiB of one
 * in 20 (measured, docs/internals/sampling.md); deeper stacks end early
 * and are kept from where they end.
 */
#define SP_STACK_BYTES 16384
#define SP_MAX_FRAMES 512
/* x86-64 user registers the unwinder needs: AX..IP (0-8), R8..R15 (16-23). */
#define SP_REGS_MASK 0xff01ffull
/* Records younger than the start of a round wait for the next one (ns). */
#define SP_REORDER_NS 2000000

struct sp_rec {
	uint64_t time; /* perf timestamp (CLOCK_MONOTONIC) */
	size_t off;    /* in the batch buffer */
	uint32_t len;  /* bytes */
	uint32_t seq;  /* arrival order, for a stable sort */
};

struct cp_sampler {
	struct cp_sample_opts opts;
	struct sp_run run;
	const char **argv;
	pid_t child;
	int go_fd;		/* write end of the pipe the child waits on */
	int *fds;		/* one event per CPU */
	struct cp_ring *rings;
	size_t nfds, map_bytes;
	uint64_t sample_type;
	unsigned char *buf;	/* records of the current round, copied out of the rings */
	size_t buf_len, buf_alloc;
	struct sp_rec *recs;
	size_t nrecs, recs_alloc;
	uint32_t seq;
	struct sp_proc **procs;
	size_t nprocs, procs_alloc;
	struct cp_u64map pids;	/* pid -> index in procs */
	uint64_t lost_unknown;	/* lost records before any process was known */
	int errors;		/* profiles that could not be written */
};

/* ---- processes, threads, modules ---- */

static struct sp_thread *proc__thread(struct sp_proc *p, uint32_t tid, uint64_t time)
{
	struct sp_thread *t;

	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	ALLOC_GROW(p->threads, p->nthreads + 1, p->threads_alloc);
	t = &p->threads[p->nthreads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->seq = (uint32_t)p->nthreads++;
	t->start_ns = time;
	sp_tree__init(&t->tree);
	return t;
}

static void proc__reset(struct sp_proc *p)
{
	for (size_t i = 0; i < p->nmods; i++) {
		free(p->mods[i].path);
		cp_elf_info__release(&p->mods[i].elf);
	}
	FREE_AND_NULL(p->mods);
	p->nmods = p->mods_alloc = 0;
	p->vdso_at = 0;
	cp_unwinder__free(p->uw);
	p->uw = NULL;
	for (size_t i = 0; i < p->nthreads; i++) {
		free(p->threads[i].name);
		sp_tree__release(&p->threads[i].tree);
	}
	FREE_AND_NULL(p->threads);
	p->nthreads = p->threads_alloc = 0;
	cp_u64map__release(&p->fn_cache);
	FREE_AND_NULL(p->fns);
	p->nfns = p->fns_alloc = 0;
	FREE_AND_NULL(p->exe);
	p->samples = p->lost = p->unwound_none = p->partial = 0;
}

/* A fresh image of process pid: main thread only, no modules yet. */
static void proc__begin_image(struct sp_proc *p, uint64_t time, const char *name)
{
	struct sp_thread *t;

	p->uw = cp_unwinder__new();
	cp_u64map__init(&p->fn_cache, 1024);
	p->start_ns = p->end_ns = time;
	t = proc__thread(p, p->pid, time);
	t->name = xstrdup(name ? name : "");
}

static struct sp_proc *sampler__proc(struct cp_sampler *s, uint32_t pid)
{
	uint32_t i = cp_u64map__get(&s->pids, pid);

	return i == CP_U64MAP_NONE ? NULL : s->procs[i];
}

static struct sp_proc *sampler__new_proc(struct cp_sampler *s, uint32_t pid, uint32_t ppid,
					 uint64_t time, const char *name)
{
	struct sp_proc *p = xcalloc(1, sizeof(*p));

	p->pid = pid;
	p->ppid = ppid;
	proc__begin_image(p, time, name);
	ALLOC_GROW(s->procs, s->nprocs + 1, s->procs_alloc);
	s->procs[s->nprocs] = p;
	cp_u64map__get_or_add(&s->pids, pid, (uint32_t)s->nprocs++);
	return p;
}

static void proc__add_module(struct sp_proc *p, const char *path, uint64_t bias,
			     const struct cp_elf_info *elf)
{
	struct sp_module *m;

	for (size_t i = 0; i < p->nmods; i++)
		if (p->mods[i].bias == bias && !strcmp(p->mods[i].path, path))
			return;
	ALLOC_GROW(p->mods, p->nmods + 1, p->mods_alloc);
	m = &p->mods[p->nmods++];
	m->path = xstrdup(path);
	m->bias = bias;
	m->elf = *elf;
	m->elf.segs = xmalloc(elf->nsegs * sizeof(*elf->segs));
	memcpy(m->elf.segs, elf->segs, elf->nsegs * sizeof(*elf->segs));
	cp_unwinder__add_module(p->uw, path, bias);
}

/*
 * The vDSO mapped at at: the kernel maps the same image into every 64-bit
 * process, so the tool's own stands in for it, to unwind through (its
 * CFI) and to name its functions (the profile gets it, cp_writer__vdso).
 */
static void proc__vdso(struct sp_proc *p, uint64_t at)
{
	uint64_t link_base;
	size_t size;
	const void *img = cp_vdso_image(&size, &link_base);

	if (!img || p->vdso_at == at)
		return;
	p->vdso_at = at;
	cp_unwinder__add_image(p->uw, "[vdso]", img, size, at - link_base);
}

/* An executable mapping of path at start from file offset pgoff. */
static void proc__map(struct sp_proc *p, const char *path, uint64_t start, uint64_t pgoff)
{
	struct cp_elf_info elf;
	uint64_t bias;

	if (cp_elf_info__read(path, &elf))
		return; /* deleted, or not ELF (a JIT's file): its samples stay unnamed */
	if (!cp_load_bias(elf.segs, elf.nsegs, start, pgoff, &bias))
		proc__add_module(p, path, bias, &elf);
	cp_elf_info__release(&elf);
}

static void proc__read_cmdline(struct sp_proc *p)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	if (fd >= 0)
		close(fd);
	free(p->cmdline);
	p->cmdline_len = sb.len;
	p->cmdline = strbuf_detach(&sb, NULL);
}

/* ---- records ---- */

/* The pid, tid and time that sample_id_all appends to other records. */
struct sp_id {
	uint32_t pid, tid;
	uint64_t time;
};

static struct sp_id rec_id(const void *rec, size_t len)
{
	struct sp_id id;

	memcpy(&id, (const char *)rec + len - sizeof(id), sizeof(id));
	return id;
}

static void sampler__lost(struct cp_sampler *s, uint32_t pid, uint64_t n)
{
	struct sp_proc *p = sampler__proc(s, pid);

	if (!p && s->nprocs)
		p = s->procs[0];
	if (p)
		p->lost += n;
	else
		s->lost_unknown += n;
}

static void sampler__exec(struct cp_sampler *s, struct sp_proc *p, const char *comm,
			  uint64_t time)
{
	int had_samples = p->samples || p->lost || p->unwound_none;

	if (had_samples) {
		char suffix[32];

		snprintf(suffix, sizeof(suffix), ".exec%u", ++p->execs);
		p->end_ns = time;
		if (sp_proc__write(p, &s->run, suffix))
			s->errors++;
	}
	proc__reset(p);
	proc__begin_image(p, time, comm);
	p->exited = 0;
	/* The program record started keeps its argv; others say what they ran now. */
	if (p->pid != s->run.root_pid || had_samples || p->execs)
		proc__read_cmdline(p);
}

static void sampler__comm(struct cp_sampler *s, const struct perf_event_header *h,
			  const void *rec, size_t len)
{
	const struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[];
	} *r = rec;
	struct sp_id id = rec_id(rec, len);
	struct sp_proc *p = sampler__proc(s, r->pid);
	char comm[17];

	snprintf(comm, sizeof(comm), "%s", r->comm);
	if (!p)
		p = sampler__new_proc(s, r->pid, 0, id.time, comm);
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
		sampler__exec(s, p, comm, id.time);
	{
		struct sp_thread *t = proc__thread(p, r->tid, id.time);

		free(t->name);
		t->name = xstrdup(comm);
	}
}

static void sampler__mmap2(struct cp_sampler *s, const void *rec)
{
	const struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_generation;
		uint32_t prot, flags;
		char filename[];
	} *r = rec;
	struct sp_proc *p = sampler__proc(s, r->pid);

	if (p && !strcmp(r->filename, "[vdso]")) {
		proc__vdso(p, r->addr);
		return;
	}
	if (!p || r->filename[0] != '/')
		return; /* anonymous, [stack]... */
	if (!p->exe)
		p->exe = xstrdup(r->filename); /* the kernel maps the program first */
	if (r->prot & PROT_EXEC)
		proc__map(p, r->filename, r->addr, r->pgoff);
}

/* PERF_RECORD_FORK and PERF_RECORD_EXIT: the same layout. */
struct sp_task_rec {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

static void sampler__fork(struct cp_sampler *s, const void *rec)
{
	const struct sp_task_rec *r = rec;
	struct sp_proc *parent = sampler__proc(s, r->ppid), *p;
	const struct sp_thread *creator = NULL;

	if (parent)
		for (size_t i = 0; i < parent->nthreads; i++)
			if (parent->threads[i].tid == r->ptid)
				creator = &parent->threads[i];
	if (r->pid == r->ppid) { /* a new thread */
		struct sp_thread *t;

		if (!parent)
			return;
		t = proc__thread(parent, r->tid, r->time);
		if (!t->name)
			t->name = xstrdup(creator && creator->name ? creator->name : "");
		return;
	}
	if (sampler__proc(s, r->pid))
		return;
	p = sampler__new_proc(s, r->pid, r->ppid, r->time, creator ? creator->name : NULL);
	p->forked = 1;
	if (!parent)
		return;
	/* The child has its parent's address space and command line. */
	for (size_t i = 0; i < parent->nmods; i++)
		proc__add_module(p, parent->mods[i].path, parent->mods[i].bias,
				 &parent->mods[i].elf);
	if (parent->vdso_at)
		proc__vdso(p, parent->vdso_at);
	p->exe = parent->exe ? xstrdup(parent->exe) : NULL;
	p->cmdline_len = parent->cmdline_len;
	p->cmdline = xmalloc(p->cmdline_len + 1);
	memcpy(p->cmdline, parent->cmdline, p->cmdline_len);
}

static void sampler__exit(struct cp_sampler *s, const void *rec)
{
	const struct sp_task_rec *r = rec;
	struct sp_proc *p = sampler__proc(s, r->pid);
	struct sp_thread *t;

	if (!p)
		return;
	t = proc__thread(p, r->tid, r->time);
	t->exited = 1;
	t->end_ns = r->time;
	if (r->tid == r->pid)
		p->exited = 1;
}

/* Function entry for the frame at pc (a return address unless leaf). */
static uint64_t proc__fn(struct sp_proc *p, uint64_t pc, int leaf)
{
	uint64_t a = leaf ? pc : pc - 1;
	uint32_t i = cp_u64map__get_or_add(&p->fn_cache, a, (uint32_t)p->nfns);

	if (i == p->nfns) {
		ALLOC_GROW(p->fns, p->nfns + 1, p->fns_alloc);
		p->fns[p->nfns++] = cp_unwinder__fn_entry(p->uw, a);
	}
	return p->fns[i];
}

/* The sample's frames, leaf first; 0 if none. */
static int sampler__stack(struct cp_sampler *s, struct sp_proc *p, uint32_t tid,
			  const uint64_t *w, const uint64_t *end, uint64_t *pcs, int *complete)
{
	int n = 0;

	*complete = 0;
	if (w >= end)
		return 0;
	if (s->opts.unwind == CP_UNWIND_FP) {
		uint64_t nr = *w++;

		if (nr > (uint64_t)(end - w))
			return 0;
		for (uint64_t i = 0; i < nr && n < SP_MAX_FRAMES; i++)
			if (w[i] < PERF_CONTEXT_MAX)
				pcs[n++] = w[i];
		/* A chain is complete when the walk found a zero frame pointer. */
		*complete = n < SP_MAX_FRAMES;
		return n;
	} else {
		struct cp_unwind_regs r = { .mask = SP_REGS_MASK };
		uint64_t abi = *w++, size;

		if (abi == PERF_SAMPLE_REGS_ABI_NONE)
			return 0; /* a kernel thread, or no user state */
		for (int bit = 0; bit < 24; bit++) {
			if (!(SP_REGS_MASK & (1ull << bit)))
				continue;
			if (w >= end)
				return 0;
			r.regs[bit] = *w++;
		}
		if (w >= end)
			return 0;
		size = *w++;
		if (size > (uint64_t)(end - w) * 8 || (size && size / 8 + 1 > (uint64_t)(end - w)))
			return 0;
		r.stack = (const unsigned char *)w;
		r.stack_size = size ? w[size / 8] : 0; /* dyn_size: what was really copied */
		if (r.stack_size > size)
			r.stack_size = size;
		return cp_unwinder__unwind(p->uw, tid, &r, pcs, SP_MAX_FRAMES, complete);
	}
}

static void sampler__sample(struct cp_sampler *s, const void *rec, size_t len)
{
	const uint64_t *w = (const uint64_t *)rec + 1, *end = (const uint64_t *)rec + len / 8;
	uint64_t ip, time, period, pcs[SP_MAX_FRAMES];
	struct sp_frame frames[SP_MAX_FRAMES];
	uint32_t pid, tid;
	struct sp_proc *p;
	struct sp_thread *t;
	int n, complete;

	if (len < 8 + 4 * 8)
		return;
	ip = *w++;
	pid = (uint32_t)*w;
	tid = (uint32_t)(*w++ >> 32);
	time = *w++;
	period = *w++;
	p = sampler__proc(s, pid);
	if (!p)
		p = sampler__new_proc(s, pid, 0, time, NULL);
	t = proc__thread(p, tid, time);
	if (time > p->end_ns)
		p->end_ns = time;
	n = sampler__stack(s, p, tid, w, end, pcs, &complete);
	if (!n) {
		p->unwound_none++;
		return;
	}
	pcs[0] = ip;
	/* Outermost first; each frame's site is the return address in its caller. */
	for (int i = 0; i < n; i++) {
		int k = n - 1 - i;

		frames[i].fn = proc__fn(p, pcs[k], k == 0);
		frames[i].site = k + 1 < n ? pcs[k + 1] : 0;
	}
	sp_tree__add(&t->tree, frames, n, ip, period);
	t->samples++;
	t->cpu_ns += period;
	p->samples++;
	p->partial += !complete;
}

static void sampler__record(struct cp_sampler *s, const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		sampler__sample(s, rec, len);
		break;
	case PERF_RECORD_MMAP2:
		sampler__mmap2(s, rec);
		break;
	case PERF_RECORD_COMM:
		sampler__comm(s, h, rec, len);
		break;
	case PERF_RECORD_FORK:
		sampler__fork(s, rec);
		break;
	case PERF_RECORD_EXIT:
		sampler__exit(s, rec);
		break;
	case PERF_RECORD_LOST: {
		struct sp_id id = rec_id(rec, len);

		sampler__lost(s, id.pid, ((const uint64_t *)rec)[2]);
		break;
	}
	case PERF_RECORD_LOST_SAMPLES: {
		struct sp_id id = rec_id(rec, len);

		sampler__lost(s, id.pid, ((const uint64_t *)rec)[1]);
		break;
	}
	default:
		break; /* throttling and the like */
	}
}

/* ---- rounds: copy out of the rings, order, process ---- */

static void sampler__collect(const void *rec, size_t len, void *arg)
{
	struct cp_sampler *s = arg;
	const struct perf_event_header *h = rec;
	struct sp_rec *r;

	if (len < sizeof(*h) + 16)
		return;
	ALLOC_GROW(s->buf, s->buf_len + len, s->buf_alloc);
	memcpy(s->buf + s->buf_len, rec, len);
	ALLOC_GROW(s->recs, s->nrecs + 1, s->recs_alloc);
	r = &s->recs[s->nrecs++];
	r->off = s->buf_len;
	r->len = (uint32_t)len;
	r->seq = s->seq++;
	if (h->type == PERF_RECORD_SAMPLE)
		memcpy(&r->time, (const char *)rec + 8 + 16, 8); /* after ip, pid/tid */
	else
		r->time = rec_id(rec, len).time;
	s->buf_len += len;
}

static int sp_rec__cmp(const void *a, const void *b)
{
	const struct sp_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One round; all = 1 at the end, when nothing younger can arrive. */
static void sampler__round(struct cp_sampler *s, int all)
{
	uint64_t limit = now_ns() - SP_REORDER_NS;
	size_t done = 0, keep_len = 0;
	unsigned char *keep;

	for (size_t i = 0; i < s->nfds; i++)
		if (cp_ring__drain(&s->rings[i], sampler__collect, s) < 0)
			cp_warning("perf ring of CPU event %zu was corrupt; its records were skipped",
				i);
	qsort(s->recs, s->nrecs, sizeof(*s->recs), sp_rec__cmp);
	for (; done < s->nrecs && (all || s->recs[done].time <= limit); done++)
		sampler__record(s, s->buf + s->recs[done].off, s->recs[done].len);
	/* What is too young waits, moved to the front of the buffer. */
	keep = xmalloc(s->buf_len ? s->buf_len : 1);
	for (size_t i = done; i < s->nrecs; i++) {
		memcpy(keep + keep_len, s->buf + s->recs[i].off, s->recs[i].len);
		s->recs[i - done] = s->recs[i];
		s->recs[i - done].off = keep_len;
		keep_len += s->recs[i].len;
	}
	free(s->buf);
	s->buf = keep;
	s->buf_alloc = s->buf_len ? s->buf_len : 1;
	s->buf_len = keep_len;
	s->nrecs -= done;
}

/* ---- events ---- */

/* Online CPUs from sysfs ("0-3,5"), into *cpus; their number. */
static size_t online_cpus(int **cpus)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	char line[4096], *p;
	size_t n = 0, alloc = 0;

	*cpus = NULL;
	if (f && fgets(line, sizeof(line), f)) {
		for (p = line; *p && *p != '\n';) {
			long a = strtol(p, &p, 10), b = a;

			if (*p == '-')
				b = strtol(p + 1, &p, 10);
			for (long c = a; c <= b && c - a < 65536; c++) {
				ALLOC_GROW(*cpus, n + 1, alloc);
				(*cpus)[n++] = (int)c;
			}
			if (*p == ',')
				p++;
			else
				break;
		}
	}
	if (f)
		fclose(f);
	if (!n) {
		long c = sysconf(_SC_NPROCESSORS_CONF);

		for (long i = 0; i < (c > 0 ? c : 1); i++) {
			ALLOC_GROW(*cpus, n + 1, alloc);
			(*cpus)[n++] = (int)i;
		}
	}
	return n;
}

static void sampler__attr(const struct cp_sampler *s, struct perf_event_attr *a)
{
	*a = (struct perf_event_attr){
		.size = sizeof(*a),
		.type = PERF_TYPE_SOFTWARE,
		/* The task's own CPU time: samples stand for time it ran, whatever else runs. */
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.freq = 1,
		.sample_freq = s->opts.hz,
		.sample_type = s->sample_type,
		.disabled = 1,
		.enable_on_exec = 1,
		.inherit = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.exclude_callchain_kernel = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.watermark = 1,
		.wakeup_watermark = (uint32_t)(s->map_bytes / 4),
	};
	if (s->opts.unwind == CP_UNWIND_DWARF) {
		a->sample_regs_user = SP_REGS_MASK;
		a->sample_stack_user = SP_STACK_BYTES;
	}
}

static int perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int paranoid_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int level = INT_MIN;

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = INT_MIN;
		fclose(f);
	}
	return level;
}

/* The one line that says why sampling is impossible here and what to do. */
static void refused(const char *prog, int err)
{
	int level = paranoid_level();

	/* root (CAP_PERFMON) is not held back by perf_event_paranoid */
	if ((err == EACCES || err == EPERM) && level > 2 && geteuid())
		cp_error("cannot sample '%s': perf_event_open: %s (kernel.perf_event_paranoid is %d); "
		      "allow it with 'sysctl kernel.perf_event_paranoid=2'",
		      prog, strerror(err), level);
	else if (err == EACCES || err == EPERM)
		cp_error("cannot sample '%s': perf_event_open: %s, though "
		      "kernel.perf_event_paranoid allows it: a seccomp filter (container?) "
		      "blocks the system call; allow perf_event_open or use an instrumented build",
		      prog, strerror(err));
	else if (err == ENOENT || err == ENOSYS || err == EOPNOTSUPP || err == ENODEV)
		cp_error("cannot sample '%s': perf_event_open: %s: this kernel has no perf events "
		      "(CONFIG_PERF_EVENTS) for sampling; use an instrumented build",
		      prog, strerror(err));
	else
		cp_error("cannot sample '%s': perf_event_open: %s", prog, strerror(err));
}

/* Open and map one event per CPU on s->child; 0, or -errno of the first failure. */
static int sampler__open_events(struct cp_sampler *s)
{
	struct perf_event_attr a;
	int *cpus, err = 0;
	size_t n = online_cpus(&cpus);

	s->fds = xcalloc(n, sizeof(*s->fds));
	s->rings = xcalloc(n, sizeof(*s->rings));
	/* Big rings for stack copies; smaller when locked memory is limited (non-root). */
	s->map_bytes = s->opts.unwind == CP_UNWIND_DWARF ? 2 << 20 : 512 << 10;
	for (size_t i = 0; i < n && !err; i++) {
		void *m = MAP_FAILED;

		sampler__attr(s, &a);
		s->fds[i] = perf_event_open(&a, s->child, cpus[i]);
		if (s->fds[i] < 0) {
			err = errno;
			break;
		}
		s->nfds++;
		while (s->map_bytes >= 16 << 10) {
			m = mmap(NULL, s->map_bytes + 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				 s->fds[i], 0);
			if (m != MAP_FAILED || (errno != EPERM && errno != ENOMEM))
				break;
			s->map_bytes /= 2;
		}
		if (m == MAP_FAILED) {
			err = errno;
			break;
		}
		s->rings[i] = (struct cp_ring){ .meta = m,
						.data = (unsigned char *)m + 4096,
						.mask = s->map_bytes - 1 };
	}
	free(cpus);
	return err ? -err : 0;
}

/* ---- API ---- */

pid_t cp_sampler__pid(const struct cp_sampler *s)
{
	return s->child;
}

static void sampler__close_events(struct cp_sampler *s)
{
	for (size_t i = 0; i < s->nfds; i++) {
		if (s->rings[i].meta)
			munmap(s->rings[i].meta, s->map_bytes + 4096);
		close(s->fds[i]);
	}
	s->nfds = 0;
}

void cp_sampler__free(struct cp_sampler *s)
{
	if (!s)
		return;
	sampler__close_events(s);
	free(s->fds);
	free(s->rings);
	for (size_t i = 0; i < s->nprocs; i++) {
		proc__reset(s->procs[i]);
		free(s->procs[i]->cmdline);
		free(s->procs[i]);
	}
	free(s->procs);
	cp_u64map__release(&s->pids);
	free(s->buf);
	free(s->recs);
	if (s->go_fd >= 0)
		close(s->go_fd);
	free(s);
}

/* The child: wait for the word, then become the program (or say why not). */
static void __attribute__((noreturn)) child_main(int fd, const char **argv)
{
	char go;

	if (read(fd, &go, 1) != 1)
		_exit(127); /* record gave up: the program must not run */
	close(fd);
	cp_signals__restore_for_exec();
	execvp(argv[0], (char *const *)argv);
	cp_error("cannot run '%s': %s", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

struct cp_sampler *cp_sampler__start(const struct cp_sample_opts *opts, const char **argv)
{
	struct cp_sampler *s = xcalloc(1, sizeof(*s));
	struct timespec mono, real;
	int pipefd[2], err;

	s->opts = *opts;
	s->argv = argv;
	s->go_fd = -1;
	s->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	if (opts->unwind == CP_UNWIND_FP)
		s->sample_type |= PERF_SAMPLE_CALLCHAIN;
	else
		s->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	cp_u64map__init(&s->pids, 16);
	if (pipe2(pipefd, O_CLOEXEC))
		cp_die("cannot create a pipe: %s", strerror(errno));
	fflush(NULL);
	s->child = fork();
	if (s->child < 0)
		cp_die("cannot fork: %s", strerror(errno));
	if (s->child == 0) {
		close(pipefd[1]);
		child_main(pipefd[0], argv);
	}
	close(pipefd[0]);
	s->go_fd = pipefd[1];

	err = sampler__open_events(s);
	if (err) {
		int status;

		/* No word on the pipe: the child exits without running anything. */
		close(s->go_fd);
		s->go_fd = -1;
		kill(s->child, SIGKILL);
		waitpid(s->child, &status, 0);
		refused(argv[0], -err);
		cp_sampler__free(s);
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	s->run = (struct sp_run){
		.hz = opts->hz,
		.unwind = opts->unwind,
		.mono_to_real = ((uint64_t)real.tv_sec - (uint64_t)mono.tv_sec) * 1000000000u +
				(uint64_t)real.tv_nsec - (uint64_t)mono.tv_nsec,
		.out = opts->out,
		.root_pid = (uint32_t)s->child,
	};
	/* The program record started: its argv is exact, its samples go to PATH. */
	{
		struct sp_proc *p = sampler__new_proc(s, (uint32_t)s->child, (uint32_t)getpid(),
						      now_ns(), NULL);
		struct strbuf sb = STRBUF_INIT;

		for (const char **a = argv; *a; a++)
			strbuf_add(&sb, *a, strlen(*a) + 1);
		p->cmdline_len = sb.len;
		p->cmdline = strbuf_detach(&sb, NULL);
	}
	return s;
}

int cp_sampler__run(struct cp_sampler *s, int *status)
{
	struct pollfd *pfd = xcalloc(s->nfds, sizeof(*pfd));
	pid_t got;

	if (write(s->go_fd, "g", 1) != 1)
		cp_die("cannot start '%s': %s", s->argv[0], strerror(errno));
	close(s->go_fd);
	s->go_fd = -1;
	for (size_t i = 0; i < s->nfds; i++)
		pfd[i] = (struct pollfd){ .fd = s->fds[i], .events = POLLIN };
	for (;;) {
		if (poll(pfd, s->nfds, 50) < 0 && errno != EINTR)
			cp_die("poll: %s", strerror(errno));
		sampler__round(s, 0);
		got = waitpid(s->child, status, WNOHANG);
		if (got == s->child)
			break;
		if (got < 0 && errno != EINTR)
			cp_die("waitpid: %s", strerror(errno));
	}
	sampler__round(s, 1);
	free(pfd);
	return 0;
}

int cp_sampler__finish(struct cp_sampler *s)
{
	uint64_t end = now_ns(), samples = 0, partial = 0;

	sampler__close_events(s);
	for (size_t i = 0; i < s->nprocs; i++) {
		struct sp_proc *p = s->procs[i];
		int root = p->pid == s->run.root_pid;

		if (root)
			p->lost += s->lost_unknown;
		/* Other processes write only when there is something to say, as the runtime's. */
		if (!root && !p->samples && !p->lost)
			continue;
		if (root && !p->exe)
			continue; /* it never ran: exec failed, and said so */
		if (!p->exited && !p->samples)
			p->end_ns = end;
		if (sp_proc__write(p, &s->run, ""))
			s->errors++;
		samples += p->samples;
		partial += p->partial;
	}
	/* A few (code without CFI, the dynamic loader's start) are normal. */
	if (partial * 20 > samples)
		cp_warning("%" PRIu64 " of %" PRIu64 " samples had stacks that end early (deeper than "
			"the %d KiB copied, or code without CFI); they are shown from where "
			"their stack ends",
			partial, samples, SP_STACK_BYTES / 1024);
	return s->errors;
}
