/*
 * hooks.c - __cyg_profile_func_enter/exit, the only code that runs on
 * every call of the profiled program.
 *
 * No locks, malloc, stdio or syscalls on this path: one TLS load, one clock
 * read, one child lookup (the parent's two cached children, else the
 * thread's hash table; the call site is part of the key, see struct
 * cp_node).  The tree and the shadow stack are cct.h's: what the fast
 * paths need of it is inline there.  Everything rare - first call of a thread, a full shadow stack,
 * re-entry from a signal handler, an exit that does not match the top frame
 * - goes to a cold noinline function.  errno is never touched on the fast
 * path and is saved around the slow one.
 *
 * The clock is read as early as possible on exit and as late as possible on
 * entry, so the hooks' own cost lands outside the callee's measured time
 * (what remains in the caller's time is what overhead compensation removes).
 *
 * This file is compiled once per recording mode (CP_HOOK_MODE, see
 * internal.h) into separate runtime libraries, and `callprof record --mode`
 * preloads the one it needs: a mode is chosen once, by the loader, and never
 * tested on the hot path.
 *   timing:   exact counts, inclusive ticks, min/max per call path
 *   counting: the same tree and counts, no clock reads
 *   coverage: which functions ran; after a function's first call in a
 *             thread, entry is a single load and compare, exit does nothing
 *   cpu:      counting's hooks, and the thread's perf ring drained when its
 *             head moved (offcpu.c): CPU-time samples and context switches
 *             charged to the innermost context, no clock reads
 */
#include <errno.h>
#include <stdint.h>

#include "runtime/internal.h"

#define CP_EXPORT __attribute__((visibility("default"), no_instrument_function))

/*
 * The preprocessor cannot see enum constants, so the mode arrives as a
 * number; these must match enum cp_mode (checked below).
 */
#define HOOKS_TIMING 0
#define HOOKS_COUNTING 1
#define HOOKS_COVERAGE 2
#define HOOKS_CPU 4
_Static_assert(HOOKS_TIMING == CP_MODE_TIMING && HOOKS_COUNTING == CP_MODE_COUNTING &&
		       HOOKS_COVERAGE == CP_MODE_COVERAGE && HOOKS_CPU == CP_MODE_CPU,
	       "hook mode numbers out of step with enum cp_mode");

#if !defined(CP_HOOK_MODE) || CP_HOOK_MODE < 0 || CP_HOOK_MODE > 4 || CP_HOOK_MODE == 3
#error "compile hooks.c with -DCP_HOOK_MODE=0 (timing), 1 (counting), 2 (coverage) or 4 (cpu)"
#endif

const uint32_t cp_hook_mode = CP_HOOK_MODE;

#if CP_HOOK_MODE == HOOKS_TIMING
#define now_ticks() cp_ticks()
/* Context switches since the last hook belong to the innermost call: charge them first. */
#define offcpu_check(t) cp_offcpu__check(t)
/* At a call's exit: its time ended at now; a switch after that is its caller's. */
#define offcpu_check_at(t, now) cp_offcpu__check_at(t, now)
#elif CP_HOOK_MODE == HOOKS_CPU
#define now_ticks() ((uint64_t)0)
/* Samples and switches since the last hook happened in the innermost call. */
#define offcpu_check(t) cp_offcpu__check(t)
#define offcpu_check_at(t, now) cp_offcpu__check(t)
/*
 * The fast paths only look: records waiting send the hook to its slow
 * path, which drains them before it pushes or pops.  So the fast paths
 * make no call and save no registers for one.
 */
#define cpu_pending(t) (*(t)->sw_head != (t)->sw_seen)
#define fast_offcpu_check(t) ((void)0)
#define fast_offcpu_check_at(t, now) ((void)0)
#else
#define now_ticks() ((uint64_t)0)
#define offcpu_check(t) ((void)0)
#define offcpu_check_at(t, now) ((void)0)
#endif
#ifndef cpu_pending
#define cpu_pending(t) 0
#define fast_offcpu_check(t) offcpu_check(t)
#define fast_offcpu_check_at(t, now) offcpu_check_at(t, now)
#endif

/* Keep the compiler from moving stores across the busy flag. */
#define barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* The sled trampolines' leaf fast paths (see cp_sled__enter_fast). */
#define SLED_LEAF                                                                                  \
	__attribute__((no_caller_saved_registers, no_sanitize("address", "undefined", "thread"),   \
		       used)) CP_NOINSTR

/*
 * What an entry did, for the sled entry (cp_sled__enter), which replaces
 * the return address only of a call whose exit the runtime must see.
 */
enum enter_result {
	ENTER_NONE = 0,	 /* nothing to see at the exit: no frame */
	ENTER_FRAME = 1, /* a frame for this call is the top one */
	ENTER_MUTED = 2, /* this call muted the thread: its exit unmutes it */
};

/*
 * Start of every slow path: set up the thread's state on its first hook,
 * and refuse re-entry (a signal handler interrupting a hook: its calls are
 * counted as lost, not recorded).  Returns the thread with busy set, or
 * NULL when this event is to be dropped.
 */
static inline CP_NOINSTR struct cp_thread *slow_begin(struct cp_thread *t)
{
	if (t && !cp_gate__live())
		return NULL; /* a clone child: t is its parent's (control.c) */
	if (!t) {
		if (cp_session.state == CP_STATE_DONE)
			return NULL;
		t = cp_thread__setup();
		if (!t)
			return NULL;
	}
	if (t->busy) {
		t->lost_events++;
		return NULL;
	}
	t->busy = 1;
	barrier();
	return t;
}

#if CP_HOOK_MODE != HOOKS_COVERAGE

#if CP_HOOK_MODE == HOOKS_TIMING
/*
 * --budget: a context is judged once, at its CP_BUDGET_CALLS-th call.  If
 * its calls so far averaged fewer ticks than timing them costs (scaled by
 * the budget), it becomes count-only: later calls are counted but not
 * timed, so they cost no clock reads (format.h, CP_NODE_UNTIMED).
 */
static __attribute__((noinline, cold)) CP_NOINSTR void budget_judge(struct cp_thread *t,
								     struct cp_node *n)
{
	if (t->unfiltered || n->fn < CP_FN_PSEUDO_LIMIT)
		return;
	if (n->ticks / (n->calls - 1) < cp_filter.budget_ticks) {
		n->flags |= CP_NF_UNTIMED;
		__atomic_fetch_add(&cp_filter.demotions, 1, __ATOMIC_RELAXED);
	}
}
#endif

/*
 * Count a call of n and fill the frame above the top, but for its start:
 * the caller sets that, then publishes the frame with publish_frame(), so
 * that a hook abandoned half-way never leaves a frame with a stale start
 * on the stack (cct.h, steps 6 and 7).
 */
static inline CP_NOINSTR struct cp_frame *open_frame(struct cp_thread *t, struct cp_node *n,
						     uintptr_t fn, uintptr_t sp)
{
	return cp_cct__open_frame(&t->cct, n, fn, sp);
}

static inline CP_NOINSTR void publish_frame(struct cp_thread *t, struct cp_frame *f)
{
	cp_cct__publish_frame(&t->cct, f);
}

static inline CP_NOINSTR void push(struct cp_thread *t, struct cp_node *n, uintptr_t fn, uintptr_t sp)
{
	uint64_t now;
	struct cp_frame *f;

	open_frame(t, n, fn, sp);
#if CP_HOOK_MODE == HOOKS_TIMING
	if (unlikely(n->calls == cp_filter.budget_at))
		budget_judge(t, n);
#endif
	now = now_ticks();
	/* Found again after the clock read: no register is kept across it. */
	f = t->cct.top + 1;
	f->start = now;
	publish_frame(t, f);
}

