/*
 * control.c - callprof_pause() and callprof_resume() (include/callprof.h),
 * and the gate the hooks test on every call.
 *
 * Pausing is process-wide.  A call that begins while it is set mutes its
 * thread (hooks.c): neither it nor anything it calls is recorded, and its
 * thread records again once it has returned.  Calls already open keep
 * being timed, so a pause shows as self time of the calls that were open.
 *
 * The gate: one word, cp_gate, on a page of its own that the kernel
 * empties in every child made without the fork handlers (MADV_WIPEONFORK):
 * clone() and syscall(SYS_clone) without CLONE_VM, and the watcher.  Such
 * a child inherits the thread states of its parent by address, in memory
 * it may share with the parent (the arena, watch.c) or not have at all
 * (the perf rings, offcpu.c); it must not touch them.  CP_GATE_LIVE is set
 * at start-up and by the fork handler in a fork child; where it reads 0,
 * the hooks, signal handlers and unwinding do nothing, so such a child runs
 * exactly as without callprof.  CP_GATE_PAUSED mirrors cp_paused, so the
 * entry hook's one load of the gate also tests the pause.
 */
#include <sys/mman.h>

#include "runtime/internal.h"

volatile int cp_paused;

union cp_gate_page cp_gate_page;

/*
 * Make the gate's page private, anonymous and wiped in children, and open
 * the gate.  At start-up, after watch.c shared the data pages (the gate
 * must not be shared), and in a fork child, where watch.c shared them
 * afresh.  Without MADV_WIPEONFORK (Linux < 4.14) a clone child is not
 * recognised: the gate stays open, as before.
 */
void cp_gate__open(void)
{
	void *p = &cp_gate_page;

	if (mmap(p, sizeof(cp_gate_page), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p)
		madvise(p, sizeof(cp_gate_page), MADV_WIPEONFORK);
	__atomic_store_n(&cp_gate_page.word,
			 CP_GATE_LIVE | (__atomic_load_n(&cp_paused, __ATOMIC_RELAXED) ? CP_GATE_PAUSED : 0),
			 __ATOMIC_RELEASE);
}

/* A clone child's pause would be its parent's (cp_paused may be shared, watch.c). */
static int ours(void)
{
	return cp_session.state == CP_STATE_NONE || cp_gate__live();
}

void cp_control__pause(void)
{
	if (!ours())
		return;
	__atomic_store_n(&cp_paused, 1, __ATOMIC_RELEASE);
	__atomic_fetch_or(&cp_gate_page.word, CP_GATE_PAUSED, __ATOMIC_RELEASE);
}

void cp_control__resume(void)
{
	if (!ours())
		return;
	__atomic_store_n(&cp_paused, 0, __ATOMIC_RELEASE);
	__atomic_fetch_and(&cp_gate_page.word, ~CP_GATE_PAUSED, __ATOMIC_RELEASE);
}
