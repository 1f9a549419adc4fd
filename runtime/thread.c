/*
 * thread.c - per-thread state: set-up on the first hook, node allocation,
 * child lookup, shadow-stack growth, thread exit.
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
#define CHUNK_BYTES0 (64 << 10) /* first node chunk; later ones double up to: */
#define CHUNK_BYTES_MAX (16 << 20)

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

#define map_shared cp_arena__alloc
#define unmap_shared cp_arena__free

static inline uint64_t hash(const struct cp_node *parent, uintptr_t fn)
{
	return cp_ptr_hash(parent, fn);
}

/* Where a site record (parent, fn, site) is filed; a node is filed by (parent, fn). */
static inline uint64_t hash_site(const struct cp_node *parent, uintptr_t fn, uintptr_t site)
{
	return hash(parent, fn ^ ((uint64_t)site * 0xC2B2AE3D27D4EB4Full));
}

static inline uint64_t hash_of(const struct cp_node *n)
{
	return cp_node__is_site(n) ? hash_site(n->parent, n->fn, n->site) : hash(n->parent, n->fn);
}

static int add_chunk(struct cp_thread *t)
{
	uint64_t bytes = t->chunk ? t->chunk->bytes * 2 : CHUNK_BYTES0;
	struct cp_chunk *c = t->chunk ? t->chunk->next : NULL;

	if (c) {
		/* A recycled state: the chunks after the current one are empty. */
		t->chunk = c;
		t->free = c->n;
		t->free_end = c->n + c->cap;
		return 0;
	}
	if (bytes > CHUNK_BYTES_MAX)
		bytes = CHUNK_BYTES_MAX;
	c = map_shared(bytes);
	if (!c)
		return -ENOMEM;
	c->bytes = bytes;
	c->cap = (uint32_t)((bytes - sizeof(*c)) / sizeof(struct cp_node));
	c->used = 0;
	c->next = NULL;
	if (t->chunk)
		__atomic_store_n(&t->chunk->next, c, __ATOMIC_RELEASE);
	else
		t->chunks = c;
	t->chunk = c;
	t->free = c->n;
	t->free_end = c->n + c->cap;
	return 0;
}

static struct cp_htab *new_htab(uint64_t slots)
{
	uint64_t bytes = sizeof(struct cp_htab) + slots * sizeof(struct cp_node *);
	struct cp_htab *h = map(bytes);

	if (h) {
		h->mask = slots - 1;
		h->bytes = bytes;
	}
	return h;
}

/* File n in h, where it is not yet. */
static void htab_put(struct cp_htab *h, struct cp_node *n)
{
	uint64_t j;

	for (j = hash_of(n) & h->mask; h->s[j]; j = (j + 1) & h->mask)
		if (h->s[j] == n)
			return;
	h->s[j] = n;
	h->count++;
}

/*
 * A table twice the size replaces t's in one store (internal.h, abandoned
 * hooks); the old one is unmapped after, or leaked if this is abandoned.
 */
static int grow_htab(struct cp_thread *t)
{
	struct cp_htab *old = t->htab, *h = new_htab((old->mask + 1) * 2);

	if (!h)
		return -ENOMEM;
	for (uint64_t i = 0; i <= old->mask; i++)
		if (old->s[i])
			htab_put(h, old->s[i]);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->htab = h;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	munmap(old, old->bytes);
	return 0;
}

static void stop_recording(struct cp_thread *t)
{
	t->stopped = 1;
	t->flags |= CP_THREAD_TRUNCATED;
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
	for (struct cp_frame *f = t->stack->f + 1; f <= t->top; f++)
		f->start += d;
}

/* Make n the child "from" found last (keeping the one before as cache2). */
static inline void remember(struct cp_node *from, struct cp_node *n)
{
	if (from->cache != n) {
		from->cache2 = from->cache;
		from->cache = n;
	}
}

/*
 * Find or create the record for a call of fn from site, made in the
 * context "from" (a node or a site record): the child node of from's node
 * for fn if the call comes from the node's first site, else the site
 * record for site.  Coverage mode keeps no sites.  Never fails: when
 * memory runs out it returns the thread's "lost" node, which absorbs the
 * calls so that enters and exits stay paired and the loss is counted.
 */