/* A count-only frame: no clock read now or at its exit. */
static inline CP_NOINSTR void push_untimed(struct cp_thread *t, struct cp_node *n, uintptr_t fn,
					   uintptr_t sp)
{
	struct cp_frame *f = open_frame(t, n, fn, sp);

	f->start = CP_UNTIMED;
	publish_frame(t, f);
}

/* A frame for n, timed unless n is count-only (the slow paths' push). */
static inline CP_NOINSTR void push_by_flags(struct cp_thread *t, struct cp_node *n, uintptr_t fn,
					    uintptr_t sp)
{
	if (n->flags & CP_NF_UNTIMED)
		push_untimed(t, n, fn, sp);
	else
		push(t, n, fn, sp);
}

/*
 * The frame leaves the stack before its time is added: abandoned in
 * between, the call's time is lost rather than added twice (the unwinding
 * would close the frame again; cct.h, steps 8 and 9).
 */
static inline CP_NOINSTR void pop(struct cp_thread *t, struct cp_frame *f, uint64_t now)
{
#if CP_HOOK_MODE == HOOKS_TIMING
	struct cp_node *n = f->node;
	uint64_t start = f->start;

	cp_cct__pop_frame(&t->cct, f);
	if (likely(start != CP_UNTIMED))
		cp_node__add_call(n, now - start);
#else
	t->cct.top = f - 1;
#endif
}

/*
 * A call open at attach in a sled (seeded, no stub in its slot): its
 * return is never seen, by design, not a loss.
 */
static inline CP_NOINSTR int unseen_return(const struct cp_frame *f)
{
	return (f->fn & CP_FN_SEED_BIT) && (f->sp & (CP_SP_SLED | CP_SP_HOOKED)) == CP_SP_SLED;
}

/*
 * Close f and every frame above it (those as reconciled: their exits never
 * ran, unless unseen_return).
 */
static inline CP_NOINSTR void pop_through(struct cp_thread *t, struct cp_frame *f, uint64_t now)
{
	while (t->cct.top > f) {
		struct cp_frame *g = t->cct.top;
		int unseen = unseen_return(g);

		pop(t, g, now);
		t->reconciled += !unseen;
	}
	pop(t, f, now);
}

/*
 * Mute the thread (internal.h, CP_MUTED): fn, entered at sp, is not
 * recorded, nor anything until its activation returns.  unrecorded is 1
 * when fn's own call counts among the calls the muting left out (0 for an
 * --exclude-tree function, whose calls its marker counts).  Called with
 * busy held; leaves busy at CP_MUTED.
 */
static CP_NOINSTR void mute(struct cp_thread *t, uintptr_t fn, uintptr_t sp, uint32_t kind,
			    uint64_t unrecorded)
{
	t->mute_fn = fn;
	t->mute_sp = sp;
	t->mute_depth = 1;
	t->mute_kind = kind;
	t->unrecorded[kind] += unrecorded;
	barrier();
	t->busy = CP_MUTED;
}

/* A thread of a --start recording waits, muted, for a start function. */
void cp_hooks__mute_start(struct cp_thread *t)
{
	t->mute_fn = 0;
	t->mute_depth = 0;
	t->mute_kind = CP_MUTE_OUTSIDE_START;
	barrier();
	t->busy = CP_MUTED;
}

/* After the frames above f were popped: outside every start function, wait for one. */
static inline CP_NOINSTR void after_pop(struct cp_thread *t)
{
	if (unlikely(cp_filter.start) && t->cct.top == t->cct.stack->f && !t->unfiltered)
		cp_hooks__mute_start(t);
	else
		t->busy = 0;
}

/*
 * A call begins while the thread is muted: count it, or start recording at
 * a start function.  A sled's mute (mute_sp has CP_SP_SLED) ends at the
 * muting call's own return, which its stub shows: no activation count.
 */
static CP_NOINSTR int muted_enter(struct cp_thread *t, uintptr_t fn, uintptr_t site, uintptr_t sp)
{
	struct cp_node *n;

	if (t->mute_kind != CP_MUTE_OUTSIDE_START) {
		t->mute_depth += fn == t->mute_fn && !(t->mute_sp & CP_SP_SLED);
		t->unrecorded[t->mute_kind]++;
		return ENTER_NONE;
	}
	if (!(cp_filter__classify(fn) & CP_FF_START) ||
	    (t->cct.top == t->cct.limit && cp_thread__grow_stack(t))) {
		t->unrecorded[CP_MUTE_OUTSIDE_START]++;
		return ENTER_NONE;
	}
	t->busy = 1;
	barrier();
	offcpu_check(t);
	n = cp_thread__child(t, t->cct.top->node, fn, site);
	/* Its exit, and only that one, misses the fast path: it mutes the thread again. */
	push_by_flags(t, n, fn | CP_FN_START_BIT, sp);
	barrier();
	t->busy = 0;
	return ENTER_FRAME;
}

/* A call returns while the thread is muted (a sled's: sp is its slot - 16, fn 0). */
static inline CP_NOINSTR void muted_exit(struct cp_thread *t, uintptr_t fn, uintptr_t sp)
{
	if (t->mute_kind == CP_MUTE_OUTSIDE_START)
		return;
	if (sp ? (t->mute_sp & ~CP_SP_FLAGS) == sp : fn == t->mute_fn && !--t->mute_depth) {
		barrier();
		t->busy = 0;
	}
}

/*
 * A longjmp (interpose.c) to stack pointer target closed the frames below
 * it; was is the thread's busy before.  A muted call that was abandoned
 * unmutes the thread; a --start recording left with no frame waits again.
 */
int cp_hooks__after_unwind(struct cp_thread *t, int was, uintptr_t target)
{
	if (was == CP_MUTED && (t->mute_kind == CP_MUTE_OUTSIDE_START || t->mute_sp + 16 >= target))
		return CP_MUTED;
	if (cp_filter.start && t->cct.top == t->cct.stack->f && !t->unfiltered) {
		cp_hooks__mute_start(t);
		return CP_MUTED;
	}
	return 0;
}

/* The context found for a call is not an ordinary one (struct cp_node.flags); busy is held. */
static __attribute__((noinline, cold)) CP_NOINSTR int enter_marked(struct cp_thread *t,
								    struct cp_node *n, uintptr_t fn,
								    uintptr_t sp)
{
	n->calls++;
	if (n->flags & CP_NF_TREE) {
		mute(t, fn, sp, CP_MUTE_TREE, 0);
		return ENTER_MUTED;
	}
	barrier();
	t->busy = 0;
	return ENTER_NONE;
}

static __attribute__((noinline, cold)) CP_NOINSTR int enter_slow(struct cp_thread *t, uintptr_t fn,
								  uintptr_t site, uintptr_t sp)
{
	int saved_errno = errno, ret = ENTER_NONE;
	struct cp_node *n;

	if (!t) {
		if (cp_session.state == CP_STATE_DONE)
			goto out;
		t = cp_thread__setup(); /* and its seeds, under callprof attach */
		if (!t)
			goto out;
	} else if (!cp_gate__live()) {
		goto out; /* a clone child: t is its parent's (control.c) */
	}
	if (t->busy == CP_MUTED) {
		ret = muted_enter(t, fn, site, sp);
		goto out;
	}
	t = slow_begin(t);
	if (!t)
		goto out;
	if ((cp_gate & CP_GATE_PAUSED) && !t->unfiltered) {
		mute(t, fn, sp, CP_MUTE_PAUSED, 1);
		ret = ENTER_MUTED;
		goto out;
	}
	if (t->cct.top == t->cct.limit && cp_filter.max_depth &&
	    (uint64_t)(t->cct.top - t->cct.stack->f) >= cp_filter.max_depth && !t->unfiltered) {
		mute(t, fn, sp, CP_MUTE_DEPTH, 1);
		ret = ENTER_MUTED;
		goto out;
	}
	if (t->cct.top == t->cct.limit && cp_thread__grow_stack(t)) {
		/*
		 * No memory for a deeper stack.  Dropping just this call would
		 * let its exit pair with an older activation of the same
		 * function, so the thread stops recording altogether: busy
		 * stays set, every later event is counted as lost, and the
		 * dump closes the frames still open.
		 */
		t->lost_events++;
		t->flags |= CP_THREAD_TRUNCATED;
		cp_warn_once("out of memory for the shadow stack: stopped recording a thread");
		goto out;
	}
	offcpu_check(t);
	n = cp_thread__child(t, t->cct.top->node, fn, site);
	if (unlikely(n->flags & ~CP_NF_UNTIMED)) {
		ret = enter_marked(t, n, fn, sp);
		goto out;
	}
	push_by_flags(t, n, fn, sp);
	barrier();
	t->busy = 0;
	ret = ENTER_FRAME;
out:
	errno = saved_errno;
	return ret;
}

