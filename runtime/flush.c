/*
 * flush.c - write the profile: metadata, command line, module map,
 * threads and their trees.
 *
 * Runs once at the end, from the destructor (or an explicit dump), and
 * for snapshots mid-run (callprof_dump, the watcher's `callprof dump`),
 * possibly while other threads still run.  Their trees are read, never
 * written: node counts are snapshotted first (nodes below the published
 * count are complete), and calls still open are added to the written
 * records as if they ended now, without touching the owner's shadow stack.
 * What one dump needs for itself (node counts per thread, the tick rate)
 * is kept in its own private memory, never in the threads' states or in
 * our globals: those are shared with the watcher, which may be writing a
 * snapshot of the same trees at the same time (watch.c).
 *
 * After callprof_reset() a node's figures are written minus its baseline
 * (struct cp_base): what happened since the reset.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "runtime/clockcap.h"
#include "runtime/internal.h"

static struct cp_writer writer; /* the final profile's; snapshots map their own */

/* One dump's own state (private memory: see above). */
struct dump {
	int how;	    /* CP_FLUSH_* */
	uint64_t tps;	    /* tick rate: off-CPU ns in the nodes become ticks */
	uint64_t self_cpu;  /* the dumping thread's CPU clock at the time stamp */
	uint32_t *nnodes;   /* per thread written: nodes of its own tree */
	uint64_t *cpu;	    /* per thread written: its CPU time (thread_cpu), read once */
	uint64_t *unclocked; /* per thread written: kernel periods over its CPU time (clock_cap) */
	uint32_t *nside;    /* per thread written: nodes of its side tree */
	int regions;	    /* a CP_NODE_REGION record was written */
	int open_at_start;  /* a record with open_at_start was written (attach) */
	int offcpu;	    /* switches are tracked: off-CPU time not yet charged is */
};

/* Off-CPU time of a live thread that its hooks have not charged yet (late_offcpu). */
struct late {
	uint32_t id;	     /* the node it goes to: the innermost open call's */
	uint64_t wait;	     /* ns blocked */
	uint64_t inactive;   /* ns preempted */
};

/* The command line as it was at start-up (session.c), not the process title of now. */
static void write_cmdline(struct cp_writer *w)
{
	const char *c = __atomic_load_n(&cp_session.cmdline, __ATOMIC_ACQUIRE);

	cp_writer__section(w, CP_SEC_CMDLINE, 1);
	if (c && cp_session.cmdline_len)
		cp_writer__put(w, c, cp_session.cmdline_len);
}