struct cp_node *cp_thread__child(struct cp_thread *t, struct cp_node *from, uintptr_t fn,
				 uintptr_t site)
{
	struct cp_node *parent = from->canon, *node = NULL, *n;
	struct cp_htab *h;
	uint64_t i;

	if (unlikely(from == &t->lost))
		return &t->lost;
	if (unlikely(__atomic_load_n(&cp_session.watch_pending, __ATOMIC_RELAXED)))
		start_watcher(t);
	h = t->htab;
	for (i = hash(parent, fn) & h->mask; (n = h->s[i]); i = (i + 1) & h->mask) {
		if (n->fn == fn && n->parent == parent && !cp_node__is_site(n)) {
			node = n;
			break;
		}
	}
	if (node) {
		if (node->site == site || cp_hook_mode == CP_MODE_COVERAGE) {
			remember(from, node);
			return node;
		}
		for (i = hash_site(parent, fn, site) & h->mask; (n = h->s[i]); i = (i + 1) & h->mask) {
			if (n->fn == fn && n->site == site && n->parent == parent &&
			    cp_node__is_site(n)) {
				remember(from, n);
				return n;
			}
		}
	}
	if (unlikely(t->stopped))
		return &t->lost;
	if (unlikely(t->free == t->free_end)) {
		if (add_chunk(t)) {
			stop_recording(t);
			return &t->lost;
		}
	}
	/* Filled before it is counted, counted before free moves on (internal.h). */
	n = t->free;
	n->fn = fn;
	n->site = site;
	n->parent = parent;
	n->cache = n->cache2 = NULL;
	n->canon = node ? node : n;
	/* Fresh mappings are zero, recycled ones are not. */
	n->calls = n->ticks = n->max_ticks = n->wait_ticks = n->inactive_ticks = 0;
	n->min_ticks = UINT64_MAX;
	n->flags = 0;
	/* Record-time selection (filter.c); not for a side tree's first level, whose fn is a context. */
	if (unlikely(cp_filter.active) && !t->unfiltered && !(t->owner && parent == &t->root)) {
		uint32_t ff = cp_filter__classify(fn);

		n->flags = ff & CP_FF_TREE ? CP_NF_TREE : ff & CP_FF_EXCLUDE ? CP_NF_EXCLUDED : 0;
	}
	n->id = t->nnodes;
	/* Publish: the dumping thread reads only nodes below nnodes. */
	__atomic_store_n(&t->chunk->used, t->chunk->used + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&t->nnodes, t->nnodes + 1, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->free = n + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	h->s[i] = n;
	h->count++;
	remember(from, n);
	if (h->count * 2 > h->mask + 1 && grow_htab(t)) {
		/* The table stays valid at this load; just stop adding nodes. */
		stop_recording(t);
	}
	return n;
}

int cp_thread__grow_stack(struct cp_thread *t)
{
	struct cp_stack *old = t->stack;
	uint64_t cap = old->cap * 2;
	uint64_t bytes = sizeof(*old) + cap * sizeof(struct cp_frame);
	struct cp_stack *s = map_shared(bytes);
	uint64_t depth = t->top - old->f;

	if (!s)
		return -ENOMEM;
	s->cap = cap;
	s->bytes = bytes;
	s->older = old;
	memcpy(s->f, old->f, (depth + 1) * sizeof(struct cp_frame));
	/* The stack first, then top and limit into it (cp_thread__repair). */
	__atomic_store_n(&t->stack, s, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->top = s->f + depth;
	t->limit = s->f + cp_thread__limit(cap);
	return 0;
}

/*
 * A hook of t was abandoned part-way (a signal handler that interrupted it
 * jumped out, interpose.c): make what the hooks derive agree again with
 * what was published, in the order internal.h gives.  Runs with busy held.
 */
void cp_thread__repair(struct cp_thread *t)
{
	struct cp_stack *s = t->stack;
	struct cp_chunk *c = t->chunk, *k, *prev = NULL;
	struct cp_node *last = NULL;
	uint32_t nodes = 1; /* the root */

	/* Stack growth: top and limit may still be in the older mapping. */
	if ((t->top < s->f || t->top >= s->f + s->cap) && s->older && t->top >= s->older->f &&
	    t->top < s->older->f + s->older->cap)
		t->top = s->f + (t->top - s->older->f);
	t->limit = s->f + cp_thread__limit(s->cap);
	/* Node allocation: the chunk's used count is the truth; free and nnodes follow it. */
	for (k = t->chunks; k; prev = k, k = k->next) {
		nodes += k->used;
		if (k == c)
			break;
	}
	if (c->used)
		last = &c->n[c->used - 1];
	else if (prev && prev != c && prev->used)
		last = &prev->n[prev->used - 1];
	t->free = c->n + c->used;
	t->free_end = c->n + c->cap;
	__atomic_store_n(&t->nnodes, nodes, __ATOMIC_RELEASE);
	/* The newest node may be counted but not filed. */
	if (last && t->htab->count * 2 < t->htab->mask)
		htab_put(t->htab, last);
}

static void register_thread(struct cp_thread *t)
{
	struct cp_thread *head = __atomic_load_n(&cp_session.threads, __ATOMIC_RELAXED);

	do {
		t->next = head;
	} while (!__atomic_compare_exchange_n(&cp_session.threads, &head, t, 1, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

/* The tree of t holds just its root again; the shadow stack just the root's frame. */
static void clear_roots(struct cp_thread *t)
{
	memset(&t->root, 0, sizeof(t->root));
	t->root.min_ticks = UINT64_MAX;
	t->root.calls = 1;
	t->root.canon = &t->root;
	memset(&t->lost, 0, sizeof(t->lost));
	t->lost.min_ticks = UINT64_MAX;
	t->lost.canon = &t->lost;
	t->lost.id = UINT32_MAX;
	t->top = t->stack->f;
	t->top->node = &t->root;
	__atomic_store_n(&t->nnodes, 1, __ATOMIC_RELEASE);
}

/*
 * Allocate and initialise thread state without publishing it: the caller
 * registers it (a real thread) or uses it privately (calibration).
 */
struct cp_thread *cp_thread__new(void)
{
	uint64_t sbytes = sizeof(struct cp_stack) + STACK_FRAMES0 * sizeof(struct cp_frame);
	struct cp_thread *t = map_shared(sizeof(*t));

	if (!t)
		return NULL;
	t->stack = map_shared(sbytes);
	t->htab = new_htab(HTAB_SLOTS0);
	if (!t->stack || !t->htab || add_chunk(t)) {
		if (t->stack)
			unmap_shared(t->stack, sbytes);
		if (t->htab)
			munmap(t->htab, t->htab->bytes);
		if (t->chunk)
			unmap_shared(t->chunk, t->chunk->bytes);
		unmap_shared(t, sizeof(*t));
		return NULL;
	}
	t->stack->cap = STACK_FRAMES0;
	t->stack->bytes = sbytes;
	clear_roots(t);
	t->limit = t->stack->f + cp_thread__limit(STACK_FRAMES0);
	t->nthreads = 1;
	t->start_ticks = cp_ticks();
	t->top->start = t->start_ticks;
	t->sw_head = &cp_offcpu_still;
	return t;
}

/* Release state from cp_thread__new() that was never registered. */
void cp_thread__free(struct cp_thread *t)
{
	struct cp_stack *s, *older;
	struct cp_chunk *c, *next;

	if (!t)
		return;
	for (s = t->stack; s; s = older) {
		older = s->older;
		unmap_shared(s, s->bytes);
	}
	for (c = t->chunks; c; c = next) {
		next = c->next;
		unmap_shared(c, c->bytes);
	}
	cp_offcpu__free_lines(&t->perf);
	munmap(t->htab, t->htab->bytes);
	unmap_shared(t, sizeof(*t));
}

/*
 * A recycled state for a new thread, if one is free and the lock is to be
 * had at once (setup may run in a signal handler that interrupted a holder
 * of the lock: it must not wait).
 */
static struct cp_thread *reuse(void)
{
	struct cp_thread *t = NULL;

	/* A peek without the lock, to spare it when nothing is free. */
	if (!__atomic_load_n(&cp_session.free, __ATOMIC_RELAXED) || cp_thread__fold_trylock())
		return NULL;
	t = cp_session.free;
	if (t) {
		__atomic_store_n(&cp_session.free, t->next_free, __ATOMIC_RELAXED);
		t->next_free = NULL;
		t->start_ticks = cp_ticks();
		t->top->start = t->start_ticks;
		__atomic_store_n(&t->nthreads, 1, __ATOMIC_RELEASE);
	}
	cp_thread__fold_unlock();
	return t;
}

struct cp_thread *cp_thread__setup(void)
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
	t->tid = (uint32_t)gettid();
	__atomic_store_n(&t->self, pthread_self(), __ATOMIC_RELAXED); /* pthread_setname_np reads it */
	if (cp_arena.on)
		prctl(PR_GET_NAME, t->name); /* for a watcher, which cannot ask /proc later */
	t->seq = __atomic_fetch_add(&cp_session.nthreads, 1, __ATOMIC_RELAXED);
	if (fresh)
		register_thread(t);
	cp_self = t;
	if (cp_session.have_key)
		pthread_setspecific(cp_session.key, t);
	/*
	 * Opening the perf event can wait in the kernel for milliseconds (the
	 * first event of its kind switches the scheduler's perf hooks on, and
	 * that waits for other CPUs): the thread's time starts after it, as
	 * the watcher's spawn is kept out of the frames' time.
	 */
	cp_offcpu__thread_start(t);
	t->perf.cpu0_ns = cp_offcpu__thread_cpu_ns(t->tid);
	t->start_ticks = cp_ticks();
	t->top->start = t->start_ticks;
	if (cp_filter.start)
		cp_hooks__mute_start(t);
	return t;
}

/*
 * A longjmp to a frame whose stack pointer is target abandons every frame
 * called below it: close them at now.  The hooks record their own frame
 * address; the caller's stack pointer at the call is 16 bytes above it
 * (return address and saved frame pointer).  A target outside the range
 * of the open frames (a jump to another stack: coroutines) is left alone;
 * UINTPTR_MAX closes every open frame (a context switch that abandons them).
 */
void cp_thread__unwind_to(struct cp_thread *t, uintptr_t target, uint64_t now)
{
	struct cp_frame *base = t->stack->f, *f = t->top;

	if (f == base || f->sp + 16 >= target)
		return; /* nothing below the target */
	if (base[1].sp + 16 < target && target != UINTPTR_MAX)
		return; /* above every frame: another stack, not ours to judge */
	while (t->top > base && t->top->sp + 16 < target) {
		f = t->top;
		t->top = f - 1; /* first: see pop() in hooks.c */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (cp_hook_mode == CP_MODE_TIMING && f->start != CP_UNTIMED)
			cp_node__add_call(f->node, now - f->start);
		t->reconciled++;
	}
}

/* Close every open frame at time now, as if the calls returned then. */
void cp_thread__close_open(struct cp_thread *t, uint64_t now)
{
	struct cp_frame *base = t->stack->f;

	while (t->top > base) {
		struct cp_frame *f = t->top;

		t->top = f - 1; /* first: see pop() in hooks.c */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (f->start != CP_UNTIMED)
			cp_node__add_call(f->node, now - f->start);
		t->open_frames++;
	}
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
	a->root.calls = 0;
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
	if (!tmp->calls) {
		tmp->min_ticks = UINT64_MAX;
		tmp->max_ticks = 0;
	}
	if (tmp->max_ticks > tmp->ticks)
		tmp->max_ticks = tmp->ticks;
	return tmp;
}

static void add_counts(struct cp_node *m, const struct cp_node *n)
{
	m->calls += n->calls;
	m->ticks += n->ticks;
	m->wait_ticks += n->wait_ticks;
	m->inactive_ticks += n->inactive_ticks;
	m->switches_vol = cp_add_sat32(m->switches_vol, n->switches_vol);
	m->switches_invol = cp_add_sat32(m->switches_invol, n->switches_invol);
	if (n->min_ticks < m->min_ticks)
		m->min_ticks = n->min_ticks;
	if (n->max_ticks > m->max_ticks)
		m->max_ticks = n->max_ticks;
}

/* t's side tree into aggregate a: to[] maps t's nodes (nn of them) into a. */
static void fold_side(struct cp_thread *a, struct cp_thread *t, struct cp_node **to, uint32_t nn)
{
	struct cp_thread *s = t->side;
	size_t bytes;
	struct cp_node **sto;

	if (!s || s->nnodes < 2)
		return;
	struct cp_node tmp;

	bytes = ((size_t)s->nnodes * sizeof(*sto) + 4095) & ~(size_t)4095;
	sto = map(bytes);
	if (!sto)
		return;
	for (struct cp_chunk *c = s->chunks; c; c = c->next) {
		for (uint32_t i = 0; i < c->used; i++) {
			struct cp_node *n = &c->n[i], *ctx, *m;

			if (n->parent == &s->root) {
				ctx = (struct cp_node *)n->fn;
				sto[n->id] = ctx && ctx->id < nn ? to[ctx->id] : &a->root;
				continue;
			}
			m = cp_thread__child(a, sto[n->parent->id], n->fn, n->site);
			sto[n->id] = m;
			add_counts(m, since_reset(n, s->base, &tmp));
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
	uint32_t nn = t->nnodes;
	size_t bytes = ((size_t)nn * sizeof(struct cp_node *) + 4095) & ~(size_t)4095;
	struct cp_thread *a = aggregate_for(t);
	struct cp_node **to, tmp;
	uint64_t start = t->base && t->base->at > t->start_ticks ? t->base->at : t->start_ticks;

	if (!a)
		return -1;
	to = map(bytes);
	if (!to)
		return -1;
	to[0] = &a->root;
	for (struct cp_chunk *c = t->chunks; c; c = c->next) {
		for (uint32_t i = 0; i < c->used; i++) {
			struct cp_node *n = &c->n[i], *m;

			m = cp_thread__child(a, to[n->parent->id], n->fn, n->site);
			to[n->id] = m;
			m->flags |= n->flags;
			add_counts(m, since_reset(n, t->base, &tmp));
		}
	}
	fold_side(a, t, to, nn);
	fold_perf(&a->perf, &t->perf, t->base, to, nn);
	munmap(to, bytes);
	a->root.ticks += t->end_ticks > start ? t->end_ticks - start : 0;
	a->root.calls++;
	a->lost.calls += t->lost.calls;
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
	for (struct cp_chunk *c = t->chunks; c; c = c->next)
		__atomic_store_n(&c->used, 0, __ATOMIC_RELEASE);
	t->chunk = t->chunks;
	t->free = t->chunks->n;
	t->free_end = t->chunks->n + t->chunks->cap;
	memset(t->htab->s, 0, (t->htab->mask + 1) * sizeof(t->htab->s[0]));
	t->htab->count = 0;
	clear_roots(t);
	t->busy = t->stopped = 0;
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

/* Empty t (and its side tree) and put it on the free list (under the fold lock). */
static void recycle(struct cp_thread *t)
{
	__atomic_store_n(&t->nthreads, 0, __ATOMIC_RELEASE); /* the dump skips it from now */
	reset_tree(t);
	if (t->side)
		reset_tree(t->side);
	t->next_free = cp_session.free;
	/* Atomic: reuse() peeks at the list without the lock. */
	__atomic_store_n(&cp_session.free, t, __ATOMIC_RELAXED);
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
	prctl(PR_GET_NAME, t->name);
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
	for (struct cp_chunk *c = t->chunks; c; c = c->next) {
		for (uint32_t i = 0; i < c->used; i++) {
			struct cp_node *n = &c->n[i];

			n->calls = n->ticks = n->max_ticks = 0;
			n->wait_ticks = n->inactive_ticks = 0;
			n->switches_vol = n->switches_invol = 0;
			n->min_ticks = UINT64_MAX;
			/* The first call looks its node up: see start_watcher(). */
			n->cache = n->cache2 = NULL;
		}
	}
	t->root.cache = t->root.cache2 = NULL;
	/* Coverage: the child records the functions it runs itself, its parent's ran there. */
	memset(t->seen, 0, sizeof(t->seen));
	t->base = NULL; /* counts start from zero anyway; the baseline stayed with the parent */
	if (t->side)
		reset_tree(t->side); /* the parent's handler runs */
	t->root.ticks = 0;
	for (struct cp_frame *f = t->stack->f; f <= t->top; f++)
		if (f->start != CP_UNTIMED)
			f->start = now;
	t->start_ticks = now;
	t->tid = (uint32_t)gettid();
	__atomic_store_n(&t->self, pthread_self(), __ATOMIC_RELAXED); /* pthread_setname_np reads it */
	t->seq = 0;
	t->lost_events = t->unpaired_exits = t->open_frames = t->reconciled = 0;
	memset(t->unrecorded, 0, sizeof(t->unrecorded));
	t->lost.calls = t->lost.ticks = 0;
	t->flags &= ~CP_THREAD_TRUNCATED;
	t->stopped = 0;
	t->next = NULL;
	t->perf.cpu0_ns = cp_offcpu__thread_cpu_ns(t->tid);
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
	keep(t->stack, sizeof(*t->stack) + (size_t)(t->top - t->stack->f + 1) * sizeof(struct cp_frame));
	for (struct cp_chunk *c = t->chunks; c; c = c->next)
		keep(c, sizeof(*c) + (size_t)c->used * sizeof(struct cp_node));
}