/*
 * May the exit of a call from site close frame f (its function's) and
 * the frames above it?  A seeded frame (callprof attach) was rebuilt by
 * unwinding, and a call the unwinding left out may have an older
 * activation of its function on the stack: its exit must not take that
 * one for its own, closing the calls between as if a longjmp had skipped
 * them.  Both pass the hooks their return address (call_site): a seeded
 * frame's is its node's (0 where the unwinding did not reach its caller).
 */
static inline CP_NOINSTR int may_close(const struct cp_frame *f, uintptr_t site)
{
	return !(f->fn & CP_FN_SEED_BIT) || !f->node->site || f->node->site == site;
}

/*
 * The exit does not match the innermost open call.  Either frames were
 * skipped (longjmp, an exception through code without exit hooks): then the
 * matching frame is further down and the frames above it are closed now;
 * or no open frame matches (the enter was not seen, or a seeded frame is
 * another call's: may_close): count and ignore.  Also here: exits while
 * muted, of excluded functions (they have no frame), of a start
 * function's outermost frame and of seeded frames.
 */
/*
 * A sled's exit (sp = its slot - 16, fn and site 0) matches frames by
 * slot: the top frame with that slot is closed, with every frame below it
 * sharing the slot (tail calls from one sledded function to another); a
 * slot found deeper closes the frames above it (they were unwound without
 * an exit); a slot not found is an unpaired exit.
 */
static __attribute__((noinline, cold)) CP_NOINSTR void exit_slow(struct cp_thread *t, uintptr_t fn,
								  uintptr_t site, uintptr_t sp)
{
	uint64_t now = now_ticks();
	struct cp_frame *f, *base;

	/* Attached: a thread's first hook may be the exit of a call open at the attach. */
	if (!t && cp_attach.area && cp_session.state == CP_STATE_ON) {
		int saved_errno = errno;

		t = cp_thread__setup(); /* and its seeds */
		now = now_ticks();
		errno = saved_errno;
	}
	if (!t || !cp_gate__live())
		return;
	if (t->busy == CP_MUTED) {
		muted_exit(t, fn, sp);
		return;
	}
	if (t->busy) {
		t->lost_events++;
		return;
	}
	t->busy = 1;
	barrier();
	offcpu_check(t);
	base = t->cct.stack->f;
	if (!sp && cp_filter.active && !t->unfiltered && (cp_filter__classify(fn) & CP_FF_EXCLUDE)) {
		barrier();
		t->busy = 0;
		return;
	}
	if (sp) {
		for (f = t->cct.top; f > base && (f->sp & ~CP_SP_FLAGS) != sp; f--)
			;
		if (f > base) {
			/* Frames above f were skipped; f and those below it on its slot return now. */
			if (f < t->cct.top)
				pop_through(t, f, now);
			else
				pop(t, f, now);
			while (t->cct.top > base && (t->cct.top->sp & ~CP_SP_FLAGS) == sp)
				pop(t, t->cct.top, now);
			barrier();
			after_pop(t);
			return;
		}
	} else {
		for (f = t->cct.top; f > base; f--) {
			uintptr_t ffn = f->fn & ~(uintptr_t)CP_FN_SEED_BIT;

			if (ffn == fn || ffn == (fn | CP_FN_START_BIT))
				break;
		}
	}
	if (f == base || (!sp && !may_close(f, site)))
		t->unpaired_exits++;
	else
		pop_through(t, f, now);
	barrier();
	after_pop(t);
}

/*
 * The entry of both builds: fn called from site (its return address), sp
 * the hook's frame address or a sled's slot - 16 | CP_SP_SLED.  Returns
 * what it did (enum enter_result); the hook ignores it.
 */
static inline __attribute__((always_inline)) CP_NOINSTR int enter(struct cp_thread *t, uintptr_t fn,
								    uintptr_t site, uintptr_t sp)
{
	struct cp_node *p, *n;

	if (unlikely(!t || t->busy || t->cct.top == t->cct.limit || cp_gate != CP_GATE_LIVE ||
		     cpu_pending(t)))
		return enter_slow(t, fn, site, sp);
	t->busy = 1;
	barrier();
	fast_offcpu_check(t);
	p = t->cct.top->node;
	n = p->cache;
	if (unlikely(!n || n->fn != fn || n->site != site)) {
		n = p->cache2;
		if (unlikely(!n || n->fn != fn || n->site != site))
			n = cp_thread__child(t, p, fn, site);
	}
	if (unlikely(n->flags)) {
		if (n->flags != CP_NF_UNTIMED)
			return enter_marked(t, n, fn, sp);
		push_untimed(t, n, fn, sp);
	} else {
		push(t, n, fn, sp);
	}
	barrier();
	t->busy = 0;
	return ENTER_FRAME;
}

CP_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	enter(cp_self, (uintptr_t)fn, (uintptr_t)site, (uintptr_t)__builtin_frame_address(0));
}

/*
 * The exit looks at the frame before it reads the clock: a count-only
 * frame needs no clock read.  The few loads this puts inside the callee's
 * interval are part of what calibration measures ("inside").
 */
/*
 * The fast exit's end, for the hook and the stub alike: f, the top frame,
 * is the returning call's.  A count-only frame (--budget) is popped
 * without a clock read.
 */
static inline CP_NOINSTR void exit_top(struct cp_thread *t, struct cp_frame *f)
{
	uint64_t now;

#if CP_HOOK_MODE == HOOKS_TIMING
	if (unlikely(f->start == CP_UNTIMED)) {
		t->busy = 1;
		barrier();
		offcpu_check(t);
		cp_cct__pop_frame(&t->cct, f);
		t->busy = 0;
		return;
	}
#endif
	now = now_ticks();
	t->busy = 1;
	barrier();
	fast_offcpu_check_at(t, now);
	pop(t, f, now);
	barrier();
	t->busy = 0;
}

CP_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
	struct cp_thread *t = cp_self;
	struct cp_frame *f;

	if (unlikely(!t || t->busy || !cp_gate__live() || cpu_pending(t))) {
		exit_slow(t, (uintptr_t)fn, (uintptr_t)site, 0);
		return;
	}
	f = t->cct.top;
	if (unlikely(f->fn != (uintptr_t)fn)) {
		exit_slow(t, (uintptr_t)fn, (uintptr_t)site, 0);
		return;
	}
	exit_top(t, f);
}

/*
 * The sled entry's C half (sleds-tramp.S): the function whose body is body
 * (its sled + 5; fn = body - back) is entered, its return address in
 * *slot.  A call the runtime records goes on through the stub for its
 * node's (site, body), cached in the node: the stub calls the body, so the
 * slot holds the stub's return point while the call runs, and the body's
 * ret is predicted.  The frame is marked hooked before (a give-back in
 * between finds the slot not yet a stub, and leaves it).  A slot already
 * holding a stub is a tail call from a sledded function: the real return
 * address is the stub's, the slot stays, and the frame shares it.  A call
 * not recorded goes straight to its body: only its entry costs.
 */