/* Open /proc/{self,PID}/task/TID/LEAF (pid 0: ours) for reading; -1 on failure. */
static int open_task_file(pid_t pid, uint32_t tid, const char *leaf)
{
	char path[96] = "/proc/";
	size_t pos = strlen(path), len = strlen(leaf);


	if (pid)
		cp_put_dec(path, sizeof(path) - 6, &pos, (unsigned long)pid);
	else
		memcpy(path + pos, "self", 5), pos += 4;
	memcpy(path + pos, "/task/", 7);
	pos += 6;
	cp_put_dec(path, sizeof(path) - 6, &pos, tid);
	if (pos + 1 + len >= sizeof(path))
		return -1;
	path[pos++] = '/';
	memcpy(path + pos, leaf, len + 1);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* The thread's name from /proc (any live thread of process pid, 0: ours). */
static void read_comm(pid_t pid, uint32_t tid, char name[16])
{
	int fd;
	ssize_t n;

	if (!tid || !cp_sys__begin(CP_SYS_THREAD))
		return; /* the program's seccomp filter forbids it */
	fd = open_task_file(pid, tid, "comm");
	n = fd < 0 ? -1 : read(fd, name, 15);
	if (fd >= 0)
		close(fd);
	cp_sys__end();
	if (n <= 0)
		return;
	if (name[n - 1] == '\n')
		n--;
	name[n] = '\0';
}

int cp_schedstat(pid_t pid, uint32_t tid, uint64_t *run, uint64_t *delay)
{
	char buf[96];
	int fd;
	ssize_t n;
	const char *p = buf;
	uint64_t v[2] = { 0, 0 };

	if (!tid || !cp_sys__begin(CP_SYS_THREAD))
		return -1; /* the program's seccomp filter forbids it */
	fd = open_task_file(pid, tid, "schedstat");
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	cp_sys__end();
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (int k = 0; k < 2; k++) {
		if (*p < '0' || *p > '9')
			return -1;
		for (; *p >= '0' && *p <= '9'; p++)
			v[k] = v[k] * 10 + (uint64_t)(*p - '0');
		if (*p == ' ')
			p++;
	}
	*run = v[0];
	*delay = v[1];
	return 0;
}

static uint64_t ns_to_ticks(const struct dump *d, uint64_t ns)
{
	if (!cp_clock_is_tsc())
		return ns;
	return (uint64_t)((unsigned __int128)ns * d->tps / 1000000000u);
}

/*
 * The record of n, with extra ticks of its open calls, minus the baseline
 * b of a reset (NULL if none).  Pseudo-functions become flagged records: a
 * signal's number, or a region's id.
 */
static void node_rec(struct dump *d, struct cp_node_rec *r, const struct cp_node *n,
		     uint64_t extra, const struct cp_base *b)
{
	int timing = cp_hook_mode == CP_MODE_TIMING;
	int offcpu = timing || cp_hook_mode == CP_MODE_CPU; /* wait and inactive are kept */
	const struct cp_base_node *bn = b && n->id < b->n ? &b->node[n->id] : NULL;

	r->fn = n->fn;
	r->site = n->site;
	r->parent = n->parent ? n->parent->id : CP_NO_PARENT;
	r->flags = 0;
	if (n->parent && n->fn >= CP_FN_REGION_BASE && n->fn < CP_FN_PSEUDO_LIMIT) {
		r->flags = CP_NODE_REGION;
		r->fn = n->fn - CP_FN_REGION_BASE;
		d->regions = 1;
	} else if (n->parent && n->fn < CP_FN_PSEUDO_LIMIT) {
		r->flags = CP_NODE_SIGNAL;
	}
	if (n->parent && cp_node__is_site(n))
		r->flags |= CP_NODE_SITE;
	if (n->flags & (CP_NF_EXCLUDED | CP_NF_TREE))
		r->flags |= CP_NODE_EXCLUDED;
	if (n->flags & CP_NF_UNTIMED)
		r->flags |= CP_NODE_UNTIMED;
	r->calls = n->calls;
	r->ticks = timing ? n->ticks + extra : 0;
	r->min_ticks = !timing || n->min_ticks == UINT64_MAX ? 0 : n->min_ticks;
	r->max_ticks = timing ? n->max_ticks : 0;
	r->wait_ticks = offcpu ? ns_to_ticks(d, n->wait_ticks) : 0;
	r->inactive_ticks = offcpu ? ns_to_ticks(d, n->inactive_ticks) : 0;
	r->switches_vol = n->switches_vol;
	r->switches_invol = n->switches_invol;
	r->open_at_start = n->open_at_start;
	if (!bn) {
		d->open_at_start |= r->open_at_start != 0;
		return;
	}
	/* After a reset the window starts there: frames open then are in neither count. */
	r->open_at_start = 0;
	r->calls = cp_sub_sat(r->calls, bn->calls);
	r->ticks = cp_sub_sat(r->ticks, bn->ticks);
	r->wait_ticks = offcpu ? cp_sub_sat(r->wait_ticks, ns_to_ticks(d, bn->wait_ticks)) : 0;
	r->inactive_ticks = offcpu ? cp_sub_sat(r->inactive_ticks, ns_to_ticks(d, bn->inactive_ticks)) :
				     0;
	r->switches_vol = cp_sub_sat(r->switches_vol, bn->switches_vol);
	r->switches_invol = cp_sub_sat(r->switches_invol, bn->switches_invol);
	/*
	 * Shortest and longest call cannot be taken apart: they stay those of
	 * the whole run, bounded by what is left (docs/internals/api.md).
	 */
	if (!r->calls)
		r->min_ticks = r->max_ticks = 0;
	if (r->max_ticks > r->ticks)
		r->max_ticks = r->ticks;
	if (r->min_ticks > r->max_ticks)
		r->min_ticks = r->max_ticks;
}

/*
 * Time of the calls still open in t, per node id, into extra[] (nnodes
 * entries).  Reads another thread's stack without stopping it: the stack
 * mapping is never unmapped, and a frame that looks torn is skipped.
 */
static uint64_t open_time(struct cp_thread *t, uint64_t *extra, uint32_t nnodes, uint64_t now)
{
	struct cp_stack *s = __atomic_load_n(&t->cct.stack, __ATOMIC_ACQUIRE);
	struct cp_frame *top = t->cct.top, *f;
	uint64_t open = 0;

	if (top < s->f || top >= s->f + s->cap)
		return 0;
	for (f = s->f + 1; f <= top; f++) {
		struct cp_node *n = f->node;
		uint32_t id = n ? n->id : UINT32_MAX;

		if (id < nnodes && f->start <= now) {
			extra[id] += now - f->start;
			open++;
		}
	}
	return open;
}

/* The dump runs in the watcher: /proc/self and the thread clocks are not the program's. */
static int in_watcher(int how)
{
	return how == CP_FLUSH_KILLED || how == CP_FLUSH_WATCH || how == CP_FLUSH_LEFT;
}

/* The watcher writes for a program that has ended: nothing of it can be asked. */
static int program_gone(int how)
{
	return how == CP_FLUSH_KILLED || how == CP_FLUSH_LEFT;
}

/*
 * CPU time of t: kept at its exit, else read now: the thread's clock, or
 * for the watcher, whose clocks are not the program's, what the scheduler
 * says (0 if it does not).  The dumping thread's is its clock at the
 * dump's time stamp: the calibration and the writing that follow are not
 * in its tree's time, so they must not be in its CPU time either.  Read
 * once per thread, into d->cpu, when the threads are listed: the thread
 * record's kernel count, the samples it never drained (unsampled) and
 * its late off-CPU time must rest on one reading.  A thread that spins
 * while the dump writes grows its clock between two readings, and what
 * one reading charged beyond the other's count was CPU time over the
 * kernel's (t0315, a dump of a thread spinning without hooks).
 */
static uint64_t thread_cpu(const struct dump *d, const struct cp_thread *t)
{
	uint64_t run, delay;

	if ((t->flags & CP_THREAD_EXITED) || program_gone(d->how))
		return t->perf.cpu_ns;
	if (d->how == CP_FLUSH_WATCH)
		return cp_schedstat(cp_session.pid, t->tid, &run, &delay) ? 0
									   : cp_offcpu__cpu_since_start(t, run);
	return cp_offcpu__cpu_since_start(t, t == cp_self ? d->self_cpu
							 : cp_offcpu__thread_cpu_ns(t->tid));
}

static uint64_t ticks_to_ns(const struct dump *d, uint64_t ticks)
{
	if (!cp_clock_is_tsc())
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / (d->tps ? d->tps : 1));
}

