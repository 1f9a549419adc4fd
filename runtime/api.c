/*
 * api.c - the run-time control API of include/callprof.h: pause/resume,
 * snapshots, reset, thread labels, named regions.
 *
 * The program reaches it through callprof__get_api(), the one exported
 * symbol, which the header's wrappers look up once (weak reference or
 * dlsym), so a program using the API runs without callprof as well.
 *
 * Regions are pseudo-functions (CP_FN_REGION(id), internal.h) pushed and
 * popped through the ordinary hooks, so they nest, pair and reconcile like
 * calls; their names are interned here, in a fixed table in our data pages
 * (shared with the watcher, which writes them too): lock-free lookups, and
 * an insert under a spin lock that gives up rather than wait for ever (a
 * signal handler may interrupt an insert on its own thread).
 *
 * A reset records, per node, what the dump must subtract from then on
 * (struct cp_base): no thread's hot data is touched.  See
 * docs/internals/api.md for the decisions.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#define CALLPROF__RUNTIME
#include "include/callprof.h"
#include "runtime/internal.h"

#define CP_EXPORT __attribute__((visibility("default"), no_instrument_function))

/*
 * A process that calls the API writes a profile, instrumented or not
 * (cp_session__ran_code); regions need not say so: they are nodes.
 */
static inline void used(void)
{
	__atomic_store_n(&cp_session.api_used, 1, __ATOMIC_RELAXED);
}

/* ---- regions ---- */

#define NAME_MAX_LEN 255
#define POOL_BYTES (96u << 10)
/* The last id never names a region: an end of an unknown name exits with it (unpaired). */
#define NREGIONS (CP_MAX_REGIONS - 1)
#define NO_REGION (CP_MAX_REGIONS - 1)
#define BY_NAME_SLOTS 8192 /* > 2 * NREGIONS: open addressing stays short */
#define BY_PTR_SLOTS 1024

struct region {
	const char *key; /* the pointer last seen for it: a hint, checked against the name */
	uint32_t off;	 /* its name in pool */
	uint32_t hash;
	uint32_t len;
};

static struct region regions[NREGIONS];
static char pool[POOL_BYTES];
static uint32_t pool_used;
static uint32_t nregions;		 /* published (release) after the entry is complete */
static uint16_t by_name[BY_NAME_SLOTS]; /* id + 1, 0 = free */
static uint16_t by_ptr[BY_PTR_SLOTS];	 /* id + 1 of the name last seen at that pointer */
static int insert_lock;