static __attribute__((noinline, cold)) CP_NOINSTR uintptr_t stub_slow(struct cp_node *n, uintptr_t site,
								       uintptr_t body, struct cp_thread *t)
{
	uintptr_t s = cp_stubs__get(site, body);

	if (s && n->site == site && n != &t->cct.lost)
		n->stub = s;
	return s;
}

/*
 * A sled frame on top whose slot is at or above a new call's was unwound
 * without its return being seen: an exception's cleanups run (the throw
 * gave its return address back, libcalls.c) and call a destructor from a
 * frame further out, before any catch closes what was unwound.  Close
 * the frames whose slot is below target, as a jump there would.  Busy or
 * muted threads are left as they are: their next exit reconciles.
 */
static __attribute__((noinline, cold)) CP_NOINSTR void sled_unwound(struct cp_thread *t,
								   uintptr_t target)
{
	struct cp_frame *f;
	uint64_t before, unseen = 0;

	if (t->busy || !cp_gate__live())
		return;
	t->busy = 1;
	barrier();
	/* The frames unwind_to will close whose returns are unseen by design: not abandoned. */
	for (f = t->cct.top; f > t->cct.stack->f && f->sp + 16 < target; f--)
		unseen += unseen_return(f);
	before = t->reconciled;
	cp_thread__unwind_to(t, target, now_ticks());
	if (t->reconciled - before >= unseen)
		t->reconciled -= unseen;
	barrier();
	t->busy = cp_hooks__after_unwind(t, 0, target);
}

/*
 * A call open at attach (seeded: its return address was never replaced)
 * at slot, under the frames that returned unseen above it, and nothing in
 * the slot says whether it returned and its caller called again from the
 * same place, or it jumped to fn (a tail call: gcc and clang at -O2 end
 * a() { b(); b(); } with `jmp b`, after the first b returned unseen too).
 * The caller's code says it: when the call that the seed's return address
 * follows is a direct call of the seed's own function and fn is another,
 * fn's entry is the seed's tail call, which nests under it and, its return
 * seen through the stub, closes both.  Otherwise (a call through a
 * register, the function called again) the seed returned.  Cold: the fast
 * path leaves any unhooked top frame to the full one.
 */
static __attribute__((noinline, cold)) CP_NOINSTR int seed_tail_call(const struct cp_thread *t,
								    uintptr_t slot, uintptr_t site,
								    uintptr_t fn)
{
	const struct cp_frame *f = t->cct.top;
	const uint8_t *call = (const uint8_t *)site - 5;
	uintptr_t called;
	int32_t rel;

	while (f > t->cct.stack->f && (f->sp & ~(uintptr_t)CP_SP_FLAGS) + 16 < slot)
		f--;
	if (f == t->cct.stack->f || (f->sp & ~(uintptr_t)CP_SP_FLAGS) + 16 != slot ||
	    !unseen_return(f))
		return 0;
	called = f->fn & ~(uintptr_t)CP_FN_SEED_BIT;
	/* Read within the return address's page: a shorter call may start a mapping. */
	if (fn == called || (site & 4095) < 5 || call[0] != 0xe8)
		return 0;
	memcpy(&rel, call + 1, 4);
	return site + (uintptr_t)(intptr_t)rel == called;
}

struct cp_sled_go cp_sled__enter(uintptr_t body, uintptr_t *slot, uintptr_t back)
{
	uintptr_t fn = body - back, site = *slot, sp = ((uintptr_t)slot - 16) | CP_SP_SLED, s;
	struct cp_sled_go go = { body, 0 };
	struct cp_thread *t = cp_self;
	struct cp_frame *f;
	int tail = cp_stubs__is(site), r;

	if (unlikely(tail))
		site = cp_stubs__target(site);
	/*
	 * A thread's first entry sets it up here, not in enter(): under
	 * callprof attach that pushes the calls it had open, whose returns
	 * are unseen, and the slot rule below must see them (a call returned
	 * since, its caller calling again, was nested in itself: t0513).
	 */
	if (unlikely(!t) && cp_session.state != CP_STATE_DONE)
		t = cp_thread__setup();
	if (likely(t)) {
		/*
		 * The top frame's slot, if a sled's: below the new one's, or
		 * the same slot without a stub in it (not a tail call, but
		 * from a call open at attach: seed_tail_call), it has
		 * returned unseen.
		 */
		uintptr_t top = t->cct.top->sp, top_slot = (top & ~CP_SP_FLAGS) + 16;

		if (unlikely((top & CP_SP_SLED) &&
			     (top_slot < (uintptr_t)slot || (top_slot == (uintptr_t)slot && !tail)))) {
			uintptr_t to = (uintptr_t)slot + (tail ? 0 : 8);

			if (!tail && seed_tail_call(t, (uintptr_t)slot, site, body - back))
				to = (uintptr_t)slot; /* the seed at this slot stays open */
			if (top_slot < to)
				sled_unwound(t, to);
		}
	}
	r = enter(t, fn, site, sp);
	if (likely(r == ENTER_FRAME)) {
		t = cp_self;
		f = t->cct.top;
		f->sp = sp | CP_SP_HOOKED;
		if (unlikely(tail))
			return go;
		s = f->node->stub;
		if (unlikely(!s)) {
			int saved_errno = errno;

			s = stub_slow(f->node, site, body, t);
			errno = saved_errno;
			if (!s) {
				f->sp = sp;
				return go;
			}
		}
		go.target = s + CP_STUB_GO;
		go.pop = 1;
	} else if (r == ENTER_MUTED && !tail) {
		/* Its return unmutes (muted_exit): the stub shows it. */
		int saved_errno = errno;

		s = cp_stubs__get(site, body);
		errno = saved_errno;
		if (s) {
			go.target = s + CP_STUB_GO;
			go.pop = 1;
		}
	}
	return go;
}

/*
 * The stubs' C half: a hooked call returned; slot is where its return
 * address was.  The fast path closes the top frame when it is that call's;
 * the rest (frames sharing the slot, frames skipped, muted, a start
 * function's frame, a seeded one) is exit_slow's.  Where to return is the
 * stub's business, never the shadow stack's.
 */
void cp_sled__exit(uintptr_t *slot)
{
	uintptr_t sp = (uintptr_t)slot - 16;
	struct cp_thread *t = cp_self;
	struct cp_frame *f;

	if (unlikely(!t || t->busy || !cp_gate__live() || cpu_pending(t))) {
		exit_slow(t, 0, 0, sp);
		return;
	}
	f = t->cct.top;
	if (unlikely((f->sp & ~CP_SP_FLAGS) != sp || (f->fn >> 62) ||
		     ((f - 1)->sp & ~CP_SP_FLAGS) == sp)) {
		exit_slow(t, 0, 0, sp);
		return;
	}
	exit_top(t, f);
}

/*
 * The sled trampolines' fast paths (the thunks and stubs of sleds.c jump
 * to them), for the modes whose fast paths make no call (cpu, counting).
 * They keep every register they were given but r11 (the entry) or but
 * the free ones of a return (the exit: rdi rsi rcx r8-r11), touch no
 * vector or x87 register, and jump on to the full path (cp_sled_entry,
 * cp_sled_ret_common) with everything as they found it when they cannot
 * do a call themselves.  tools/check-layering (check 8) disassembles them
 * in every runtime library: no call (but the entry's to cp_sled__find),
 * no vector register, no jump out but to the full path or through r11.
 *
 * Entry: jumped to by the thunk with rsp = the slot (R in it) and r11 =
 * the body.  A call recorded in a context seen before, with its stub
 * made, is pushed hooked, R comes off the stack and it jumps to the
 * stub's go (the stub calls the body).
 */
#if CP_HOOK_MODE == HOOKS_CPU || CP_HOOK_MODE == HOOKS_COUNTING
/*
 * The entry's table lookup, out of line: a leaf of its own (check 8), so
 * that the registers its hash and probe need are saved when it runs (a
 * context not among its parent's last two), not on every entry: that
 * was five more pushes and pops per call, 13 ns of fib's 38 (make bench).
 */