/*
 * Off-CPU time of a thread still running at the dump that nobody has
 * charged: the hooks charge an interval when they drain the thread's
 * ring, so the interval of a thread blocked now (in a condition variable,
 * a read) is open and unseen, and one that runs without hooks still has
 * its finished intervals in the ring (which a dump cannot read: the
 * watcher has no such mapping, and the owner may be draining it).  Left
 * out, that time would count as CPU: a pool thread blocked for seconds
 * would show seconds of cpu, more CPU than the machine had.
 *
 * The kernel knows how long the thread did not run: its time so far less
 * its CPU time.  What of it the tree does not hold yet goes to the
 * innermost open call, where the next drain would have charged it
 * (bounded by that call's time so far); the part the scheduler counted as
 * runnable-but-waiting (schedstat's run delay) beyond the tree's inactive
 * time is inactive, the rest wait.  Nothing is known of a killed
 * program's threads, nor of a thread whose switches are not tracked.
 * Reads the tree and stack as open_time does, without stopping the thread.
 */
static void late_offcpu(const struct dump *d, struct cp_thread *t, uint64_t cpu, uint32_t nn,
			uint64_t now, struct late *late)
{
	struct cp_stack *s = __atomic_load_n(&t->cct.stack, __ATOMIC_ACQUIRE);
	struct cp_frame *top = t->cct.top, *f;
	uint64_t wall, run = 0, delay = 0, wait = 0, inactive = 0, off, open, id = 1;
	int have_sched;

	memset(late, 0, sizeof(*late));
	if (!d->offcpu || (!t->perf.page && !t->still) ||
	    (t->flags & (CP_THREAD_EXITED | CP_THREAD_AGGREGATE)) || program_gone(d->how) ||
	    now <= t->start_ticks)
		return;
	have_sched = !cp_schedstat(in_watcher(d->how) ? cp_session.pid : 0, t->tid, &run, &delay);
	if ((in_watcher(d->how) || t->still) && !have_sched)
		return;
	/* Its wait since the tracking began, not since the thread did (an attached server's: hours). */
	delay = cp_sub_sat(delay, t->perf.delay0_ns);
	wall = ticks_to_ns(d, now - t->start_ticks);
	/* What the tree holds (ns while the program runs, see offcpu.c). */
	wait = t->cct.root.wait_ticks;
	inactive = t->cct.root.inactive_ticks;
	for (struct cp_chunk *c = t->cct.chunks; c && id < nn; c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE)) {
		uint32_t used = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);

		for (uint32_t i = 0; i < used && id < nn; i++, id++) {
			wait += c->n[i].wait_ticks;
			inactive += c->n[i].inactive_ticks;
		}
	}
	if (wall <= cpu + wait + inactive)
		return;
	off = wall - cpu - wait - inactive;
	/* The innermost open call written (else the root, whose time is the thread's). */
	open = wall;
	if (top >= s->f && top < s->f + s->cap) {
		for (f = top; f > s->f; f--) {
			struct cp_node *n = f->node;

			if (n && n->id < nn && f->start <= now && f->start != CP_UNTIMED) {
				late->id = n->id;
				open = ticks_to_ns(d, now - f->start);
				break;
			}
		}
	}
	if (off > open)
		off = open;
	late->inactive = delay > inactive ? delay - inactive : 0;
	if (late->inactive > off)
		late->inactive = off;
	late->wait = off - late->inactive;
}

/*
 * The innermost open call of t that the dump wrote (one of its nnodes
 * nodes), or t's root.  Reads another thread's stack without stopping it,
 * as late() does.
 */
static uint32_t innermost_id(const struct cp_thread *t, uint32_t nn)
{
	const struct cp_stack *s = __atomic_load_n(&t->cct.stack, __ATOMIC_ACQUIRE);
	const struct cp_frame *top = t->cct.top;

	if (!s || top < s->f || top >= s->f + s->cap)
		return 0;
	for (const struct cp_frame *f = top; f > s->f; f--) {
		const struct cp_node *n = f->node;

		if (n && n->id < nn)
			return n->canon->id < nn ? n->canon->id : 0;
	}
	return 0;
}

/*
 * cpu mode: the CPU time t used that no sample in its table stands for yet
 * (its samples since its last hook wait in its ring, which only t drains:
 * a thread blocked or in a long call without hooks at the dump), in
 * periods, charged as dropped samples (CP_IP_LOST) to its innermost open
 * call.  The kernel's count of t's CPU time against seen, the samples of
 * its table, every one of them (the profiler's and the kernel's included).
 */
static uint64_t unsampled(const struct cp_thread *t, uint64_t cpu, uint64_t seen)
{
	uint64_t period = t->perf.period;

	if (cp_hook_mode != CP_MODE_CPU || !period || (t->flags & CP_THREAD_AGGREGATE) ||
	    (t->flags & CP_THREAD_UNSAMPLED))
		return 0;
	/* The period running now is not sampled yet; one more is the dump's own jitter. */
	return cpu / period > seen + 2 ? cpu / period - seen - 2 : 0;
}

/*
 * t's sampled addresses and its baseline's (lines before a reset), as the
 * dumping thread may read them: the watcher sees only the arena.  0 when
 * the table is out of its reach.
 */
static int tables(const struct dump *d, const struct cp_thread *t, const struct cp_lines **l,
		  const struct cp_base **b)
{
	*l = __atomic_load_n(&t->perf.lines, __ATOMIC_ACQUIRE);
	*b = __atomic_load_n(&t->base, __ATOMIC_ACQUIRE);
	if (*b && (*b)->lines && in_watcher(d->how) && !cp_arena__contains((*b)->lines))
		*b = NULL;
	return !(*l && in_watcher(d->how) && !cp_arena__contains(*l));
}

