/*
 * contexts.c - coroutines built on swapcontext/setcontext: one shadow
 * stack per context, not per thread.
 *
 * At swapcontext(from, to) the frames of the running context are taken off
 * the thread's shadow stack and saved under `from`; the frames saved under
 * `to` (if it ran before) are put back, their start times moved on by the
 * time they were suspended, so a coroutine's calls are timed while it runs
 * and not while it waits.  A context that never ran (makecontext) starts
 * with an empty stack: its entry function becomes a top-level path of the
 * thread, like a thread's start routine.  When the entry function returns,
 * glibc resumes uc_link without a call we can see; the wrapper notices on
 * its return that its own frames were not put back and does it then.
 *
 * Saved stacks live in per-thread slots (mmap'd, CP_CTX_SLOTS of them).  A
 * context resumed on another thread, or more suspended contexts than
 * slots, start empty and their old frames stay open until the dump; the
 * report counts them as reconciled.
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "runtime/internal.h"

typedef int (*swapcontext_fn)(ucontext_t *, const ucontext_t *);
typedef int (*setcontext_fn)(const ucontext_t *);

static swapcontext_fn real_swapcontext;
static setcontext_fn real_setcontext;

static struct cp_ctx_slot *slot_of(struct cp_thread *t, const void *uc, int create)
{
	struct cp_ctx_slot *free_slot = NULL;

	if (!t->ctx) {
		void *p;

		if (!create)
			return NULL;
		p = mmap(NULL, CP_CTX_SLOTS * sizeof(*t->ctx), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		t->ctx = p;
	}
	for (unsigned i = 0; i < CP_CTX_SLOTS; i++) {
		if (t->ctx[i].uc == uc)
			return &t->ctx[i];
		if (!t->ctx[i].uc && !free_slot)
			free_slot = &t->ctx[i];
	}
	if (create && free_slot)
		free_slot->uc = uc;
	return create ? free_slot : NULL;
}

/* Take the running context's frames off the stack, into from's slot. */
static void suspend(struct cp_thread *t, const void *from, uint64_t now)
{
	struct cp_frame *base = t->cct.stack->f;
	uint64_t n = (uint64_t)(t->cct.top - base);
	struct cp_ctx_slot *s = slot_of(t, from, 1);

	if (s && n > s->cap) {
		uint64_t cap = n * 2;
		void *p = mmap(NULL, cap * sizeof(struct cp_frame), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			s->uc = NULL;
			s = NULL;
		} else {
			/* The new copy first, the old one unmapped after (internal.h). */
			struct cp_frame *old = s->f;
			uint64_t old_cap = s->cap;

			s->f = p;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			s->cap = cap;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			if (old)
				munmap(old, old_cap * sizeof(struct cp_frame));
		}
	}
	if (!s) {
		/* Nowhere to keep them: close them now rather than mis-nest later calls. */
		cp_thread__unwind_to(t, UINTPTR_MAX, now);
		return;
	}
	memcpy(s->f, base + 1, n * sizeof(struct cp_frame));
	s->n = n;
	s->suspended = now;
	t->cct.top = base;
}

/* Put to's saved frames back on the (empty) stack. */
static void resume(struct cp_thread *t, const void *to, uint64_t now)
{
	struct cp_ctx_slot *s = slot_of(t, to, 0);

	if (t->cct.top != t->cct.stack->f)
		cp_thread__unwind_to(t, UINTPTR_MAX, now); /* leftovers of a context that ended */
	t->ctx_current = to;
	if (!s)
		return;
	while ((uint64_t)(t->cct.limit - t->cct.stack->f) < s->n)
		if (cp_thread__grow_stack(t)) {
			s->uc = NULL;
			return;
		}
	for (uint64_t i = 0; i < s->n; i++) {
		struct cp_frame *f = t->cct.stack->f + 1 + i;

		*f = s->f[i];
		if (f->start != CP_UNTIMED)
			f->start += now - s->suspended;
	}
	t->cct.top = t->cct.stack->f + s->n;
	s->uc = NULL;
}

static struct cp_thread *begin(void)
{
	struct cp_thread *t = cp_self;

	if (!t || t->busy || cp_session.state != CP_STATE_ON || !cp_gate__live())
		return NULL;
	t->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return t;
}

static void end(struct cp_thread *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

static uint64_t now_ticks(void)
{
	return cp_hook_mode == CP_MODE_TIMING ? cp_ticks() : 0;
}

#define CP_INTERPOSE __attribute__((visibility("default"), no_instrument_function, noinline))

CP_INTERPOSE int swapcontext(ucontext_t *from, const ucontext_t *to)
{
	struct cp_thread *t = begin();
	int saved_errno = errno, ret;
	swapcontext_fn next = CP_NEXT(real_swapcontext, "swapcontext");

	if (t) {
		uint64_t now = now_ticks();

		suspend(t, from, now);
		resume(t, to, now);
		end(t);
	}
	errno = saved_errno;
	ret = next(from, to);
	/* Back in `from`: put its frames back if whoever switched here did not. */
	t = begin();
	if (t) {
		if (t->ctx_current != from)
			resume(t, from, now_ticks());
		end(t);
	}
	return ret;
}

CP_INTERPOSE int setcontext(const ucontext_t *to)
{
	struct cp_thread *t = begin();
	setcontext_fn next = CP_NEXT(real_setcontext, "setcontext");

	if (t) {
		/* The running context is abandoned: its frames end here. */
		uint64_t now = now_ticks();

		cp_thread__unwind_to(t, UINTPTR_MAX, now);
		resume(t, to, now);
		end(t);
	}
	return next(to);
}