struct cp_node *cp_sled__find(struct cp_cct *c, struct cp_node *p, uintptr_t fn, uintptr_t site);
/* Called by the assembly below only (hence extern and used). */
CP_HIDDEN __attribute__((noinline)) SLED_LEAF struct cp_node *cp_sled__find(struct cp_cct *c,
									     struct cp_node *p,
									     uintptr_t fn, uintptr_t site)
{
	return cp_cct__find(c, p, fn, site);
}

/*
 * The fast paths themselves are assembly: compiled from C as leaves that
 * keep every register (no_caller_saved_registers), the entry saved and
 * restored nine registers and the exit five on every call (bench/sled-
 * shapes put such leaves at 7 ns of a bare path's 13); written out, the
 * entry saves the five it uses and the exit none.  They were called by
 * the thunk and the stub, which saved two registers around the call and
 * tested what it returned; now the thunk and the stub jump to them, and
 * they jump on (docs/internals/sleds.md has the figures).  In order:
 *
 * entry (rsp = the slot, r11 = the body; to the full path having changed
 * nothing, or to the stub's go):
 *   t = cp_self; none, busy, a full shadow stack, the gate not exactly
 *   live, or (cpu) switch or sample records waiting: full path.  A sled
 *   frame on top whose slot is below this one, or, with no sled frame on
 *   top, any return address in the stub area: full path (which tells a
 *   stub exactly).  A sled frame on top on this very slot is a tail call
 *   when that frame is hooked there (sp exactly (slot - 16) | 5) and the
 *   slot holds a stub's return point; the site is then the stub's R; else
 *   full path.  fn = the body - back.  Busy; the node among the parent's
 *   last two children, else the memo's entry for the call when it is
 *   the call's record (cp_cct__find's first step, r8 and r9 saved for
 *   it), else cp_sled__find (a leaf that keeps every register but rax);
 *   none or flags set: not busy, full path.  Count the
 *   call, fill the frame above top (node, fn, start 0, sp = (slot - 16) |
 *   sled | hooked), publish it, not busy; a tail call then jumps to the
 *   body (the slot keeps the caller's stub, whose return closes both);
 *   any other call needs the node's stub (none yet: full path), takes R
 *   off the stack and goes to the stub + CP_STUB_GO.
 * exit (rsp = the slot + 8, r11 = the stub; to the full path having
 * changed nothing, or to R):
 *   t; none, busy, the gate not live, or records waiting: full path.  The
 *   top frame's sp not exactly this slot's | sled | hooked: full path.
 *   The frame seeded: full path; the frame below on this slot exactly so
 *   (the caller of a tail call) returns too, and the same checks apply to
 *   it; one on the slot with other flags: full path.  Pop them all (one
 *   store, so busy is not needed: a signal finds the frames whole or
 *   gone), push R (the stub's), ret.
 *
 * The offsets they use are asserted against the structures here.
 */
#define SF_T_BUSY 0
#define SF_T_SWHEAD 8
#define SF_T_SWSEEN 16
#define SF_T_TOP 24
#define SF_T_LIMIT 32
#define SF_F_NODE 0
#define SF_F_FN 8
#define SF_F_START 16
#define SF_F_SP 24
#define SF_F_SIZE 32
#define SF_N_FN 0
#define SF_N_SITE 8
#define SF_N_CACHE 16
#define SF_N_CACHE2 24
#define SF_N_CALLS 48
#define SF_N_FLAGS 56
#define SF_N_STUB 120
#define SF_N_PARENT 32
#define SF_N_CANON 40
#define SF_T_HTAB 40
#define SF_T_NOSITES 96
#define SF_T_LOST 232
#define SF_H_MEMO 32
#define SF_MEMO_SHIFT 55
#define SF_STUBS_RX 0
#define SF_STUBS_USED 16
_Static_assert(offsetof(struct cp_thread, busy) == SF_T_BUSY && sizeof(((struct cp_thread *)0)->busy) == 4 &&
		       offsetof(struct cp_thread, sw_head) == SF_T_SWHEAD &&
		       offsetof(struct cp_thread, sw_seen) == SF_T_SWSEEN &&
		       offsetof(struct cp_thread, cct.top) == SF_T_TOP &&
		       offsetof(struct cp_thread, cct.limit) == SF_T_LIMIT &&
		       offsetof(struct cp_thread, cct.htab) == SF_T_HTAB &&
		       offsetof(struct cp_thread, cct.nosites) == SF_T_NOSITES &&
		       sizeof(((struct cp_thread *)0)->cct.nosites) == 4 &&
		       offsetof(struct cp_thread, cct.lost) == SF_T_LOST,
	       "sled fast paths: struct cp_thread moved");
_Static_assert(offsetof(struct cp_frame, node) == SF_F_NODE && offsetof(struct cp_frame, fn) == SF_F_FN &&
		       offsetof(struct cp_frame, start) == SF_F_START &&
		       offsetof(struct cp_frame, sp) == SF_F_SP && sizeof(struct cp_frame) == SF_F_SIZE,
	       "sled fast paths: struct cp_frame moved");
_Static_assert(offsetof(struct cp_node, fn) == SF_N_FN && offsetof(struct cp_node, site) == SF_N_SITE &&
		       offsetof(struct cp_node, cache) == SF_N_CACHE &&
		       offsetof(struct cp_node, cache2) == SF_N_CACHE2 &&
		       offsetof(struct cp_node, calls) == SF_N_CALLS &&
		       offsetof(struct cp_node, flags) == SF_N_FLAGS &&
		       sizeof(((struct cp_node *)0)->flags) == 4 &&
		       offsetof(struct cp_node, stub) == SF_N_STUB &&
		       offsetof(struct cp_node, parent) == SF_N_PARENT &&
		       offsetof(struct cp_node, canon) == SF_N_CANON,
	       "sled fast paths: struct cp_node moved");
_Static_assert(offsetof(struct cp_stub_area, rx) == SF_STUBS_RX &&
		       offsetof(struct cp_stub_area, used) == SF_STUBS_USED,
	       "sled fast paths: struct cp_stub_area moved");
_Static_assert(offsetof(struct cp_htab, memo) == SF_H_MEMO && SF_MEMO_SHIFT == 64 - CP_MEMO_BITS,
	       "sled fast paths: the memo moved");
_Static_assert(CP_SP_FLAGS == 7 && CP_SP_SLED == 4 && CP_SP_HOOKED == 1 && CP_GATE_LIVE == 1 &&
		       CP_FN_SEED_BIT == 1ull << 62 && CP_STUB_SIZE == 64,
	       "sled fast paths: a flag moved");

#define SF_S_(x) #x
#define SF_S(x) SF_S_(x)
#if CP_HOOK_MODE == HOOKS_CPU
/* Switch or sample records waiting (cpu_pending): to the label given. */
#define SF_PENDING(t, tmp, label)                                                                  \
	"	mov " SF_S(SF_T_SWHEAD) "(" t "), " tmp "\n"                                         \
	"	mov (" tmp "), " tmp "\n"                                                            \
	"	cmp " SF_S(SF_T_SWSEEN) "(" t "), " tmp "\n"                                         \
	"	jne " label "\n"
#else
#define SF_PENDING(t, tmp, label) ""
#endif

/* t = cp_self in rsi (tmp changed); none, or busy: to the label given. */
#define SF_THREAD(tmp, label)                                                                      \
	"	mov cp_self@gottpoff(%rip), " tmp "\n"                                               \
	"	mov %fs:(" tmp "), %rsi\n"                                                           \
	"	test %rsi, %rsi\n"                                                                   \
	"	jz " label "\n"                                                                      \
	"	cmpl $0, " SF_S(SF_T_BUSY) "(%rsi)\n"                                                \
	"	jne " label "\n"