static uint32_t name_hash(const char *s, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static uint32_t ptr_slot(const char *p)
{
	return (uint32_t)(cp_ptr_hash(p, 0) & (BY_PTR_SLOTS - 1));
}

static int same(const struct region *r, const char *name, uint32_t len)
{
	return r->len == len && !memcmp(pool + r->off, name, len);
}

/* The id of name (len bytes, hash h), or -1. */
static int find(const char *name, uint32_t len, uint32_t h)
{
	uint32_t v = __atomic_load_n(&by_ptr[ptr_slot(name)], __ATOMIC_ACQUIRE);

	if (v && __atomic_load_n(&regions[v - 1].key, __ATOMIC_RELAXED) == name &&
	    same(&regions[v - 1], name, len))
		return (int)v - 1;
	for (uint32_t i = h & (BY_NAME_SLOTS - 1);
	     (v = __atomic_load_n(&by_name[i], __ATOMIC_ACQUIRE)); i = (i + 1) & (BY_NAME_SLOTS - 1)) {
		if (regions[v - 1].hash == h && same(&regions[v - 1], name, len)) {
			__atomic_store_n(&regions[v - 1].key, name, __ATOMIC_RELAXED);
			__atomic_store_n(&by_ptr[ptr_slot(name)], (uint16_t)v, __ATOMIC_RELEASE);
			return (int)v - 1;
		}
	}
	return -1;
}

/* Add name; -1 if the table or the pool is full, or the lock stays taken. */
static int insert(const char *name, uint32_t len, uint32_t h)
{
	uint32_t n, i;
	int id;

	for (int tries = 0; __atomic_exchange_n(&insert_lock, 1, __ATOMIC_ACQUIRE); tries++) {
		if (tries > 1000)
			return -1; /* perhaps a handler interrupted the holder on this thread */
		if (cp_sys__may(CP_SYS_THREAD)) /* a seccomp filter may forbid it */
			sched_yield();
	}
	id = find(name, len, h);
	if (id >= 0)
		goto out;
	n = nregions;
	if (n == NREGIONS || pool_used + len + 1 > POOL_BYTES) {
		cp_warn_once("too many named regions: later names are not recorded");
		goto out;
	}
	regions[n].off = pool_used;
	regions[n].len = len;
	regions[n].hash = h;
	regions[n].key = name;
	memcpy(pool + pool_used, name, len);
	pool[pool_used + len] = '\0';
	pool_used += len + 1;
	for (i = h & (BY_NAME_SLOTS - 1); by_name[i]; i = (i + 1) & (BY_NAME_SLOTS - 1))
		;
	__atomic_store_n(&nregions, n + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&by_name[i], (uint16_t)(n + 1), __ATOMIC_RELEASE);
	id = (int)n;
out:
	__atomic_store_n(&insert_lock, 0, __ATOMIC_RELEASE);
	return id;
}

static int region_id(const char *name, int add)
{
	uint32_t len, h;
	int id;

	if (!name)
		return -1;
	len = (uint32_t)strnlen(name, NAME_MAX_LEN);
	h = name_hash(name, len);
	id = find(name, len, h);
	if (id < 0 && add)
		id = insert(name, len, h);
	return id;
}

uint32_t cp_api__nregions(void)
{
	return __atomic_load_n(&nregions, __ATOMIC_ACQUIRE);
}

const char *cp_api__region_name(uint32_t id)
{
	return id < cp_api__nregions() ? pool + regions[id].off : "";
}

static CP_NOINSTR void region_begin(const char *name)
{
	int saved_errno = errno;
	int id;

	if (cp_session.state != CP_STATE_NONE && !cp_gate__live())
		return; /* a clone child: the region table is its parent's (control.c) */
	id = region_id(name, 1);
	if (id >= 0)
		__cyg_profile_func_enter((void *)CP_FN_REGION(id), __builtin_return_address(0));
	errno = saved_errno;
}

/* Through the exit hook: a region not on top is reconciled like a call (exit_slow). */
static CP_NOINSTR void region_end(const char *name)
{
	int saved_errno = errno;
	int id = region_id(name, 0);

	if (name)
		__cyg_profile_func_exit((void *)CP_FN_REGION(id >= 0 ? (unsigned)id : NO_REGION),
					__builtin_return_address(0));
	errno = saved_errno;
}

/* ---- snapshots and reset ---- */

/* callprof_dump() and callprof_reset() one at a time (the dump reads the baselines). */
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;

void cp_api__dump_path(const char *base, char *path, size_t cap)
{
	size_t len = strnlen(base, sizeof(cp_session.out));
	unsigned n = __atomic_add_fetch(&cp_session.dumps, 1, __ATOMIC_RELAXED);

	if (len > cap - 32)
		len = cap - 32;
	memcpy(path, base, len);
	memcpy(path + len, ".dump", 5);
	len += 5;
	cp_put_dec(path, cap, &len, n);
}

static int recording(void)
{
	/* not a vfork child: the memory is its parent's (getpid() may be forbidden: seccomp.c) */
	return __atomic_load_n(&cp_session.state, __ATOMIC_ACQUIRE) == CP_STATE_ON &&
	       cp_gate__live() && cp_sys__may(CP_SYS_WRITE) && getpid() == cp_session.pid;
}

static CP_NOINSTR int dump(const char *path)
{
	int saved_errno = errno, ret;
	char buf[sizeof(cp_session.out) + 32];

	used();
	if (!recording()) {
		errno = EAGAIN;
		return -1;
	}
	pthread_mutex_lock(&api_lock);
	if (!path) {
		cp_api__dump_path(cp_session.out, buf, sizeof(buf));
		path = buf;
	}
	/*
	 * The dump's time stays in the caller's time, like that of any code
	 * it calls that is not instrumented: moving its open calls' start
	 * would leave the dump's off-CPU time (the clock calibration sleeps)
	 * in them, more wait than time.
	 */
	ret = cp_flush(path, CP_FLUSH_SNAPSHOT);
	pthread_mutex_unlock(&api_lock);
	if (ret) {
		errno = -ret;
		return -1;
	}
	errno = saved_errno;
	return 0;
}

/*
 * t's baseline: every node's figures now, the open calls' time so far
 * included (read from t's stack as the dump does), so that a call open
 * now counts only its time after the reset.
 */
static void set_base(struct cp_thread *t, uint64_t now)
{
	uint32_t nn = __atomic_load_n(&t->cct.nnodes, __ATOMIC_ACQUIRE), id = 1;
	size_t bytes = sizeof(struct cp_base) + (size_t)nn * sizeof(struct cp_base_node);
	struct cp_base *b = cp_arena__alloc(bytes), *old;
	struct cp_stack *s;
	struct cp_frame *top;

	if (!b) {
		cp_warn_once("out of memory at callprof_reset(): a thread's counts were not reset");
		return;
	}
	memset(b, 0, bytes);
	b->bytes = bytes;
	b->at = now;
	b->n = nn;
	for (int k = 0; k < CP_MUTE_KINDS; k++)
		b->unrecorded[k] = t->unrecorded[k];
	for (struct cp_chunk *c = t->cct.chunks; c && id < nn; c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE)) {
		uint32_t used = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);

		for (uint32_t i = 0; i < used && id < nn; i++, id++) {
			const struct cp_node *n = &c->n[i];
			struct cp_base_node *bn = &b->node[id];

			bn->calls = n->calls;
			bn->ticks = n->ticks;
			bn->wait_ticks = n->wait_ticks;
			bn->inactive_ticks = n->inactive_ticks;
			bn->switches_vol = n->switches_vol;
			bn->switches_invol = n->switches_invol;
		}
	}
	s = __atomic_load_n(&t->cct.stack, __ATOMIC_ACQUIRE);
	top = t->cct.top;
	if (cp_hook_mode == CP_MODE_TIMING && top >= s->f && top < s->f + s->cap) {
		for (struct cp_frame *f = s->f + 1; f <= top; f++) {
			struct cp_node *n = f->node;
			uint32_t fid = n ? n->id : UINT32_MAX;

			if (fid < nn && f->start <= now)
				b->node[fid].ticks += now - f->start;
		}
	}
	/* The samples so far, subtracted from what the dump writes (flush.c). */
	b->lines = cp_offcpu__copy_lines(__atomic_load_n(&t->perf.lines, __ATOMIC_ACQUIRE));
	old = t->base;
	__atomic_store_n(&t->base, b, __ATOMIC_RELEASE);
	if (old) {
		if (old->lines)
			cp_arena__free(old->lines, old->lines->bytes);
		cp_arena__free(old, old->bytes);
	}
}

