/*
 * thread.c - per-thread state around the calling-context tree (cct.c):
 * set-up on the first hook, what the tree asks of its user (memory from
 * the arena, record-time selection, the out-of-memory warning), thread
 * exit, the fold of exited threads into aggregates, recycling, fork.
 *
 * All memory comes from mmap, never malloc: the hooks may run inside
 * malloc itself (an instrumented allocator), in signal handlers and in
 * early start-up.  Nodes and stacks are never unmapped while the process
 * lives (only a fork child drops its parent's other threads), which is what
 * lets the dumping thread read every tree without locks.  What the dump
 * reads (thread states, shadow stacks, node chunks) comes from the arena,
 * which a watcher process can read too (arena.c); hash tables and scratch
 * space are private.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "runtime/internal.h"

__thread struct cp_thread *cp_self __attribute__((tls_model("initial-exec")));

#define STACK_FRAMES0 1024    /* initial shadow stack */
#define HTAB_SLOTS0 1024      /* initial hash table */

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

#define map_shared cp_arena__alloc
#define unmap_shared cp_arena__free

/* What the tree asks of its user (cct.h). */
void *cp_cct_env__alloc(size_t bytes)
{
	return cp_arena__alloc(bytes);
}

void cp_cct_env__free(void *p, size_t bytes)
{
	cp_arena__free(p, bytes);
}

uint64_t cp_cct_env__limit(const struct cp_cct *c, uint64_t cap)
{
	return cp_thread__limit(cap);
}

/* Record-time selection (filter.c); not for a side tree's first level, whose fn is a context. */
uint32_t cp_cct_env__new_flags(struct cp_cct *c, const struct cp_node *parent, uintptr_t fn)
{
	struct cp_thread *t = cp_thread__of(c);
	uint32_t ff;

	if (likely(!cp_filter.active) || t->unfiltered || (t->owner && parent == &t->cct.root))
		return 0;
	ff = cp_filter__classify(fn);
	return ff & CP_FF_TREE ? CP_NF_TREE : ff & CP_FF_EXCLUDE ? CP_NF_EXCLUDED : 0;
}

void cp_cct_env__out_of_memory(struct cp_cct *c)
{
	cp_thread__of(c)->flags |= CP_THREAD_TRUNCATED;
	cp_warn_once("out of memory: stopped recording new call paths; the report counts what was lost");
}

/*
 * The process looks up its first call path (a fork child: its first call
 * after the fork, as the fork empties the caches): start the watcher
 * (watch.c) now, so that programs that never run instrumented code, and
 * children that only exec, do not get one.  The time it takes is the
 * runtime's, not the program's: the open calls' start times move forward
 * by it.
 */
static __attribute__((noinline, cold)) void start_watcher(struct cp_thread *t)
{
	uint64_t t0, d;

	if (cp_session.state != CP_STATE_ON || t->owner)
		return;
	t0 = cp_ticks();
	cp_watch__spawn();
	d = cp_ticks() - t0;
	for (struct cp_frame *f = t->cct.stack->f + 1; f <= t->cct.top; f++)
		f->start += d;
}

struct cp_node *cp_thread__child(struct cp_thread *t, struct cp_node *from, uintptr_t fn,
				 uintptr_t site)
{
	if (unlikely(__atomic_load_n(&cp_session.watch_pending, __ATOMIC_RELAXED)))
		start_watcher(t);
	return cp_cct__child(&t->cct, from, fn, site);
}