/* The five registers the entry uses, saved and restored (the slot is then at 40(%rsp)). */
#define SF_SAVE                                                                                    \
	"	push %rdi\n	.cfi_adjust_cfa_offset 8\n"                                        \
	"	push %rax\n	.cfi_adjust_cfa_offset 8\n"                                        \
	"	push %rsi\n	.cfi_adjust_cfa_offset 8\n"                                        \
	"	push %rdx\n	.cfi_adjust_cfa_offset 8\n"                                        \
	"	push %rcx\n	.cfi_adjust_cfa_offset 8\n"
#define SF_RESTORE                                                                                 \
	"	pop %rcx\n	.cfi_adjust_cfa_offset -8\n"                                       \
	"	pop %rdx\n	.cfi_adjust_cfa_offset -8\n"                                       \
	"	pop %rsi\n	.cfi_adjust_cfa_offset -8\n"                                       \
	"	pop %rax\n	.cfi_adjust_cfa_offset -8\n"                                       \
	"	pop %rdi\n	.cfi_adjust_cfa_offset -8\n"

/*
 * SF_ENTER name, back, full: one entry fast path (see above), jumped to by
 * the thunk with rsp = the slot and r11 = the body; five registers saved,
 * the slot at 40(%rsp).  Top-level asm keeps the compiler's section as it
 * was (.pushsection, .popsection).
 */
__asm__(".macro SF_ENTER name, back, full\n"
	"	.pushsection .text\n"
	"	.globl \\name\n"
	"	.hidden \\name\n"
	"	.type \\name, @function\n"
	"	.p2align 4\n"
	"\\name:\n"
	"	.cfi_startproc\n" /* R on top: unwound, this is the function's caller */
	SF_SAVE
	SF_THREAD("%rax", "8f")
	"	mov " SF_S(SF_T_TOP) "(%rsi), %rdx\n" /* the top frame */
	"	cmp " SF_S(SF_T_LIMIT) "(%rsi), %rdx\n"
	"	je 8f\n"
	"	cmpl $1, cp_gate_page(%rip)\n"
	"	jne 8f\n"
	SF_PENDING("%rsi", "%rax", "8f")
	"	lea 40(%rsp), %rdi\n" /* the slot */
	"	mov " SF_S(SF_F_SP) "(%rdx), %rax\n"
	"	test $4, %al\n" /* a sled frame on top */
	"	jz 1f\n"
	"	and $-8, %rax\n"
	"	add $16, %rax\n"
	"	cmp %rdi, %rax\n" /* its slot below this one: slow; the same: a tail call? */
	"	jbe 6f\n"
	"	mov (%rdi), %rdi\n" /* the return address, the site */
	"2:	lea -\\back(%r11), %rax\n" /* fn */
	"	movl $1, " SF_S(SF_T_BUSY) "(%rsi)\n"
	"	mov " SF_S(SF_F_NODE) "(%rdx), %rdx\n" /* the parent */
	"	mov " SF_S(SF_N_CACHE) "(%rdx), %rcx\n"
	"	test %rcx, %rcx\n"
	"	jz 3f\n"
	"	cmp " SF_S(SF_N_FN) "(%rcx), %rax\n"
	"	jne 3f\n"
	"	cmp " SF_S(SF_N_SITE) "(%rcx), %rdi\n"
	"	je 4f\n"
	"3:	mov " SF_S(SF_N_CACHE2) "(%rdx), %rcx\n"
	"	test %rcx, %rcx\n"
	"	jz 5f\n"
	"	cmp " SF_S(SF_N_FN) "(%rcx), %rax\n"
	"	jne 5f\n"
	"	cmp " SF_S(SF_N_SITE) "(%rcx), %rdi\n"
	"	je 4f\n"
	/*
	 * Not among the last two: the table's memo first, as cp_cct__find
	 * has it (a function calling four or six others in turn, as a
	 * straight run of calls in a loop does, never finds them among its
	 * last two: 58% of the Lua sort's 97 million calls), without the
	 * call and the eight pushes of cp_sled__find.  r8 and r9 saved for
	 * it; from the lost node, or without site records: the table.
	 */
	"5:	cmpl $0, " SF_S(SF_T_NOSITES) "(%rsi)\n"
	"	jne 10f\n"
	"	push %r8\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	push %r9\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	lea " SF_S(SF_T_LOST) "(%rsi), %r8\n"
	"	cmp %r8, %rdx\n"
	"	je 11f\n"
	"	mov " SF_S(SF_N_CANON) "(%rdx), %rcx\n" /* the parent */
	"	mov %rax, %r8\n" /* (parent ^ fn << 7 ^ site) * golden >> (64 - bits) */
	"	shl $7, %r8\n"
	"	xor %rdi, %r8\n"
	"	xor %rcx, %r8\n"
	"	movabs $" SF_S(CP_MEMO_MUL) ", %r9\n"
	"	imul %r9, %r8\n"
	"	shr $" SF_S(SF_MEMO_SHIFT) ", %r8\n"
	"	mov " SF_S(SF_T_HTAB) "(%rsi), %r9\n"
	"	mov " SF_S(SF_H_MEMO) "(%r9,%r8,8), %r8\n"
	"	test %r8, %r8\n"
	"	jz 11f\n"
	"	cmp " SF_S(SF_N_FN) "(%r8), %rax\n"
	"	jne 11f\n"
	"	cmp " SF_S(SF_N_PARENT) "(%r8), %rcx\n"
	"	jne 11f\n"
	"	cmp " SF_S(SF_N_SITE) "(%r8), %rdi\n"
	"	jne 11f\n"
	"	mov " SF_S(SF_N_CACHE) "(%rdx), %r9\n" /* cp_cct__remember */
	"	cmp %r9, %r8\n"
	"	je 12f\n"
	"	mov %r9, " SF_S(SF_N_CACHE2) "(%rdx)\n"
	"	mov %r8, " SF_S(SF_N_CACHE) "(%rdx)\n"
	"12:	mov %r8, %rcx\n"
	"	pop %r9\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	pop %r8\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmp 4f\n"
	"	.cfi_adjust_cfa_offset 16\n"
	"11:	pop %r9\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	pop %r8\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"10:	push %rsi\n" /* the table */
	"	.cfi_adjust_cfa_offset 8\n"
	"	push %rax\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	mov %rdi, %rcx\n"
	"	lea " SF_S(SF_T_TOP) "(%rsi), %rdi\n" /* &t->cct */
	"	mov %rdx, %rsi\n"
	"	mov %rax, %rdx\n"
	"	call cp_sled__find\n"
	"	mov %rax, %rcx\n"
	"	pop %rax\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	pop %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	test %rcx, %rcx\n"
	"	jz 7f\n"
	"4:	cmpl $0, " SF_S(SF_N_FLAGS) "(%rcx)\n"
	"	jne 7f\n"
	"	mov " SF_S(SF_T_TOP) "(%rsi), %rdi\n"
	"	lea 40-16(%rsp), %rdx\n"
	"	or $5, %rdx\n" /* this call's frame sp: slot - 16 | sled | hooked */
	"	cmp " SF_S(SF_F_SP) "(%rdi), %rdx\n" /* the top's too: a tail call (checked at 6) */
	"	je 9f\n"
	"	mov " SF_S(SF_N_STUB) "(%rcx), %rdx\n"
	"	test %rdx, %rdx\n"
	"	jz 7f\n"
	"	addq $1, " SF_S(SF_N_CALLS) "(%rcx)\n"
	"	add $" SF_S(SF_F_SIZE) ", %rdi\n" /* the frame above top */
	"	mov %rcx, " SF_S(SF_F_NODE) "(%rdi)\n"
	"	mov %rax, " SF_S(SF_F_FN) "(%rdi)\n"
	"	lea 40-16(%rsp), %rax\n"
	"	or $5, %rax\n" /* sled | hooked */
	"	mov %rax, " SF_S(SF_F_SP) "(%rdi)\n"
	"	movq $0, " SF_S(SF_F_START) "(%rdi)\n"
	"	mov %rdi, " SF_S(SF_T_TOP) "(%rsi)\n" /* published */
	"	movl $0, " SF_S(SF_T_BUSY) "(%rsi)\n"
	"	lea " SF_S(CP_STUB_GO) "(%rdx), %r11\n"
	SF_RESTORE
	"	lea 8(%rsp), %rsp\n" /* R off the stack: the stub has it */
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmp *%r11\n" /* the stub, which calls the body */
	"	.cfi_adjust_cfa_offset 48\n"
	/*
	 * A tail call from a sledded function: its frame shares the slot,
	 * which keeps the caller's stub (its return closes both), and the
	 * body runs with the stack as the sled found it (rdx: the frame sp).
	 */
	"9:	addq $1, " SF_S(SF_N_CALLS) "(%rcx)\n"
	"	add $" SF_S(SF_F_SIZE) ", %rdi\n"
	"	mov %rcx, " SF_S(SF_F_NODE) "(%rdi)\n"
	"	mov %rax, " SF_S(SF_F_FN) "(%rdi)\n"
	"	mov %rdx, " SF_S(SF_F_SP) "(%rdi)\n"
	"	movq $0, " SF_S(SF_F_START) "(%rdi)\n"
	"	mov %rdi, " SF_S(SF_T_TOP) "(%rsi)\n" /* published */
	"	movl $0, " SF_S(SF_T_BUSY) "(%rsi)\n"
	SF_RESTORE
	"	jmp *%r11\n" /* the body */
	"	.cfi_adjust_cfa_offset 40\n"
	/*
	 * The top frame's slot is this one: a tail call when that frame is
	 * hooked there, nothing else, and the slot holds a stub's return
	 * point (cp_stubs__is); the call's site is the stub's R.  Else the
	 * full path (the top's call returned unseen, or was given back).
	 */
	"6:	jne 8f\n"
	"	lea -16(%rdi), %rcx\n"
	"	or $5, %rcx\n"
	"	cmp " SF_S(SF_F_SP) "(%rdx), %rcx\n"
	"	jne 8f\n"
	"	mov (%rdi), %rdi\n"
	"	mov %rdi, %rax\n"
	"	sub cp_stubs+" SF_S(SF_STUBS_RX) "(%rip), %rax\n"
	"	cmp cp_stubs+" SF_S(SF_STUBS_USED) "(%rip), %rax\n"
	"	jae 8f\n"
	"	cmp $" SF_S(CP_STUB_SIZE) ", %rax\n"
	"	jb 8f\n"
	"	and $" SF_S(CP_STUB_SIZE) "-1, %eax\n"
	"	cmp $" SF_S(CP_STUB_RET) ", %eax\n"
	"	jne 8f\n"
	"	mov " SF_S(CP_STUB_R) "-" SF_S(CP_STUB_RET) "(%rdi), %rdi\n" /* R, the site */
	"	jmp 2b\n"
	/*
	 * No sled frame on top: a stub in the slot is a tail call (with a
	 * sled frame on top, its slot is this one, taken above).  Any
	 * return address in the stub area is a stub's: slow.
	 */
	"1:	mov (%rdi), %rdi\n"
	"	mov %rdi, %rax\n"
	"	sub cp_stubs+" SF_S(SF_STUBS_RX) "(%rip), %rax\n"
	"	cmp cp_stubs+" SF_S(SF_STUBS_USED) "(%rip), %rax\n"
	"	jae 2b\n"
	"	jmp 8f\n"
	"7:	movl $0, " SF_S(SF_T_BUSY) "(%rsi)\n"
	"8:\n"
	SF_RESTORE
	"	jmp \\full\n" /* r11 still the body */
	"	.cfi_endproc\n"
	"	.size \\name, . - \\name\n"
	"	.popsection\n"
	".endm\n"
	"SF_ENTER cp_sled__enter_fast, 5, cp_sled_entry\n"
	"SF_ENTER cp_sled__enter_fast_endbr, 9, cp_sled_entry_endbr\n"
	".purgem SF_ENTER\n");