/*
 * The periods of a table, every one of them (as unsampled wants them), and
 * in *kernel those of its "[kernel]" lines of the first nnodes nodes, less
 * the baseline's (as they are written).
 */
static uint64_t periods(const struct cp_lines *l, const struct cp_base *b, uint32_t nnodes,
			uint64_t *kernel)
{
	uint64_t seen = 0;

	*kernel = 0;
	for (uint64_t k = 0; l && k <= l->mask; k++) {
		struct cp_node *n = __atomic_load_n(&l->s[k].node, __ATOMIC_ACQUIRE);
		uint64_t count = l->s[k].count;

		if (!n)
			continue;
		seen += count;
		if (n->id < nnodes && l->s[k].ip == CP_IP_KERNEL)
			*kernel += cp_sub_sat(count, b ? cp_offcpu__line_count(b->lines, n,
										CP_IP_KERNEL) : 0);
	}
	return seen;
}

/*
 * cpu mode: the periods of t's "[kernel]" time that its CPU clock does not
 * have.  Kernel time is the task clock's growth between two samples beyond
 * one period (offcpu.c, unseen), and perf's task clock runs while the task
 * is on a CPU, whereas the thread's CPU clock (the scheduler's) leaves out
 * the time the hypervisor took that CPU from the VM (steal time, with
 * CONFIG_PARAVIRT_TIME_ACCOUNTING; interrupts too, with
 * CONFIG_IRQ_TIME_ACCOUNTING): a spinning thread that made no system
 * call showed 6.8 ms of "[kernel]" time in 41 ms on a loaded VM, its CPU
 * clock 34.7 ms (t0315).  What the table holds beyond the clock (and the
 * slack unsampled allows) is that, taken from the kernel periods and
 * counted in the thread record.  Two passes over a table another thread may
 * be adding to: the second takes at most what the first found.
 */
static uint64_t clock_cap(const struct dump *d, const struct cp_thread *t, uint64_t cpu,
			  uint32_t nnodes)
{
	const struct cp_lines *l;
	const struct cp_base *b;
	uint64_t seen, kernel;

	if (cp_hook_mode != CP_MODE_CPU || !t->perf.period || !cpu ||
	    (t->flags & (CP_THREAD_AGGREGATE | CP_THREAD_UNSAMPLED)) || !tables(d, t, &l, &b))
		return 0;
	seen = periods(l, b, nnodes, &kernel);
	return cp_clock_cap(seen, kernel, cpu, t->perf.period);
}

/*
 * The sampled addresses of each thread (nodes numbered as written: the
 * thread's first node plus the node's id), less those before a reset (the
 * thread's baseline).  Another thread may be adding to its table
 * meanwhile: slots are taken only once complete, and only for nodes the
 * dump wrote.
 */
static void write_lines(struct dump *d, struct cp_writer *w, struct cp_thread **ts, uint32_t nt)
{
	uint32_t first = 0;

	cp_writer__section(w, CP_SEC_LINES, sizeof(struct cp_line_rec));
	for (uint32_t i = 0; i < nt; i++) {
		struct cp_thread *t = ts[i];
		const struct cp_lines *l;
		const struct cp_base *b;
		uint64_t late, seen = 0, kernel = 0;
		struct cp_cut cut;
		struct cp_line_rec r;

		if (!tables(d, t, &l, &b))
			l = NULL;
		/* The kernel periods clock_cap took: from each kernel line, by its share. */
		if (d->unclocked[i])
			periods(l, b, d->nnodes[i], &kernel);
		cp_cut__init(&cut, d->unclocked[i], kernel);
		for (uint64_t k = 0; l && k <= l->mask; k++) {
			struct cp_node *n = __atomic_load_n(&l->s[k].node, __ATOMIC_ACQUIRE);

			if (!n)
				continue;
			seen += l->s[k].count;
			if (n->id >= d->nnodes[i] || !l->s[k].count)
				continue;
			memset(&r, 0, sizeof(r));
			r.node = first + n->id;
			r.ip = l->s[k].ip;
			r.samples = cp_sub_sat(l->s[k].count,
					       b ? cp_offcpu__line_count(b->lines, n, r.ip) : 0);
			if (r.ip == CP_IP_KERNEL)
				r.samples -= cp_cut__take(&cut, r.samples);
			if (r.samples)
				cp_writer__put(w, &r, sizeof(r));
		}
		late = unsampled(t, d->cpu[i], seen);
		if (late) {
			memset(&r, 0, sizeof(r));
			r.node = first + innermost_id(t, d->nnodes[i]);
			r.ip = CP_IP_LOST;
			r.samples = late;
			cp_writer__put(w, &r, sizeof(r));
		}
		first += d->nnodes[i] + d->nside[i];
	}
}

