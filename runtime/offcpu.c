/*
 * offcpu.c - where a thread's time went when it was not running: blocked
 * (wait) or preempted (inactive), per calling context; and, with
 * CALLPROF_SAMPLE, samples of the running instruction per context.
 *
 * Each thread opens a perf event on itself that records its own context
 * switches (PERF_COUNT_SW_DUMMY with context_switch = 1: no counting, no
 * sampling, just PERF_RECORD_SWITCH records) into a small ring mapped into
 * the process.  The kernel writes a record when the thread goes off the
 * CPU (flagged PREEMPT when it was still runnable) and another when it
 * comes back.  The hooks compare the ring's head with what they last saw
 * (one load); only when it moved do they call cp_offcpu__drain, which
 * charges each off-CPU interval to the node on top of the shadow stack.
 * That node is the right one: the records arrived since the last hook,
 * and the innermost open call has not changed since then.
 *
 * The event's file descriptor is closed as soon as the ring is mapped
 * (the mapping keeps the event alive), so the program never sees a
 * descriptor of ours: one that closes every descriptor, or counts them,
 * behaves as it would without callprof.
 *
 * Off-CPU time is kept in nanoseconds in the nodes while the program runs
 * (the records carry CLOCK_MONOTONIC times); the dump converts it to ticks
 * with the rate measured over the run.
 *
 * Sampling (CALLPROF_SAMPLE=HZ, `callprof record --sample` of an
 * instrumented program): the event is then the thread's task clock,
 * sampled HZ times per second, and also writes PERF_RECORD_SAMPLE records
 * (instruction address, time, period) into the ring; the drain counts
 * them per (context, address) in a per-thread table.  A function that runs
 * long without calling anything leaves its samples in the ring meanwhile,
 * so the ring is larger then; what does not fit is counted as lost.
 *
 * CPU-time mode (the cpu hooks, `callprof record`'s default): sampling is
 * always on, at a fixed period of task-clock time, and each sample also
 * carries the task clock's value (PERF_SAMPLE_READ).  Samples are taken
 * in user mode only (exclude_kernel, which Debian's default
 * perf_event_paranoid=2 requires), but the clock counts kernel time too:
 * the clock's growth between two samples beyond one period is time the
 * thread spent where no sample could be taken - in the kernel, or in
 * samples the full ring dropped.  It is charged, in periods, to the
 * innermost context at the later sample, under the pseudo addresses
 * CP_IP_LOST (as many as were dropped since) and CP_IP_KERNEL (the rest).
 * Dropped samples are always the current context's (the ring fills only
 * while no hook drains it); kernel time is when both samples fall between
 * the same two hooks, and otherwise goes to the context that ran on after
 * it (docs/internals/time-source.md measures how often that is wrong).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/internal.h"

/* What a thread's hooks see when nothing is tracked: a head that never moves. */
const volatile uint64_t cp_offcpu_still = 0;

/*
 * Data pages of a thread's ring (a power of two): without sampling, with
 * timing mode's sampling, and in cpu mode.  The ring is locked memory,
 * which an unprivileged user has little of (perf_event_mlock_kb, then
 * RLIMIT_MEMLOCK): cpu mode samples every thread, and a sample its full
 * ring drops still has its CPU time counted (unseen()), so its ring is
 * small: 8 pages hold some 800 samples, 0.2 s of a call that makes no call.
 */
#define RING_PAGES 4
#define RING_PAGES_SAMPLING 32
#define RING_PAGES_CPU 8

/* Lines table: initial slots, and growth at half full. */
#define LINES_SLOTS0 1024

/*
 * The records we ask for, with sample_type TIME (switch records, through
 * sample_id_all) or IP | TIME | PERIOD (samples): fixed layouts.
 */
struct rec_switch {
	struct perf_event_header h;
	uint64_t time;
};
struct rec_sample {
	struct perf_event_header h;
	uint64_t ip, time, period;
	uint64_t value; /* PERF_SAMPLE_READ (cpu mode): the task clock, ns */
};
/* Samples without the value (timing mode's hybrid sampling). */
#define REC_SAMPLE_NOREAD (sizeof(struct rec_sample) - sizeof(uint64_t))
struct rec_lost {
	struct perf_event_header h;
	uint64_t id, lost;
};