static CP_NOINSTR void reset(void)
{
	int saved_errno = errno;
	struct cp_thread *self = cp_self, *s;
	uint64_t now;
	int busy = 0;

	used();
	if (!recording() || cp_hook_mode == CP_MODE_COVERAGE)
		goto out;
	pthread_mutex_lock(&api_lock);
	if (self) {
		/* Our own hooks (a signal handler's) go to the side tree meanwhile. */
		busy = self->busy;
		self->busy = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	cp_thread__fold_lock(); /* no thread is folded or recycled under us */
	now = cp_ticks();
	for (struct cp_thread *t = __atomic_load_n(&cp_session.threads, __ATOMIC_ACQUIRE); t; t = t->next) {
		if (!__atomic_load_n(&t->nthreads, __ATOMIC_ACQUIRE))
			continue;
		set_base(t, now);
		s = __atomic_load_n(&t->side, __ATOMIC_ACQUIRE);
		if (s)
			set_base(s, now);
	}
	cp_thread__fold_unlock();
	if (self) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		self->busy = busy;
	}
	pthread_mutex_unlock(&api_lock);
out:
	errno = saved_errno;
}

/* A fork child: the lock may have been held by a thread that is not there. */
void cp_api__fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	api_lock = fresh;
	insert_lock = 0;
	cp_session.dumps = 0;
}

/* ---- thread labels, pause ---- */

static CP_NOINSTR void set_thread_name(const char *name)
{
	int saved_errno = errno;
	struct cp_thread *t = cp_self;
	size_t len;

	used();
	if (t && !cp_gate__live())
		goto out; /* a clone child: t is its parent's (control.c) */
	if (!t && cp_session.state != CP_STATE_DONE)
		t = cp_thread__setup();
	if (!t || t->owner) /* a side tree: the label is its thread's */
		t = t ? t->owner : NULL;
	if (!t)
		goto out;
	len = name ? strnlen(name, sizeof(t->label) - 1) : 0;
	/* A dump may read it meanwhile: it copies and terminates what it reads. */
	t->label[0] = '\0';
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (len) {
		memcpy(t->label + 1, name + 1, len - 1);
		t->label[len] = '\0';
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(&t->label[0], name[0], __ATOMIC_RELEASE);
	}
out:
	errno = saved_errno;
}

static CP_NOINSTR void pause_recording(void)
{
	int saved_errno = errno;

	used();
	cp_control__pause();
	errno = saved_errno;
}

static CP_NOINSTR void resume_recording(void)
{
	int saved_errno = errno;

	used();
	cp_control__resume();
	errno = saved_errno;
}

static const struct callprof__api api = {
	.size = sizeof(struct callprof__api),
	.pause = pause_recording,
	.resume = resume_recording,
	.dump = dump,
	.reset = reset,
	.set_thread_name = set_thread_name,
	.region_begin = region_begin,
	.region_end = region_end,
};

CP_EXPORT const struct callprof__api *callprof__get_api(void)
{
	return &api;
}