static void register_thread(struct cp_thread *t)
{
	struct cp_thread *head = __atomic_load_n(&cp_session.threads, __ATOMIC_RELAXED);

	do {
		t->next = head;
	} while (!__atomic_compare_exchange_n(&cp_session.threads, &head, t, 1, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

void cp_thread__register(struct cp_thread *t)
{
	register_thread(t);
}

/*
 * Allocate and initialise thread state without publishing it: the caller
 * registers it (a real thread) or uses it privately (calibration).
 */
struct cp_thread *cp_thread__new(void)
{
	struct cp_thread *t = map_shared(sizeof(*t));

	if (!t)
		return NULL;
	if (cp_cct__init(&t->cct, STACK_FRAMES0, HTAB_SLOTS0, cp_hook_mode == CP_MODE_COVERAGE)) {
		unmap_shared(t, sizeof(*t));
		return NULL;
	}
	t->nthreads = 1;
	t->start_ticks = cp_ticks();
	t->cct.top->start = t->start_ticks;
	t->sw_head = &cp_offcpu_still;
	return t;
}

/*
 * Give back what t holds (its tree, saved contexts, line tables) but not
 * t itself: callprof attach's release walks the registry through states
 * it has emptied this way.
 */
void cp_thread__give_back(struct cp_thread *t)
{
	if (!t)
		return;
	if (t->ctx) {
		for (unsigned i = 0; i < CP_CTX_SLOTS; i++)
			if (t->ctx[i].f)
				munmap(t->ctx[i].f, t->ctx[i].cap * sizeof(struct cp_frame));
		munmap(t->ctx, CP_CTX_SLOTS * sizeof(*t->ctx));
		t->ctx = NULL;
	}
	cp_cct__release(&t->cct);
	cp_offcpu__free_lines(&t->perf);
}

/* Release state from cp_thread__new() that was never registered. */
void cp_thread__free(struct cp_thread *t)
{
	if (!t)
		return;
	cp_thread__give_back(t);
	unmap_shared(t, sizeof(*t));
}

/*
 * The free list has a lock of its own, taken with every signal blocked
 * (a handler's hooks that set up a state cannot interrupt a holder in its
 * own thread) and held for a pop or a push only: a new thread waits for
 * it, never for the fold lock, which a fold or a dump holds for long and
 * which a thread may hold when a signal handler's hooks set it up.  A new
 * thread that could not wait (the old trylock of the fold lock) took a
 * fresh state whenever the lock was busy: with many threads ending as many
 * start, states piled up with the number of threads, not with the threads
 * alive at once (t0210: 33 MB after 2,000 threads, 57 MB after 10,000).
 */
static void free_list_lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	pthread_mutex_lock(&cp_session.free_lock);
}

static void free_list_unlock(const sigset_t *old)
{
	pthread_mutex_unlock(&cp_session.free_lock);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* A recycled state for a new thread, if one is free. */
static struct cp_thread *reuse(void)
{
	struct cp_thread *t;
	sigset_t old;

	/* A peek without the lock, to spare it when nothing is free. */
	if (!__atomic_load_n(&cp_session.free, __ATOMIC_RELAXED))
		return NULL;
	free_list_lock(&old);
	t = cp_session.free;
	if (t) {
		__atomic_store_n(&cp_session.free, t->next_free, __ATOMIC_RELAXED);
		t->next_free = NULL;
	}
	free_list_unlock(&old);
	if (t) {
		t->start_ticks = cp_ticks();
		t->cct.top->start = t->start_ticks;
		__atomic_store_n(&t->nthreads, 1, __ATOMIC_RELEASE);
	}
	return t;
}

/*
 * Set while this thread's state is set up: a hook of a signal handler that
 * interrupts the set-up finds cp_self still NULL, and would set up a second
 * state (or wait for the fold lock the set-up holds).  The first, once
 * published, would never see the second's calls, nor, under callprof
 * attach, the thread's seeds, which the second took.  Such a hook's event
 * is dropped instead, and counted (setup_dropped) in the state's lost
 * events.
 */
static __thread uint32_t setting_up __attribute__((tls_model("initial-exec")));
static __thread uint32_t setup_dropped __attribute__((tls_model("initial-exec")));

static struct cp_thread *setup(void)
{
	struct cp_thread *t;
	int fresh = 0;

	/* -EAGAIN: another thread is initialising; drop this event, no loss to count. */
	if (cp_session.state != CP_STATE_ON && cp_session__init())
		return NULL;
	if (!cp_gate__live())
		return NULL; /* a clone child: the registry is its parent's (control.c) */
	t = reuse();
	if (!t) {
		t = cp_thread__new();
		fresh = 1;
	}
	if (!t) {
		__atomic_fetch_add(&cp_session.threads_lost, 1, __ATOMIC_RELAXED);
		cp_warn_once("cannot set up a thread (out of memory): its calls are not recorded");
		return NULL;
	}
	/* Facts of the thread, unless the program's seccomp filter forbids asking (seccomp.c). */
	if (cp_sys__begin(CP_SYS_THREAD)) {
		t->tid = (uint32_t)gettid();
		if (cp_arena.on)
			prctl(PR_GET_NAME, t->name); /* for a watcher, which cannot ask /proc later */
		cp_sys__end();
	}
	__atomic_store_n(&t->self, pthread_self(), __ATOMIC_RELAXED); /* pthread_setname_np reads it */
	t->seq = __atomic_fetch_add(&cp_session.nthreads, 1, __ATOMIC_RELAXED);
	if (fresh)
		register_thread(t);
	/*
	 * Opening the perf event can wait in the kernel for milliseconds (the
	 * first event of its kind switches the scheduler's perf hooks on, and
	 * that waits for other CPUs): the thread's time starts after it, as
	 * the watcher's spawn is kept out of the frames' time.
	 */
	cp_offcpu__thread_start(t);
	cp_offcpu__baseline(t);
	t->start_ticks = cp_ticks();
	t->cct.top->start = t->start_ticks;
	if (cp_filter.start)
		cp_hooks__mute_start(t);
	/* callprof attach: the calls it had open then, under anything it records. */
	if (cp_attach.area)
		cp_attach__seed_thread(t);
	return t;
}

struct cp_thread *cp_thread__setup(void)
{
	struct cp_thread *t;

	if (setting_up) {
		setup_dropped++;
		return NULL;
	}
	setting_up = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t = setup();
	if (t) {
		t->lost_events += setup_dropped;
		cp_self = t;
		if (cp_session.have_key)
			pthread_setspecific(cp_session.key, t);
	}
	setup_dropped = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	setting_up = 0;
	return t;
}

void cp_thread__fold_lock(void)
{
	pthread_mutex_lock(&cp_session.fold_lock);
}

/* 0 when taken. */
int cp_thread__fold_trylock(void)
{
	return pthread_mutex_trylock(&cp_session.fold_lock);
}

void cp_thread__fold_unlock(void)
{
	pthread_mutex_unlock(&cp_session.fold_lock);
}

/* The aggregate for threads named name (under the fold lock). */
static struct cp_thread *aggregate_for(const struct cp_thread *t)
{
	static const char others[16] = "(others)";
	struct cp_thread *a;
	unsigned i;

	for (i = 0; i < CP_MAX_AGGREGATES && cp_session.agg[i]; i++)
		if (!strncmp(cp_session.agg[i]->name, t->name, 16) || i == CP_MAX_AGGREGATES - 1)
			return cp_session.agg[i];
	if (i == CP_MAX_AGGREGATES)
		return NULL;
	a = cp_thread__new();
	if (!a)
		return NULL;
	memcpy(a->name, i == CP_MAX_AGGREGATES - 1 ? others : t->name, 16);
	a->flags = CP_THREAD_EXITED | CP_THREAD_AGGREGATE;
	a->nthreads = 0;
	a->cct.root.calls = 0;
	a->start_ticks = t->start_ticks;
	a->end_ticks = t->end_ticks;
	a->seq = __atomic_fetch_add(&cp_session.nthreads, 1, __ATOMIC_RELAXED);
	cp_session.agg[i] = a;
	register_thread(a);
	return a;
}

/*
 * n as the profile counts it: minus the baseline b of a reset (NULL if
 * none), the way the dump writes it (flush.c node_rec); into tmp.
 */
static const struct cp_node *since_reset(const struct cp_node *n, const struct cp_base *b,
					 struct cp_node *tmp)
{
	const struct cp_base_node *bn;

	if (!b || n->id >= b->n)
		return n;
	bn = &b->node[n->id];
	*tmp = *n;
	tmp->calls = cp_sub_sat(n->calls, bn->calls);
	tmp->ticks = cp_sub_sat(n->ticks, bn->ticks);
	tmp->wait_ticks = cp_sub_sat(n->wait_ticks, bn->wait_ticks);
	tmp->inactive_ticks = cp_sub_sat(n->inactive_ticks, bn->inactive_ticks);
	tmp->switches_vol = (uint32_t)cp_sub_sat(n->switches_vol, bn->switches_vol);
	tmp->switches_invol = (uint32_t)cp_sub_sat(n->switches_invol, bn->switches_invol);
	tmp->open_at_start = 0; /* the window starts at the reset, as the writer says */
	if (!tmp->calls) {
		tmp->min_ticks = UINT64_MAX;
		tmp->max_ticks = 0;
	}
	if (tmp->max_ticks > tmp->ticks)
		tmp->max_ticks = tmp->ticks;
	return tmp;
}

/* since_reset() as cp_cct__fold() calls it. */
static const struct cp_node *view_since_reset(const struct cp_node *n, void *base,
					      struct cp_node *tmp)
{
	return since_reset(n, base, tmp);
}

/* t's side tree into aggregate a: to[] maps t's nodes (nn of them) into a. */
static void fold_side(struct cp_thread *a, struct cp_thread *t, struct cp_node **to, uint32_t nn)
{
	struct cp_thread *s = t->side;
	size_t bytes;
	struct cp_node **sto;

	if (!s || s->cct.nnodes < 2)
		return;
	struct cp_node tmp;

	bytes = ((size_t)s->cct.nnodes * sizeof(*sto) + 4095) & ~(size_t)4095;
	sto = map(bytes);
	if (!sto)
		return;
	for (struct cp_chunk *c = s->cct.chunks; c; c = c->next) {
		for (uint32_t i = 0; i < c->used; i++) {
			struct cp_node *n = &c->n[i], *ctx, *m;

			if (n->parent == &s->cct.root) {
				ctx = (struct cp_node *)n->fn;
				sto[n->id] = ctx && ctx->id < nn ? to[ctx->id] : &a->cct.root;
				continue;
			}
			m = cp_thread__child(a, sto[n->parent->id], n->fn, n->site);
			sto[n->id] = m;
			cp_node__add_counts(m, since_reset(n, s->base, &tmp));
		}
	}
	munmap(sto, bytes);
}

/*
 * t's samples since its reset (base) and perf counters into aggregate a's
 * (to[] as in fold_side).
 */
static void fold_perf(struct cp_perf *a, const struct cp_perf *t, const struct cp_base *base,
		      struct cp_node **to, uint32_t nn)
{
	for (uint64_t i = 0; t->lines && i <= t->lines->mask; i++) {
		const struct cp_line_slot *l = &t->lines->s[i];
		uint64_t count;

		if (!l->node || l->node->id >= nn)
			continue;
		count = cp_sub_sat(l->count, base ? cp_offcpu__line_count(base->lines, l->node,
									 l->ip) : 0);
		if (count)
			cp_offcpu__add_line(a, to[l->node->id], l->ip, count);
	}
	a->switch_lost += t->switch_lost;
	a->samples += t->samples;
	a->samples_lost += t->samples_lost;
	a->period_ns += t->period_ns;
	a->cpu_ns += t->cpu_ns;
}

/* Add t's tree into its aggregate (under the fold lock).  -1: t stays as it is. */
static int fold(struct cp_thread *t)
{
	uint32_t nn = t->cct.nnodes;
	size_t bytes = ((size_t)nn * sizeof(struct cp_node *) + 4095) & ~(size_t)4095;
	struct cp_thread *a = aggregate_for(t);
	struct cp_node **to;
	uint64_t start = t->base && t->base->at > t->start_ticks ? t->base->at : t->start_ticks;

	if (!a)
		return -1;
	to = map(bytes);
	if (!to)
		return -1;
	cp_cct__fold(&a->cct, &t->cct, to, view_since_reset, t->base);
	fold_side(a, t, to, nn);
	fold_perf(&a->perf, &t->perf, t->base, to, nn);
	munmap(to, bytes);
	a->cct.root.ticks += t->end_ticks > start ? t->end_ticks - start : 0;
	a->cct.root.calls++;
	a->cct.lost.calls += t->cct.lost.calls;
	a->lost_events += t->lost_events;
	a->unpaired_exits += t->unpaired_exits;
	a->open_frames += t->open_frames;
	a->reconciled += t->reconciled;
	a->lost_signals += t->lost_signals;
	for (int k = 0; k < CP_MUTE_KINDS; k++)
		a->unrecorded[k] += cp_thread__unrecorded(t, k);
	a->flags |= t->flags & CP_THREAD_TRUNCATED;
	if (t->start_ticks < a->start_ticks)
		a->start_ticks = t->start_ticks;
	if (t->end_ticks > a->end_ticks)
		a->end_ticks = t->end_ticks;
	__atomic_store_n(&a->nthreads, a->nthreads + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Empty t's tree, keeping its memory. */
static void reset_tree(struct cp_thread *t)
{
	cp_cct__clear(&t->cct);
	t->busy = 0;
	t->end_ticks = t->lost_events = t->unpaired_exits = t->open_frames = 0;
	t->reconciled = t->lost_signals = 0;
	memset(t->unrecorded, 0, sizeof(t->unrecorded));
	t->mute_fn = t->mute_depth = 0;
	t->flags = 0;
	memset(t->name, 0, sizeof(t->name));
	memset(t->label, 0, sizeof(t->label));
	if (t->base) {
		if (t->base->lines)
			cp_arena__free(t->base->lines, t->base->lines->bytes);
		cp_arena__free(t->base, t->base->bytes);
		t->base = NULL;
	}
	cp_offcpu__clear_lines(&t->perf);
	t->perf.switch_lost = t->perf.samples = t->perf.samples_lost = 0;
	t->perf.period_ns = t->perf.cpu_ns = 0;
	if (cp_hook_mode == CP_MODE_COVERAGE)
		memset(t->seen, 0, sizeof(t->seen));
	for (unsigned i = 0; t->ctx && i < CP_CTX_SLOTS; i++)
		t->ctx[i].uc = NULL;
	t->ctx_current = NULL;
}

/*
 * Empty t (and its side tree) and put it on the free list (under the fold
 * lock, with every signal blocked).
 */
static void recycle(struct cp_thread *t)
{
	__atomic_store_n(&t->nthreads, 0, __ATOMIC_RELEASE); /* the dump skips it from now */
	reset_tree(t);
	if (t->side)
		reset_tree(t->side);
	pthread_mutex_lock(&cp_session.free_lock);
	t->next_free = cp_session.free;
	/* Atomic: reuse() peeks at the list without the lock. */
	__atomic_store_n(&cp_session.free, t, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cp_session.free_lock);
}

/*
 * pthread key destructor: the thread is ending.  Its open calls are closed
 * now.  Beyond the first CP_KEEP_EXITED threads, its tree goes into the
 * aggregate of its name and its state is recycled; signals are blocked
 * meanwhile (a handler's hooks would want the state being emptied), and
 * hooks that run later in this thread (other TLS destructors) get a new one.
 * A muted thread stays muted (hooks.c): those hooks record nothing either.
 */
void cp_thread__exited(void *arg)
{
	struct cp_thread *t = arg;
	int saved_errno = errno, was;
	sigset_t all, old;

	if (!t || !cp_gate__live() || (t->busy && t->busy != CP_MUTED))
		goto out;
	was = t->busy;
	t->busy = 1;
	cp_offcpu__thread_end(t);
	t->end_ticks = cp_ticks();
	t->perf.cpu_ns = cp_offcpu__cpu_since_start(t, cp_offcpu__thread_cpu_ns(t->tid));
	cp_thread__close_open(t, t->end_ticks);
	if (cp_sys__begin(CP_SYS_THREAD)) {
		prctl(PR_GET_NAME, t->name);
		cp_sys__end();
	}
	t->flags |= CP_THREAD_EXITED;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* A muted thread stays muted for the hooks of later TLS destructors. */
	t->busy = was;
	if (__atomic_fetch_add(&cp_session.threads_exited, 1, __ATOMIC_RELAXED) < CP_KEEP_EXITED ||
	    cp_session.state != CP_STATE_ON || t != cp_self)
		goto out;
	/*
	 * Muted inside a call that never returns (--exclude-tree, a pause,
	 * --max-depth): a new state would record the destructors' calls, so
	 * this one stays.  Waiting for a start function (--start), a new
	 * state is muted the same way at its set-up.
	 */
	if (was == CP_MUTED && t->mute_kind != CP_MUTE_OUTSIDE_START)
		goto out;
	/* A seccomp filter that forbids what a fold does: the state stays as it is. */
	if (!cp_sys__may(CP_SYS_SIGMASK) || !cp_sys__may(CP_SYS_MEMORY))
		goto out;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	cp_self = NULL;
	cp_thread__fold_lock();
	if (!fold(t))
		recycle(t);
	cp_thread__fold_unlock();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
	errno = saved_errno;
}

/*
 * In a fork child only the forking thread exists.  It keeps its open call
 * path as context, starts counting from zero, and the other threads'
 * trees (the parent's business) are dropped from the registry.
 */
void cp_thread__reset_after_fork(struct cp_thread *t)
{
	uint64_t now;

	cp_session.offcpu_threads = cp_session.offcpu_failed = 0;
	cp_session.threads = NULL;
	cp_session.nthreads = 1;
	cp_session.free = NULL; /* the parent's threads' states and aggregates */
	memset(cp_session.agg, 0, sizeof(cp_session.agg));
	cp_session.threads_exited = 0;
	if (!t)
		return;
	/* Events of our own first: like set-up, that can wait (the child's time starts after). */
	cp_offcpu__after_fork(t);
	now = cp_ticks();
	/* Counts from zero; the first call looks its node up: see start_watcher(). */
	cp_cct__zero(&t->cct);
	/* Coverage: the child records the functions it runs itself, its parent's ran there. */
	memset(t->seen, 0, sizeof(t->seen));
	t->base = NULL; /* counts start from zero anyway; the baseline stayed with the parent */
	if (t->side)
		reset_tree(t->side); /* the parent's handler runs */
	for (struct cp_frame *f = t->cct.stack->f; f <= t->cct.top; f++)
		if (f->start != CP_UNTIMED)
			f->start = now;
	t->start_ticks = now;
	t->tid = cp_sys__may(CP_SYS_THREAD) ? (uint32_t)gettid() : 0;
	__atomic_store_n(&t->self, pthread_self(), __ATOMIC_RELAXED); /* pthread_setname_np reads it */
	t->seq = 0;
	t->lost_events = t->unpaired_exits = t->open_frames = t->reconciled = 0;
	memset(t->unrecorded, 0, sizeof(t->unrecorded));
	t->flags &= ~CP_THREAD_TRUNCATED;
	t->next = NULL;
	cp_offcpu__baseline(t);
	register_thread(t);
}

/*
 * What of t a fork child must take into memory of its own (watch.c): the
 * state, its shadow stack as far as it is in use, its chunks as far as
 * they are used.  Older stack mappings and the side tree are not kept
 * (the caller unlinks them once the memory is its own).
 */
void cp_thread__keep(struct cp_thread *t, void (*keep)(const void *p, size_t bytes))
{
	keep(t, sizeof(*t));
	keep(t->cct.stack, sizeof(*t->cct.stack) + (size_t)(t->cct.top - t->cct.stack->f + 1) * sizeof(struct cp_frame));
	for (struct cp_chunk *c = t->cct.chunks; c; c = c->next)
		keep(c, sizeof(*c) + (size_t)c->used * sizeof(struct cp_node));
}