/* The facts of switch tracking and sampling, over the threads written. */
static void offcpu_meta(const struct dump *d, struct cp_meta *m, struct cp_thread **ts, uint32_t nt)
{
	uint64_t period = 0;

	if (cp_session.switches_wanted) {
		if (!cp_session.offcpu_threads && cp_session.offcpu_failed)
			m->switches = CP_SWITCHES_UNAVAILABLE;
		else if (cp_session.offcpu_failed)
			m->switches = CP_SWITCHES_PARTIAL;
		else
			m->switches = CP_SWITCHES_ON;
	}
	/* Threads whose events could not be opened: no split, and in cpu mode no CPU time. */
	m->switch_errno = (uint32_t)cp_session.offcpu_errno;
	m->switch_threads_failed = cp_session.offcpu_failed;
	m->sample_hz = cp_session.sample_hz;
	if (m->sample_hz)
		m->sample_flags = CP_SAMPLE_HYBRID;
	for (uint32_t i = 0; i < nt; i++) {
		m->switch_lost += ts[i]->perf.switch_lost;
		m->samples += cp_sub_sat(ts[i]->perf.samples, d->unclocked[i]);
		m->samples_lost += ts[i]->perf.samples_lost;
		period += ts[i]->perf.period_ns;
	}
	m->sample_period_ns = m->samples ? period / m->samples : 0;
	/* cpu mode's period is fixed (offcpu.c), known even when nothing was sampled. */
	if (cp_hook_mode == CP_MODE_CPU && m->sample_hz)
		m->sample_period_ns = 1000000000u / m->sample_hz;
}

/* Record-time selection (filter.c): the META fields and the FILTERS section. */
static void selection_meta(struct cp_writer *w, struct cp_meta *m, struct cp_thread **ts, uint32_t nt)
{
	m->max_depth = cp_filter.max_depth;
	m->start = cp_filter.start_text ? cp_writer__string(w, cp_filter.start_text) : CP_NO_STRING;
	m->budget = cp_filter.budget;
	m->demotions = __atomic_load_n(&cp_filter.demotions, __ATOMIC_RELAXED);
	m->budget_ticks = cp_filter.budget_ticks;
	for (uint32_t i = 0; i < nt; i++) {
		m->calls_outside_start += cp_thread__unrecorded(ts[i], CP_MUTE_OUTSIDE_START);
		m->calls_below_depth += cp_thread__unrecorded(ts[i], CP_MUTE_DEPTH);
		m->calls_in_excluded_trees += cp_thread__unrecorded(ts[i], CP_MUTE_TREE);
		m->calls_paused += cp_thread__unrecorded(ts[i], CP_MUTE_PAUSED);
	}
}

/* "KIND FLAGS MATCHED TEXT" lines, as `record` wrote them. */
static void write_filters(struct cp_writer *w)
{
	cp_writer__section(w, CP_SEC_FILTERS, sizeof(struct cp_filter_rec));
	for (uint32_t i = 0; i < cp_filter.nrules; i++) {
		const char *s = cp_filter.rules[i];
		uint32_t v[3] = { 0, 0, 0 };
		struct cp_filter_rec r;

		for (int k = 0; k < 3; k++) {
			for (; *s >= '0' && *s <= '9'; s++)
				v[k] = v[k] * 10 + (uint32_t)(*s - '0');
			if (*s == ' ')
				s++;
		}
		r.kind = v[0];
		r.flags = v[1];
		r.matched = v[2];
		r.pattern = cp_writer__string(w, s);
		cp_writer__put(w, &r, sizeof(r));
	}
}

static int write_threads(struct dump *d, struct cp_writer *w, struct cp_thread **ts, uint32_t nt,
			 uint64_t now, uint64_t tps, uint64_t *extra_open)
{
	uint32_t first = 0;

	cp_writer__section(w, CP_SEC_THREADS, sizeof(struct cp_thread_rec));
	for (uint32_t i = 0; i < nt; i++) {
		struct cp_thread *t = ts[i];
		struct cp_thread_rec r;
		char name[16] = "";
		uint64_t end = t->end_ticks ? t->end_ticks : now;

		memset(&r, 0, sizeof(r));
		if ((t->flags & CP_THREAD_EXITED) || program_gone(d->how))
			memcpy(name, t->name, sizeof(name)); /* the watcher: /proc has no such thread */
		else
			read_comm(d->how == CP_FLUSH_WATCH ? cp_session.pid : 0, t->tid, name);
		name[15] = '\0';
		r.tid = t->tid;
		if (t->label[0]) {
			char label[sizeof(t->label)];

			memcpy(label, t->label, sizeof(label)); /* the thread may be changing it */
			label[sizeof(label) - 1] = '\0';
			r.name = cp_writer__string(w, label);
		} else {
			r.name = cp_writer__string(w, name);
		}
		r.first_node = first;
		r.nnodes = d->nnodes[i] + d->nside[i];
		r.start_ns = cp_clock_is_tsc() ? (uint64_t)((unsigned __int128)(t->start_ticks -
			cp_session.tsc0) * 1000000000u / (tps ? tps : 1)) : t->start_ticks - cp_session.mono0_ns;
		r.end_ns = cp_clock_is_tsc() ? (uint64_t)((unsigned __int128)(end - cp_session.tsc0) *
			1000000000u / (tps ? tps : 1)) : end - cp_session.mono0_ns;
		r.flags = t->flags;
		r.seq = t->seq;
		r.open_frames = t->open_frames + extra_open[i];
		r.nthreads = t->nthreads;
		r.cpu_ns = d->cpu[i];
		r.unclocked = d->unclocked[i] < UINT32_MAX ? (uint32_t)d->unclocked[i] : UINT32_MAX;
		first += d->nnodes[i] + d->nside[i];
		cp_writer__put(w, &r, sizeof(r));
	}
	return w->err;
}

static void add_late(const struct dump *d, struct cp_node_rec *r, const struct late *late)
{
	r->wait_ticks += ns_to_ticks(d, late->wait);
	r->inactive_ticks += ns_to_ticks(d, late->inactive);
}

/*
 * The thread's nodes, nnodes of them as the thread record says: a node
 * record must be written for each, whatever fails.  Without memory for the
 * open calls' times (the address space is full), those calls are written
 * without the time since they began.
 */