/*
 * The exit fast path (see above), jumped to by the stub with rsp = the
 * slot + 8 (the body's ret popped it) and r11 = the stub.  A function's
 * return leaves rdi rsi rcx r8-r11 free (rax and rdx hold its value): it
 * saves nothing.  Its return address is the stub's R, not on the stack.
 */
__asm__("	.pushsection .text\n"
	"	.globl cp_sled__exit_fast\n"
	"	.hidden cp_sled__exit_fast\n"
	"	.type cp_sled__exit_fast, @function\n"
	"	.p2align 4\n"
	"cp_sled__exit_fast:\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined rip\n"
	SF_THREAD("%rcx", "8f")
	"	testl $1, cp_gate_page(%rip)\n"
	"	jz 8f\n"
	SF_PENDING("%rsi", "%rcx", "8f")
	"	lea -24(%rsp), %rdi\n" /* the frame's sp: the slot - 16 */
	"	lea 5(%rdi), %rcx\n" /* | sled | hooked, nothing else */
	"	mov " SF_S(SF_T_TOP) "(%rsi), %r8\n"
	"	cmp " SF_S(SF_F_SP) "(%r8), %rcx\n"
	"	jne 8f\n"
	"1:	mov " SF_S(SF_F_FN) "(%r8), %r9\n"
	"	shr $62, %r9\n" /* seeded (or its neighbour bit) */
	"	jnz 8f\n"
	"	sub $" SF_S(SF_F_SIZE) ", %r8\n"
	"	mov " SF_S(SF_F_SP) "(%r8), %r9\n"
	"	cmp %r9, %rcx\n" /* the frame below hooked on this slot: the caller of a tail */
	"	je 1b\n" /* call, which returns with it */
	"	and $-8, %r9\n"
	"	cmp %rdi, %r9\n" /* on the slot with other flags */
	"	je 8f\n"
	"	mov %r8, " SF_S(SF_T_TOP) "(%rsi)\n" /* popped: one store, no busy needed */
	"	pushq " SF_S(CP_STUB_R) "(%r11)\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_offset rip, -8\n"
	"	ret\n" /* to R, which the return stack buffer holds */
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_undefined rip\n"
	"8:	jmp cp_sled_ret_common\n"
	"	.cfi_endproc\n"
	"	.size cp_sled__exit_fast, . - cp_sled__exit_fast\n"
	"	.popsection\n");
#endif

/*
 * A signal handler starts: push a pseudo-frame for "<signal sig>" so that
 * the handler's calls nest under it, below the interrupted call.  Returns
 * the frame's depth (> 0) for cp_hooks__signal_leave, or 0 when nothing was
 * pushed (the run is then counted in lost_signals).
 *
 * A signal that interrupted a hook finds the thread's tree half-updated:
 * nothing may be added to it.  The handler's calls then go to the thread's
 * side tree, a private tree whose first level names the context the
 * signal interrupted (the node on top of the thread's stack); the dump
 * writes the side tree's nodes under those contexts, so the handler's calls
 * land where they would have.  *owner is set to the thread whose cp_self
 * was switched to its side tree, for cp_hooks__signal_leave to switch back.
 */