static long perf_open(struct perf_event_attr *a)
{
	return syscall(SYS_perf_event_open, a, 0 /* this thread */, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Read by cp_offcpu__init from the environment, once per process. */
static int want_switches;
static unsigned sample_hz;

void cp_offcpu__init(void)
{
	const char *off = cp_getenv("CALLPROF_OFFCPU");
	const char *hz = cp_getenv("CALLPROF_SAMPLE");

	if (cp_hook_mode != CP_MODE_TIMING && cp_hook_mode != CP_MODE_CPU)
		return;
	want_switches = !(off && !strcmp(off, "0"));
	if (cp_hook_mode == CP_MODE_CPU)
		sample_hz = CP_CPU_DEFAULT_HZ;
	if (hz && *hz) {
		char *end;
		unsigned long v = strtoul(hz, &end, 10);

		if (*end == '\0' && v > 0 && v <= 100000)
			sample_hz = (unsigned)v;
		else
			cp_warn_once(cp_hook_mode == CP_MODE_CPU ?
				     "CALLPROF_SAMPLE is not a rate in Hz (1-100000): sampling at the default" :
				     "CALLPROF_SAMPLE is not a rate in Hz (1-100000): not sampling");
	}
	cp_session.sample_hz = sample_hz;
	cp_session.switches_wanted = want_switches;
}

/*
 * Open the thread's event and map its ring.  Called at the thread's first
 * hook (and again in a fork child).  One event does both jobs: the
 * thread's task clock, sampled when sampling is asked for (else the dummy
 * event, which counts nothing), with context_switch records.  One event
 * because only a mapped event outlives its closed descriptor.  Failure
 * leaves the thread untracked (its hooks see cp_offcpu_still) and is
 * counted.
 */
void cp_offcpu__thread_start(struct cp_thread *t)
{
	struct perf_event_attr a;
	struct cp_perf *p = &t->perf;
	size_t pages = cp_hook_mode == CP_MODE_CPU ? RING_PAGES_CPU :
		       sample_hz			 ? RING_PAGES_SAMPLING :
							   RING_PAGES;
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	long fd;
	void *m;
	int err;

	t->sw_head = &cp_offcpu_still;
	t->sw_seen = 0;
	if (!want_switches && !sample_hz)
		return;
	if (!cp_sys__begin(CP_SYS_PERF)) {
		err = EPERM; /* the program's seccomp filter forbids it (seccomp.c) */
		goto fail;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.sample_id_all = 1;
	a.context_switch = want_switches;
	if (sample_hz && cp_hook_mode == CP_MODE_CPU) {
		/* A fixed period, so that every sample stands for the same CPU time. */
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		a.sample_period = 1000000000u / sample_hz;
		a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
				PERF_SAMPLE_READ;
	} else if (sample_hz) {
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		a.freq = 1;
		a.sample_freq = sample_hz;
		a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	} else {
		a.config = PERF_COUNT_SW_DUMMY;
		a.sample_type = PERF_SAMPLE_TIME;
	}
	fd = perf_open(&a);
	if (fd < 0) {
		err = errno;
		cp_sys__end();
		goto fail;
	}
	m = mmap(NULL, (1 + pages) * psz, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	err = errno;
	close((int)fd);
	cp_sys__end();
	if (m == MAP_FAILED)
		goto fail;
	p->page = m;
	p->map_bytes = (1 + pages) * psz;
	p->data = (const uint8_t *)m + psz;
	p->mask = pages * psz - 1;
	p->out_ns = 0;
	p->sampled = sample_hz != 0;
	p->period = cp_hook_mode == CP_MODE_CPU ? a.sample_period : 0;
	p->last_read = p->pending_lost = p->last_ip = 0;
	p->full_node = NULL;
	t->sw_seen = __atomic_load_n(&p->page->data_head, __ATOMIC_ACQUIRE);
	p->page->data_tail = t->sw_seen;
	t->sw_head = (const volatile uint64_t *)&p->page->data_head;
	if (want_switches)
		__atomic_fetch_add(&cp_session.offcpu_threads, 1, __ATOMIC_RELAXED);
	return;
fail:
	/*
	 * Counted for the split, and in cpu mode for the CPU time (the thread
	 * has none); with --no-offcpu a thread left unsampled in timing mode
	 * is not reported.
	 */
	if ((want_switches || cp_hook_mode == CP_MODE_CPU) &&
	    !__atomic_fetch_add(&cp_session.offcpu_failed, 1, __ATOMIC_RELAXED))
		cp_session.offcpu_errno = err;
	if (cp_hook_mode == CP_MODE_CPU)
		t->flags |= CP_THREAD_UNSAMPLED;
}

/*
 * The thread ends (or a fork child drops its parent's events): what is in
 * the ring is charged first, then the ring goes.
 */
void cp_offcpu__thread_end(struct cp_thread *t)
{
	struct cp_perf *p = &t->perf;

	if (!p->page)
		return;
	cp_offcpu__check(t);
	if (cp_sys__may(CP_SYS_PERF))
		munmap(p->page, p->map_bytes); /* else left mapped: a filter forbids it */
	p->page = NULL;
	p->sampled = 0;
	t->sw_head = &cp_offcpu_still;
	t->sw_seen = 0;
}

/* In a fork child: the ring is the parent thread's; open our own. */
void cp_offcpu__after_fork(struct cp_thread *t)
{
	struct cp_perf *p = &t->perf;

	if (p->page) {
		if (cp_sys__may(CP_SYS_PERF))
			munmap(p->page, p->map_bytes);
		p->page = NULL;
	}
	cp_offcpu__clear_lines(p);
	p->switch_lost = p->samples = p->samples_lost = p->period_ns = 0;
	p->last_read = p->pending_lost = p->last_ip = 0;
	p->full_node = NULL;
	cp_offcpu__thread_start(t);
}

static void copy_out(const struct cp_perf *p, uint64_t pos, void *dst, size_t len)
{
	size_t off = (size_t)(pos & p->mask), first = p->mask + 1 - off;

	if (first >= len) {
		memcpy(dst, p->data + off, len);
	} else {
		memcpy(dst, p->data + off, first);
		memcpy((uint8_t *)dst + first, p->data, len - first);
	}
}

/*
 * Double the lines table (or make the first one).  -1 without memory.
 * Never from a signal handler's hook: the drain runs with the thread busy.
 */
static int grow_lines(struct cp_perf *p)
{
	struct cp_lines *old = p->lines, *nl;
	uint64_t slots = old ? (old->mask + 1) * 2 : LINES_SLOTS0;
	size_t bytes = sizeof(*nl) + slots * sizeof(struct cp_line_slot);

	/* From the arena, so that the watcher, a process of its own, sees it too. */
	nl = cp_arena__alloc(bytes);
	if (!nl)
		return -1;
	nl->mask = slots - 1;
	nl->bytes = bytes;
	nl->older = old;
	for (uint64_t i = 0; old && i <= old->mask; i++) {
		const struct cp_line_slot *l = &old->s[i];
		uint64_t h;

		if (!l->node)
			continue;
		for (h = cp_ptr_hash(l->node, l->ip) & nl->mask; nl->s[h].node; h = (h + 1) & nl->mask)
			;
		nl->s[h] = *l;
	}
	__atomic_store_n(&p->lines, nl, __ATOMIC_RELEASE);
	return 0;
}

void cp_offcpu__add_line(struct cp_perf *p, struct cp_node *n, uint64_t ip, uint64_t count)
{
	struct cp_lines *t = p->lines;
	uint64_t h;

	if ((!t || (p->nlines + 1) * 2 > t->mask + 1) && grow_lines(p)) {
		p->samples_lost += count;
		return;
	}
	t = p->lines;
	for (h = cp_ptr_hash(n, ip) & t->mask; t->s[h].node; h = (h + 1) & t->mask) {
		if (t->s[h].node == n && t->s[h].ip == ip) {
			t->s[h].count += count;
			return;
		}
	}
	/* The node last: a reader (the dump) takes slots with a node as complete. */
	t->s[h].ip = ip;
	t->s[h].count = count;
	__atomic_store_n(&t->s[h].node, n, __ATOMIC_RELEASE);
	p->nlines++;
}

struct cp_lines *cp_offcpu__copy_lines(const struct cp_lines *l)
{
	struct cp_lines *c = l ? cp_arena__alloc(l->bytes) : NULL;

	if (!c)
		return NULL;
	c->mask = l->mask;
	c->bytes = l->bytes;
	c->older = NULL;
	/* The owner may be adding meanwhile: slots are taken only once complete. */
	for (uint64_t i = 0; i <= l->mask; i++) {
		struct cp_node *n = __atomic_load_n(&l->s[i].node, __ATOMIC_ACQUIRE);

		if (!n)
			continue;
		c->s[i].ip = l->s[i].ip;
		c->s[i].count = l->s[i].count;
		c->s[i].node = n;
	}
	return c;
}

uint64_t cp_offcpu__line_count(const struct cp_lines *l, const struct cp_node *n, uint64_t ip)
{
	if (!l)
		return 0;
	for (uint64_t h = cp_ptr_hash(n, ip) & l->mask; l->s[h].node; h = (h + 1) & l->mask)
		if (l->s[h].node == n && l->s[h].ip == ip)
			return l->s[h].count;
	return 0;
}

/* Forget every sample (keeping the table's memory). */
void cp_offcpu__clear_lines(struct cp_perf *p)
{
	if (p->lines)
		memset(p->lines->s, 0, (p->lines->mask + 1) * sizeof(struct cp_line_slot));
	p->nlines = 0;
	p->full_node = NULL;
}

/* Unmap p's tables (a state never published, or being freed). */
void cp_offcpu__free_lines(struct cp_perf *p)
{
	struct cp_lines *t = p->lines, *older;

	for (; t; t = older) {
		older = t->older;
		cp_arena__free(t, t->bytes);
	}
	p->lines = NULL;
	p->nlines = 0;
}

/* CPU mode: periods of CPU time no sample stood for, charged to n at ip. */
static void add_unseen(struct cp_perf *p, struct cp_node *n, uint64_t ip, uint64_t periods)
{
	cp_offcpu__add_line(p, n, ip, periods);
	p->samples += periods;
	p->period_ns += periods * p->period;
}

/*
 * CPU mode: a sample read the task clock at value.  What it grew by since
 * the last sample beyond one period went unsampled: samples the ring
 * dropped meanwhile (all of them n's: no hook drained the ring while they
 * were dropped), the rest kernel time.  Both are charged to n.
 */
static void unseen(struct cp_perf *p, struct cp_node *n, uint64_t value)
{
	uint64_t periods, lost;

	if (value > p->last_read) {
		periods = (value - p->last_read + p->period / 2) / p->period;
		if (periods > 1) {
			periods--;
			if (p->full_node) {
				/* The rest of the full ring's drops: see unseen_since_full. */
				add_unseen(p, p->full_node, p->last_ip ? p->last_ip : CP_IP_LOST,
					   periods);
				p->samples_lost += periods;
				periods = 0;
			}
			lost = p->pending_lost < periods ? p->pending_lost : periods;
			if (lost)
				add_unseen(p, n, CP_IP_LOST, lost);
			if (periods > lost)
				add_unseen(p, n, CP_IP_KERNEL, periods - lost);
		}
	}
	p->last_read = value;
	p->pending_lost = 0;
	p->full_node = NULL;
}

/*
 * CPU mode: the ring filled up while no hook ran, so every sample since
 * the last one in it was dropped, all of them n's (no hook ran meanwhile).
 * The kernel tells dropped samples only later, when there is room again,
 * by when the thread may be in another context: so their CPU time is
 * taken now, from the thread's CPU clock (one system call, only when a
 * ring filled: after a call that ran a fifth of a second without calling
 * anything), and the next sample's gap starts from here.
 *
 * That clock is the scheduler's and the samples' is perf's task clock,
 * which need not agree: quiet, they stay within a millisecond a second,
 * but in a loaded test run the estimate fell 12 ms short in a 100 ms call,
 * and the clock may not be readable at all (a seccomp filter).  The next
 * sample, which comes within a period of CPU time of this drain, shows
 * what is still missing as a gap, and that gap is n's too: so n is kept
 * until then (full_node), and unseen charges the gap to it.
 */
static void unseen_since_full(struct cp_thread *t, struct cp_node *n)
{
	struct cp_perf *p = &t->perf;
	int saved_errno = errno;
	uint64_t cpu = cp_offcpu__thread_cpu_ns(t->tid), task, periods;

	errno = saved_errno;
	p->full_node = n;
	/* The task clock started when the event was opened, just before cpu0. */
	if (!cpu || cpu < p->cpu0_ns)
		return;
	task = cpu - p->cpu0_ns;
	if (task <= p->last_read)
		return;
	periods = (task - p->last_read) / p->period;
	if (periods > 1) {
		periods--;
		/*
		 * Where they were taken is not known; where the last sample
		 * before them was is the best guess (a call that runs long
		 * without calling anything is mostly one loop).
		 */
		add_unseen(p, n, p->last_ip ? p->last_ip : CP_IP_LOST, periods);
		p->samples_lost += periods; /* placed, but estimated: the banner says so */
		p->last_read += periods * p->period;
	}
	p->pending_lost = 0;
}

/*
 * An off-CPU interval of ns nanoseconds of p's thread, charged to n;
 * switches is 1 to count it, 0 for a part.
 */
static void charge(struct cp_perf *p, struct cp_node *n, uint64_t ns, int preempted,
		   uint32_t switches)
{
	if (preempted) {
		n->inactive_ticks += ns;
		n->switches_invol = cp_add_sat32(n->switches_invol, switches);
		p->inactive_ns += ns;
	} else {
		n->wait_ticks += ns;
		n->switches_vol = cp_add_sat32(n->switches_vol, switches);
		p->wait_ns += ns;
	}
}

/*
 * CPU time of thread tid of this process so far: its CPU-time clock, named
 * by the kernel's tid (as pthread_getcpuclockid does), so that no pthread_t
 * of a thread that may be gone is touched.  0 if it cannot be read.
 */
/*
 * The run-queue wait is read only where its events are open: the dump's
 * late_offcpu splits nothing for a thread without them (counting mode,
 * --no-offcpu, perf_event_open refused).
 */
void cp_offcpu__baseline(struct cp_thread *t)
{
	uint64_t run;

	t->perf.cpu0_ns = cp_offcpu__thread_cpu_ns(t->tid);
	/* Without its run-queue wait, unseen_offcpu cannot tell blocked from preempted. */
	t->perf.mono0_ns = 0;
	t->perf.wait_ns = t->perf.inactive_ns = 0;
	if (!t->perf.page || cp_schedstat(0, t->tid, &run, &t->perf.delay0_ns))
		t->perf.delay0_ns = 0;
	else
		t->perf.mono0_ns = cp_clock_ns(CLOCK_MONOTONIC);
}

uint64_t cp_offcpu__thread_cpu_ns(uint32_t tid)
{
	clockid_t id = (clockid_t)((~(unsigned)tid << 3) | 6); /* CPUCLOCK_SCHED | PERTHREAD */
	struct timespec ts;

	int ret;

	/* A system call (the vDSO has no thread clocks): a filter may forbid it. */
	if (!tid || !cp_sys__begin(CP_SYS_THREAD))
		return 0;
	ret = clock_gettime(id, &ts);
	cp_sys__end();
	if (ret)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Where the innermost open call's time lies, in CLOCK_MONOTONIC ns (the
 * switch records' clock): from its frame's start to end_ticks (UINT64_MAX:
 * it goes on).  0 and UINT64_MAX where that is not known (an untimed
 * frame, counting mode).
 */
static void top_span(const struct cp_thread *t, uint64_t end_ticks, uint64_t *lo, uint64_t *hi)
{
	uint64_t start = t->cct.top->start, now, mono, again;
	int tries = 0;

	*lo = 0;
	*hi = UINT64_MAX;
	if (start == CP_UNTIMED || !start)
		return;
	if (!cp_clock_is_tsc()) { /* the ticks are CLOCK_MONOTONIC ns */
		*lo = start;
		*hi = end_ticks;
		return;
	}
	/* A pair of readings close together (retried if a switch split them). */
	do {
		now = cp_ticks();
		mono = cp_clock_ns(CLOCK_MONOTONIC);
		again = cp_ticks();
	} while (again - now > 20000 && ++tries < 3);
	if (mono <= cp_session.mono0_ns || now <= cp_session.tsc0 || start > now)
		return;
	/* Ticks before now to ns before mono, at the rate seen since the session started. */
#define CP_TICKS_BEFORE_NOW_NS(x)                                                                  \
	((uint64_t)((unsigned __int128)(now - (x)) * (mono - cp_session.mono0_ns) /               \
		    (now - cp_session.tsc0)))
	*lo = mono - CP_TICKS_BEFORE_NOW_NS(start);
	if (end_ticks <= now)
		*hi = mono - CP_TICKS_BEFORE_NOW_NS(end_ticks);
#undef CP_TICKS_BEFORE_NOW_NS
}

/*
 * Charge the off-CPU interval [out, in] (ns) to the innermost open call,
 * the part of it within that call's time [lo, hi]; the rest goes to the
 * caller, which was innermost then: a switch between the drain in an enter
 * hook and the clock read that starts the new frame, or between the clock
 * read that ends a frame and the drain in its exit hook.  The root has no
 * caller: what lies outside the thread's time is dropped.  The switch is
 * counted where most of its interval went.
 */
static void charge_span(struct cp_thread *t, uint64_t out, uint64_t in, int preempted, uint64_t lo,
			uint64_t hi)
{
	uint64_t a = out > lo ? out : lo, b = in < hi ? in : hi;
	uint64_t own = b > a ? b - a : 0, rest = in - out - own;

	if (rest && t->cct.top > t->cct.stack->f)
		charge(&t->perf, t->cct.top[-1].node, rest, preempted, own < rest);
	if (own || !rest)
		charge(&t->perf, t->cct.top->node, own, preempted, own >= rest);
}

/*
 * The ring filled while no hook drained it, so the kernel has been
 * dropping records, context switches among them, all in the innermost
 * open call (no hook ran meanwhile): a call into a library that blocks
 * or yields over and over without calling anything instrumented (Open
 * MPI sleeps 100 us at a time while it waits in MPI_Init and
 * MPI_Finalize: 512 intervals fill the ring within a tenth of a second).
 * Left alone, their time was in no context until the dump, which charged
 * what the tree lacked to whatever was open then (the thread's root,
 * once main had returned), and the call showed a fraction of its wait.
 *
 * What the thread did since its set-up is known without the records: its
 * CPU clock, its run-queue wait (schedstat: preempted and waiting to run
 * again) and the time; the rest it was blocked.  What of that the charged
 * intervals do not hold yet went off with the dropped records, and goes to
 * the innermost call, at most its time so far where frames are timed
 * (lo..hi, top_span; lo 0: cpu mode, whose frames are not).  Each
 * switch's interval includes some scheduler time the CPU clock counts
 * (docs/internals/offcpu.md), so the charged time runs ahead rather than
 * behind: nothing is made up when nothing was dropped.  A few system
 * calls, only when a ring has filled.
 */
static void unseen_offcpu(struct cp_thread *t, uint64_t lo, uint64_t hi)
{
	struct cp_perf *p = &t->perf;
	uint64_t cpu, run, delay, now, end, wall, wait, inactive, open;
	int saved_errno = errno;

	if (!p->mono0_ns || cp_schedstat(0, t->tid, &run, &delay))
		goto out;
	cpu = cp_offcpu__thread_cpu_ns(t->tid);
	now = cp_clock_ns(CLOCK_MONOTONIC);
	if (!cpu || now <= p->mono0_ns)
		goto out;
	end = hi < now ? hi : now;
	/* cpu mode's frames are not timed: the whole deficit, which only drops make. */
	open = !lo ? UINT64_MAX : end > lo ? end - lo : 0;
	wall = now - p->mono0_ns;
	delay = cp_sub_sat(delay, p->delay0_ns);
	/* Blocked: neither on a CPU nor waiting for one. */
	wait = cp_sub_sat(cp_sub_sat(wall, cp_offcpu__cpu_since_start(t, cpu)), delay);
	wait = cp_sub_sat(wait, p->wait_ns);
	inactive = cp_sub_sat(delay, p->inactive_ns);
	if (inactive > open)
		inactive = open;
	if (wait > open - inactive)
		wait = open - inactive;
	if (inactive)
		charge(p, t->cct.top->node, inactive, 1, 0);
	if (wait)
		charge(p, t->cct.top->node, wait, 0, 0);
	/* Its switch-in, if it had one, was dropped: the interval is in the above. */
	p->out_ns = 0;
out:
	errno = saved_errno;
}

/*
 * Charge what the ring holds to the innermost open call.  The caller holds
 * the thread (busy set, or the thread is ending).
 */
void cp_offcpu__drain(struct cp_thread *t)
{
	cp_offcpu__drain_at(t, UINT64_MAX);
}

void cp_offcpu__drain_at(struct cp_thread *t, uint64_t end_ticks)
{
	struct cp_perf *p = &t->perf;
	struct cp_node *n = t->cct.top->node;
	uint64_t head = __atomic_load_n(&p->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t pos = t->sw_seen, lo = 0, hi = UINT64_MAX;
	int spanned = 0;
	/* Full: the next record would not fit, so records are being dropped now. */
	size_t rec = p->period ? sizeof(struct rec_sample) :
		     p->sampled ? REC_SAMPLE_NOREAD : sizeof(struct rec_switch);
	int full = p->mask + 1 - (head - pos) < 2 * rec;

	while (pos < head) {
		union {
			struct perf_event_header h;
			struct rec_switch sw;
			struct rec_sample smp;
			struct rec_lost lost;
		} r;
		size_t len;

		copy_out(p, pos, &r.h, sizeof(r.h));
		if (r.h.size < sizeof(r.h) || r.h.size > head - pos)
			break; /* cannot happen; never loop on it */
		len = r.h.size < sizeof(r) ? r.h.size : sizeof(r);
		copy_out(p, pos, &r, len);
		if (r.h.type == PERF_RECORD_SWITCH && len >= sizeof(r.sw)) {
			if (r.h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
				p->out_ns = r.sw.time;
				p->out_preempt = !!(r.h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
			} else if (p->out_ns && r.sw.time >= p->out_ns) {
				if (!spanned++)
					top_span(t, end_ticks, &lo, &hi);
				charge_span(t, p->out_ns, r.sw.time, p->out_preempt, lo, hi);
				p->out_ns = 0;
			}
		} else if (r.h.type == PERF_RECORD_SAMPLE && p->period && len >= sizeof(r.smp)) {
			r.smp.ip = cp_sleds__sample_ip(r.smp.ip);
			unseen(p, n->canon, r.smp.value);
			p->last_ip = r.smp.ip;
			p->samples++;
			p->period_ns += p->period;
			cp_offcpu__add_line(p, n->canon, r.smp.ip, 1);
		} else if (r.h.type == PERF_RECORD_SAMPLE && len >= REC_SAMPLE_NOREAD) {
			r.smp.ip = cp_sleds__sample_ip(r.smp.ip);
			p->samples++;
			p->period_ns += r.smp.period;
			cp_offcpu__add_line(p, n->canon, r.smp.ip, 1);
		} else if (r.h.type == PERF_RECORD_LOST && len >= sizeof(r.lost)) {
			/* Which kinds were lost is not said: with sampling, most are samples. */
			if (p->period)
				p->pending_lost += r.lost.lost; /* recovered by the next sample */
			else if (p->sampled)
				p->samples_lost += r.lost.lost;
			else
				p->switch_lost += r.lost.lost;
			p->out_ns = 0; /* its switch-in may be among them */
		}
		pos += r.h.size;
	}
	pos = head;
	__atomic_store_n(&p->page->data_tail, pos, __ATOMIC_RELEASE);
	t->sw_seen = pos;
	if (full && p->period)
		unseen_since_full(t, n->canon);
	if (full && cp_session.switches_wanted) {
		if (!spanned++)
			top_span(t, end_ticks, &lo, &hi);
		unseen_offcpu(t, lo, hi);
	}
}