static int write_nodes(struct dump *d, struct cp_writer *w, struct cp_thread *t, uint64_t cpu,
		       uint32_t nn, uint64_t now, uint64_t *open)
{
	uint32_t id = 1;
	const struct cp_base *b = __atomic_load_n(&t->base, __ATOMIC_ACQUIRE);
	size_t bytes = ((size_t)nn * sizeof(uint64_t) + 4095) & ~(size_t)4095;
	uint64_t *extra = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct cp_node root = t->cct.root;
	struct cp_node_rec r;
	struct late late;

	*open = 0;
	late_offcpu(d, t, cpu, nn, now, &late);
	if (extra == MAP_FAILED) {
		extra = NULL;
		cp_warn_once("out of memory at the dump: calls still open are written without "
			     "their time so far");
	} else {
		*open = open_time(t, extra, nn, now);
	}
	/*
	 * An aggregate's root holds the sum of its threads' lifetimes; after a
	 * reset, a thread's time starts at the reset.
	 */
	if (!(t->flags & CP_THREAD_AGGREGATE)) {
		uint64_t end = t->end_ticks ? t->end_ticks : now;
		uint64_t start = b && b->at > t->start_ticks ? b->at : t->start_ticks;

		root.ticks = end > start ? end - start : 0;
	}
	node_rec(d, &r, &root, 0, NULL);
	r.min_ticks = r.max_ticks = r.ticks;
	if (!late.id)
		add_late(d, &r, &late);
	cp_writer__put(w, &r, sizeof(r));
	for (struct cp_chunk *c = t->cct.chunks; c && id < nn; c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE)) {
		uint32_t used = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);

		for (uint32_t i = 0; i < used && id < nn; i++, id++) {
			node_rec(d, &r, &c->n[i], extra ? extra[id] : 0, b);
			/*
			 * The watcher reads without the fold lock: a state being
			 * recycled under it may show a parent that is not an
			 * earlier node.  Keep the file valid.
			 */
			if (r.parent >= id)
				r.parent = 0;
			if (id == late.id)
				add_late(d, &r, &late);
			cp_writer__put(w, &r, sizeof(r));
		}
	}
	if (extra)
		munmap(extra, bytes);
	return w->err;
}

/*
 * The side tree of t (signals that interrupted a hook, see hooks.c), as
 * more nodes of t: its first level names contexts of t, which become the
 * parents of their children; sets t->dump_side to the number written.
 */
static int write_side(struct dump *d, struct cp_writer *w, struct cp_thread *t, uint32_t nn,
		      uint32_t *nside)
{
	struct cp_thread *s = __atomic_load_n(&t->side, __ATOMIC_ACQUIRE);
	uint32_t sn, id = 1, next = nn;
	size_t bytes;
	uint32_t *map;
	struct cp_node_rec r;

	*nside = 0;
	if (!s)
		return 0;
	sn = __atomic_load_n(&s->cct.nnodes, __ATOMIC_ACQUIRE);
	bytes = ((size_t)sn * sizeof(uint32_t) + 4095) & ~(size_t)4095;
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return -ENOMEM;
	for (struct cp_chunk *c = s->cct.chunks; c && id < sn; c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE)) {
		uint32_t used = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);

		for (uint32_t i = 0; i < used && id < sn; i++, id++) {
			const struct cp_node *n = &c->n[i];

			if (n->parent == &s->cct.root) {
				const struct cp_node *ctx = (const struct cp_node *)n->fn;

				map[id] = ctx && ctx->id < nn ? ctx->id : 0;
				continue;
			}
			node_rec(d, &r, n, 0, __atomic_load_n(&s->base, __ATOMIC_ACQUIRE));
			r.parent = n->parent->id < id ? map[n->parent->id] : 0;
			cp_writer__put(w, &r, sizeof(r));
			map[id] = next++;
		}
	}
	munmap(map, bytes);
	*nside = next - nn;
	return w->err;
}

/*
 * JOB: the rank of a job this process was, as its launcher's variables
 * said at start (format/job.c); nothing outside a job.  Not under attach:
 * the variables the runtime reads then are the tool's, not the process's.
 */
static void write_job(struct cp_writer *w)
{
	struct cp_job job;
	struct cp_job_rec r = { .jobid = CP_NO_STRING };

	if (cp_session.attached)
		return;
	cp_job__from_env(&job, cp_getenv);
	if (job.rank == CP_NO_RANK)
		return;
	r.rank = job.rank;
	r.size = job.size;
	r.launcher = job.launcher;
	r.local_rank = job.local_rank;
	if (job.jobid[0])
		r.jobid = cp_writer__string(w, job.jobid);
	cp_writer__section(w, CP_SEC_JOB, sizeof(r));
	cp_writer__put(w, &r, sizeof(r));
}

/*
 * The names of the regions (api.c), if a region's record was written:
 * then the file needs a reader that knows them (CP_MIN_READER_SELECTION).
 */
static void write_regions(struct dump *d, struct cp_writer *w)
{
	uint32_t n = cp_api__nregions();

	if (!d->regions)
		return;
	if (w->min_reader < CP_MIN_READER_SELECTION)
		w->min_reader = CP_MIN_READER_SELECTION;
	cp_writer__section(w, CP_SEC_REGIONS, sizeof(struct cp_region_rec));
	for (uint32_t id = 0; id < n; id++) {
		struct cp_region_rec r = { .id = id, .name = cp_writer__string(w, cp_api__region_name(id)) };

		cp_writer__put(w, &r, sizeof(r));
	}
}