uint64_t cp_hooks__signal_enter(int sig, uintptr_t sp, struct cp_thread **owner)
{
	struct cp_thread *t = cp_self, *s;
	struct cp_node *n, *ctx;
	uint64_t depth = 0;

	*owner = NULL;
	if (t && !cp_gate__live())
		return 0; /* a clone child (control.c) */
	if (t && t->busy == CP_MUTED)
		return 0; /* the handler's calls are muted too */
	if (t && t->busy) {
		ctx = t->cct.top->node ? t->cct.top->node->canon : NULL;
		s = t->side;
		if (!s && !t->owner) {
			s = cp_thread__new();
			if (s) {
				s->owner = t;
				__atomic_store_n(&t->side, s, __ATOMIC_RELEASE);
			}
		}
		if (!s || s->busy || !ctx || (s->cct.top == s->cct.limit && cp_thread__grow_stack(s))) {
			t->lost_signals++;
			return 0;
		}
		s->busy = 1;
		barrier();
		n = cp_thread__child(s, &s->cct.root, (uintptr_t)ctx, 0);
		n = cp_thread__child(s, n, CP_FN_SIGNAL(sig), 0);
		push(s, n, CP_FN_SIGNAL(sig), sp);
		depth = (uint64_t)(s->cct.top - s->cct.stack->f);
		barrier();
		s->busy = 0;
		*owner = t;
		cp_self = s;
		return depth;
	}
	t = slow_begin(t);
	if (!t)
		return 0;
	if (t->cct.top == t->cct.limit && cp_filter.max_depth &&
	    (uint64_t)(t->cct.top - t->cct.stack->f) >= cp_filter.max_depth)
		goto out; /* below --max-depth: the handler's time stays in the node at depth N */
	if (t->cct.top == t->cct.limit && cp_thread__grow_stack(t)) {
		t->lost_signals++;
		goto out;
	}
	offcpu_check(t);
	n = cp_thread__child(t, t->cct.top->node, CP_FN_SIGNAL(sig), 0);
	push(t, n, CP_FN_SIGNAL(sig), sp);
	depth = (uint64_t)(t->cct.top - t->cct.stack->f);
out:
	barrier();
	t->busy = 0;
	return depth;
}

/*
 * The handler returns.  Frames it left open (it cannot normally) are
 * closed as reconciled; if its own frame is already gone (a longjmp out of
 * a nested handler closed it), there is nothing to do.
 */
void cp_hooks__signal_leave(int sig, uint64_t depth, struct cp_thread *owner)
{
	uint64_t now = now_ticks();
	struct cp_thread *t = cp_self;
	struct cp_frame *f;

	if (!depth || !t || t->busy)
		goto out;
	t->busy = 1;
	barrier();
	offcpu_check(t);
	f = t->cct.stack->f + depth;
	if (f <= t->cct.top && f->fn == CP_FN_SIGNAL(sig))
		pop_through(t, f, now);
	barrier();
	after_pop(t);
out:
	if (owner)
		cp_self = owner;
}

/*
 * A call that was open when callprof attach began (attach.c): entered as
 * any call, then its count moved to open_at_start, its start set to the
 * attach, and its frame marked seeded (CP_FN_SEED_BIT).  A marker
 * (excluded function) or a muted thread pushes no frame.
 */
void cp_hooks__seed(struct cp_thread *t, uintptr_t fn, uintptr_t site, uintptr_t sp,
		    uint64_t start)
{
	struct cp_frame *before = t->cct.top;

	enter_slow(t, fn, site, sp);
	if (t->cct.top == before + 1 && (t->cct.top->fn & ~(uintptr_t)CP_FN_START_BIT) == fn &&
	    t->cct.top->node != &t->cct.lost) {
		struct cp_node *n = t->cct.top->node;

		t->cct.top->fn |= CP_FN_SEED_BIT;
		n->calls--;
		n->open_at_start++;
#if CP_HOOK_MODE == HOOKS_TIMING
		/* Timed from the attach (the other modes' frames carry no start). */
		if (t->cct.top->start != CP_UNTIMED)
			t->cct.top->start = start;
#else
		(void)start;
#endif
	}
}

#else /* CP_HOOK_MODE == HOOKS_COVERAGE */

/* First call of fn in this thread (or no thread state yet): record it. */
static __attribute__((noinline, cold)) CP_NOINSTR void seen_slow(struct cp_thread *t, uintptr_t fn,
								  uintptr_t site)
{
	int saved_errno = errno;
	struct cp_node *n;

	t = slow_begin(t);
	if (!t)
		goto out;
	n = cp_thread__child(t, &t->cct.root, fn, site);
	if (n != &t->cct.lost)
		n->calls = 1;
	else
		n->calls++;
	t->seen[cp_seen_slot(fn)] = fn;
	barrier();
	t->busy = 0;
out:
	errno = saved_errno;
}

CP_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	struct cp_thread *t = cp_self;

	if (likely(t && t->seen[cp_seen_slot((uintptr_t)fn)] == (uintptr_t)fn))
		return;
	seen_slow(t, (uintptr_t)fn, (uintptr_t)site);
}

CP_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
}

/* Coverage: a sled's entry is the hook's; no return is ever replaced. */
struct cp_sled_go cp_sled__enter(uintptr_t body, uintptr_t *slot, uintptr_t back)
{
	struct cp_thread *t = cp_self;
	struct cp_sled_go go = { body, 0 };
	uintptr_t fn = body - back, site = *slot;

	if (likely(t && t->seen[cp_seen_slot(fn)] == fn))
		return go;
	if (cp_stubs__is(site))
		site = cp_stubs__target(site);
	seen_slow(t, fn, site);
	return go;
}

void cp_sled__exit(uintptr_t *slot)
{
}

/* Coverage: a handler that ran is recorded once, like a function. */
uint64_t cp_hooks__signal_enter(int sig, uintptr_t sp, struct cp_thread **owner)
{
	struct cp_thread *t = cp_self;

	*owner = NULL;
	if (t && !cp_gate__live())
		return 0; /* a clone child (control.c) */
	if (t && t->busy) {
		t->lost_signals++;
		return 0;
	}
	if (!(t && t->seen[cp_seen_slot(CP_FN_SIGNAL(sig))] == CP_FN_SIGNAL(sig)))
		seen_slow(t, CP_FN_SIGNAL(sig), 0);
	return 0;
}

void cp_hooks__signal_leave(int sig, uint64_t depth, struct cp_thread *owner)
{
}

/* Coverage has no frames: a call open at the attach is a function seen once it returns. */
void cp_hooks__seed(struct cp_thread *t, uintptr_t fn, uintptr_t site, uintptr_t sp,
		    uint64_t start)
{
}

/* Coverage has no shadow stack to mute: `record` refuses --start and --max-depth with it. */
void cp_hooks__mute_start(struct cp_thread *t)
{
}

int cp_hooks__after_unwind(struct cp_thread *t, int was, uintptr_t target)
{
	return 0;
}

#endif /* CP_HOOK_MODE == HOOKS_COVERAGE */

#if CP_HOOK_MODE != HOOKS_CPU && CP_HOOK_MODE != HOOKS_COUNTING
/*
 * Timing reads the clock by a call, and coverage's full paths are short:
 * no fast path, the thunks and stubs go on to the full one.
 */
__asm__("	.pushsection .text\n"
	"	.globl cp_sled__enter_fast, cp_sled__enter_fast_endbr, cp_sled__exit_fast\n"
	"	.hidden cp_sled__enter_fast, cp_sled__enter_fast_endbr, cp_sled__exit_fast\n"
	"	.type cp_sled__enter_fast, @function\n"
	"	.type cp_sled__enter_fast_endbr, @function\n"
	"	.type cp_sled__exit_fast, @function\n"
	"	.p2align 4\n"
	"cp_sled__enter_fast:\n"
	"	jmp cp_sled_entry\n"
	"	.size cp_sled__enter_fast, . - cp_sled__enter_fast\n"
	"	.p2align 4\n"
	"cp_sled__enter_fast_endbr:\n"
	"	jmp cp_sled_entry_endbr\n"
	"	.size cp_sled__enter_fast_endbr, . - cp_sled__enter_fast_endbr\n"
	"	.p2align 4\n"
	"cp_sled__exit_fast:\n"
	"	jmp cp_sled_ret_common\n"
	"	.size cp_sled__exit_fast, . - cp_sled__exit_fast\n"
	"	.popsection\n");
#endif