static void warn_failed(const char *path, int ret)
{
	char line[512] = "cannot write profile '";
	const char *parts[] = { path, "': ", strerror(-ret) };
	size_t pos = strlen(line);

	for (unsigned i = 0; i < 3; i++) {
		size_t len = strlen(parts[i]);

		if (len > sizeof(line) - 1 - pos)
			len = sizeof(line) - 1 - pos;
		memcpy(line + pos, parts[i], len);
		pos += len;
	}
	line[pos] = '\0';
	cp_warn(line);
}

/*
 * The calibration of the watcher's snapshots, once per watcher: in its
 * thread-local storage, which (unlike our globals) is its own.
 */
static __thread struct cp_calibration watch_cal;
static __thread int watch_cal_done;

static void calibrate(struct cp_calibration *cal, int how)
{
	if (how != CP_FLUSH_WATCH) {
		cp_calibrate(cal);
		return;
	}
	if (!watch_cal_done && !cp_calibrate(&watch_cal))
		watch_cal_done = 1;
	*cal = watch_cal;
}

/* cp_flush(), once the program's seccomp filter is known to allow it. */
static int flush(const char *path, int how)
{
	struct cp_writer *w = &writer;
	struct cp_thread *self = how == CP_FLUSH_WATCH ? NULL : cp_self, **ts, *t, *head;
	uint64_t now, elapsed, tps, *open;
	uint32_t nt = 0, i;
	size_t bytes, wbytes = (sizeof(*w) + 4095) & ~(size_t)4095;
	struct cp_meta meta;
	struct cp_calibration cal = { 0 };
	struct utsname un;
	struct dump d = { .how = how };
	int ret, timing, clocked, locked, self_busy = self ? self->busy : 0,
	    snapshot = how == CP_FLUSH_SNAPSHOT || how == CP_FLUSH_WATCH;
	/* Not finishing: a dying process, or the watcher, which must not take the program's locks. */
	int careful = how == CP_FLUSH_DYING || in_watcher(how);

	if (snapshot) {
		w = mmap(NULL, wbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (w == MAP_FAILED)
			return -ENOMEM;
	}
	timing = cp_hook_mode == CP_MODE_TIMING;
	/* cpu mode reads no clock in its hooks, but its off-CPU times are ticks like timing's. */
	clocked = timing || cp_hook_mode == CP_MODE_CPU;
	if (self && !in_watcher(how)) {
		int busy = self->busy;

		/*
		 * The tree's time ends here: so do its CPU time and its switches.
		 * The clock is read after the ring is drained, so an off-CPU
		 * interval that ended just now lies inside the tree's time (as
		 * in cp_thread__exited).  Those during the calibration below
		 * stay in the ring, unseen.
		 */
		d.self_cpu = cp_offcpu__thread_cpu_ns(self->tid);
		self->busy = 1;
		cp_offcpu__check(self);
		self->busy = busy;
	}
	now = cp_ticks();
	/* Before marking ourselves busy: calibration drives the real hooks. */
	if (timing)
		calibrate(&cal, how);
	if (self)
		self->busy = 1;
	tps = clocked ? cp_clock_ticks_per_sec(&elapsed) : 0;
	d.tps = tps;
	d.offcpu = clocked && cp_session.switches_wanted && cp_session.offcpu_threads;
	if (!clocked)
		elapsed = cp_clock_ns(CLOCK_MONOTONIC) - cp_session.mono0_ns;

	cp_modules__refresh_for_dump(in_watcher(how) ? CP_FLUSH_KILLED : how == CP_FLUSH_DYING);
	/*
	 * No thread folds into an aggregate or is recycled while we read.  A
	 * dying process only tries: the holder may be the thread that died.
	 * The watcher never takes it: its futex is the program's.
	 */
	if (how == CP_FLUSH_WATCH)
		locked = 0;
	else
		locked = careful ? !cp_thread__fold_trylock() : (cp_thread__fold_lock(), 1);

	/* One snapshot of the registry: threads starting now are pushed in
	 * front of head and simply not part of this profile.  Recycled states
	 * waiting for a thread (nthreads 0) are left out; one may be taken
	 * by a new thread meanwhile (reuse() does not wait for the fold
	 * lock), so room is made for every state, live or not. */
	head = __atomic_load_n(&cp_session.threads, __ATOMIC_ACQUIRE);
	for (t = head; t; t = t->next)
		nt++;
	/* ts, open, cpu, unclocked [nt + 1], then the node counts nnodes[nt], nside[nt] */
	bytes = (((size_t)nt + 1) * (sizeof(void *) + 3 * sizeof(uint64_t)) +
		 (size_t)nt * 2 * sizeof(uint32_t) + 4095) & ~(size_t)4095;
	ts = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ts == MAP_FAILED) {
		ret = -ENOMEM;
		goto out;
	}
	open = (uint64_t *)(ts + nt + 1);
	d.cpu = open + nt + 1;
	d.unclocked = d.cpu + nt + 1;
	d.nnodes = (uint32_t *)(d.unclocked + nt + 1);
	d.nside = d.nnodes + nt;
	/* The registry is newest first; write threads in start order. */
	i = nt;
	for (t = head; t && i; t = t->next) {
		if (!__atomic_load_n(&t->nthreads, __ATOMIC_ACQUIRE))
			continue;
		ts[--i] = t;
		d.nnodes[i] = __atomic_load_n(&t->cct.nnodes, __ATOMIC_ACQUIRE);
	}
	if (i) { /* free states, or the registry changed under the watcher: the threads found */
		memmove(ts, ts + i, (nt - i) * sizeof(*ts));
		memmove(d.nnodes, d.nnodes + i, (nt - i) * sizeof(*d.nnodes));
		nt -= i;
	}
	for (i = 0; i < nt; i++) {
		d.cpu[i] = thread_cpu(&d, ts[i]);
		d.unclocked[i] = clock_cap(&d, ts[i], d.cpu[i], d.nnodes[i]);
	}

	memset(&meta, 0, sizeof(meta));
	ret = cp_writer__begin(w, path);
	if (ret)
		goto out_unmap;
	/* Never over a profile of a process that ran meanwhile (two ranks, two runs). */
	w->since_ns = cp_session.real0_ns;
	w->pid = (uint32_t)cp_session.pid;
	meta.pid = (uint32_t)cp_session.pid; /* not getpid(): the watcher writes for the program */
	meta.ppid = (uint32_t)cp_session.ppid;
	meta.mode = cp_hook_mode;
	meta.clock = clocked ? (uint32_t)cp_session.clock : CP_CLOCK_NONE;
	meta.ticks_per_sec = tps;
	meta.overhead_ticks = cal.outside;
	meta.self_overhead_ticks = cal.inside;
	meta.calibration_spread = cal.spread;
	meta.untimed_overhead_ticks = (uint32_t)cal.untimed;
	meta.start_realtime_ns = cp_session.real0_ns;
	meta.duration_ns = elapsed;
	meta.flags = cp_session.forked ? CP_META_FORKED : 0;
	if (how == CP_FLUSH_DYING || how == CP_FLUSH_KILLED ||
	    (how == CP_FLUSH_LEFT && cp_session.ended == 2))
		meta.flags |= CP_META_ABNORMAL_END;
	if (how == CP_FLUSH_KILLED)
		meta.flags |= CP_META_KILLED;
	if (snapshot)
		meta.flags |= CP_META_SNAPSHOT;
	if (cp_session.filtered)
		meta.flags |= CP_META_FILTERED;
	if (how == CP_FLUSH_LEFT)
		meta.flags |= CP_META_LEFT;
	if (cp_session.attached)
		meta.flags |= CP_META_ATTACHED;
	meta.nthreads_lost = cp_session.threads_lost;
	for (i = 0; i < nt; i++) {
		meta.lost_calls += ts[i]->cct.lost.calls;
		meta.lost_events += ts[i]->lost_events;
		meta.unpaired_exits += ts[i]->unpaired_exits;
		meta.reconciled_frames += ts[i]->reconciled;
		meta.lost_signals += ts[i]->lost_signals;
	}
	if (clocked)
		offcpu_meta(&d, &meta, ts, nt);
	selection_meta(w, &meta, ts, nt);
	{
		char exe[sizeof(cp_session.exe)];

		memcpy(exe, cp_session.exe, sizeof(exe)); /* as at start-up (session.c) */
		exe[sizeof(exe) - 1] = '\0';
		meta.exe = cp_writer__string(w, exe);
	}
	meta.hostname = cp_writer__string(w, uname(&un) ? "" : un.nodename);
	cp_writer__section(w, CP_SEC_META, sizeof(meta));
	cp_writer__put(w, &meta, sizeof(meta));
	write_cmdline(w);
	cp_modules__write(w);
	/*
	 * The vDSO has no file: its image, for the names of the samples that
	 * fall in it (clock_gettime, gettimeofday).  Read, not called: a
	 * dying or killed program's is as good.
	 */
	if (meta.sample_hz)
		cp_writer__vdso(w, getauxval(AT_SYSINFO_EHDR));
	cp_writer__section(w, CP_SEC_NODES, sizeof(struct cp_node_rec));
	for (i = 0; i < nt; i++) {
		write_nodes(&d, w, ts[i], d.cpu[i], d.nnodes[i], now, &open[i]);
		write_side(&d, w, ts[i], d.nnodes[i], &d.nside[i]);
	}
	write_threads(&d, w, ts, nt, now, tps, open);
	if (meta.sample_hz)
		write_lines(&d, w, ts, nt);
	write_regions(&d, w);
	write_job(w);
	if (cp_filter.nrules)
		write_filters(w);
	/* Markers and count-only contexts would mislead an older reader. */
	if (cp_filter.active || cp_filter.budget)
		w->min_reader = CP_MIN_READER_SELECTION;
	if (cp_hook_mode == CP_MODE_CPU)
		w->min_reader = CP_MIN_READER_CPU;
	/* Contexts entered before the attach: an older reader would take calls for all. */
	if (d.open_at_start)
		w->min_reader = CP_MIN_READER_ATTACH;
	ret = cp_writer__finish(w, timing ? CP_FEAT_TIMING : 0);
out_unmap:
	munmap(ts, bytes);
out:
	if (ret) {
		cp_writer__abort(w);
		if (!snapshot && !in_watcher(how)) {
			warn_failed(path, ret);
			if (!strcmp(path, cp_session.out))
				cp_status__failed(-2, "write", ret);
		}
	}
	if (locked)
		cp_thread__fold_unlock();
	if (self)
		self->busy = self_busy; /* a muted thread stays muted */
	if (snapshot)
		munmap(w, wbytes);
	return ret;
}

/*
 * Write the profile (or a snapshot, see CP_FLUSH_*) to path.  Returns 0 or
 * -errno; warns once on failure, except for snapshots, whose caller is
 * told.  -EPERM, silently, when the program's seccomp filter forbids what
 * writing needs: its watcher writes at the end (seccomp.c).
 */
int cp_flush(const char *path, int how)
{
	int ret;

	if (!cp_sys__begin(CP_SYS_WRITE))
		return -EPERM;
	ret = flush(path, how);
	cp_sys__end();
	return ret;
}
