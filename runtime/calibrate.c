/*
 * calibrate.c - what the hooks cost, measured where it matters.
 *
 * For a call from P to C, P's inclusive time contains C's inclusive time
 * plus the part of C's enter and exit hooks outside C's interval (before
 * the clock read in enter, after it in exit): that is "outside", and it
 * shows up as P's self time.  C's own interval contains a little of its
 * hooks too (after the clock read in enter, before it in exit): "inside".
 * The report subtracts outside x (calls of a node's children) and
 * inside x (its own calls) from each node's self time.
 *
 * Measured by driving the real hooks, on a private thread state, with a
 * fake parent calling a fake empty child PAIRS times, ROUNDS times; the
 * medians go into the profile, with the spread as a noise indicator.
 * Only in timing mode; run at the dump, inside the time the TSC
 * calibration waits anyway for short programs.
 */
#include <errno.h>
#include <stdint.h>

#include "runtime/internal.h"

#define ROUNDS 9
#define PAIRS 4000

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

static void sort_u64(uint64_t *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t tmp = v[j];

			v[j] = v[j - 1];
			v[j - 1] = tmp;
		}
}

int cp_calibrate(struct cp_calibration *cal)
{
	struct cp_thread *saved = cp_self, *t;
	uint64_t out[ROUNDS], in[ROUNDS], untimed[ROUNDS] = { 0 };
	void *site = __builtin_return_address(0);
	void *child = (void *)(uintptr_t)0x10000;

	cal->outside = cal->inside = cal->spread = cal->untimed = 0;
	t = cp_thread__new();
	if (!t)
		return -ENOMEM;
	t->unfiltered = 1;
	cp_self = t;
	for (int r = 0; r < ROUNDS; r++) {
		void *parent = (void *)(uintptr_t)(0x1000 + 0x10 * r);
		struct cp_node *p, *c;

		__cyg_profile_func_enter(parent, site);
		for (int i = 0; i < PAIRS; i++) {
			__cyg_profile_func_enter(child, site);
			__cyg_profile_func_exit(child, site);
		}
		__cyg_profile_func_exit(parent, site);
		p = t->cct.root.cache;
		c = p ? p->cache : NULL;
		if (!p || !c || c->calls != PAIRS || p->ticks < c->ticks) {
			cp_self = saved;
			cp_thread__free(t);
			return -EINVAL; /* the hooks did not run as expected: no figure */
		}
		out[r] = (p->ticks - c->ticks) / PAIRS;
		in[r] = c->ticks / PAIRS;
	}
	/* The same with the child count-only (--budget): its whole cost is the parent's. */
	for (int r = 0; r < ROUNDS && cp_hook_mode == CP_MODE_TIMING; r++) {
		void *parent = (void *)(uintptr_t)(0x2000 + 0x10 * r);
		struct cp_node *p, *c;

		__cyg_profile_func_enter(parent, site);
		__cyg_profile_func_enter(child, site);
		__cyg_profile_func_exit(child, site);
		p = t->cct.top->node;
		c = p->cache;
		c->flags |= CP_NF_UNTIMED;
		for (int i = 1; i < PAIRS; i++) {
			__cyg_profile_func_enter(child, site);
			__cyg_profile_func_exit(child, site);
		}
		__cyg_profile_func_exit(parent, site);
		untimed[r] = p->ticks / PAIRS;
	}
	cp_self = saved;
	cp_thread__free(t);
	sort_u64(untimed, ROUNDS);
	cal->untimed = untimed[ROUNDS / 2];
	sort_u64(out, ROUNDS);
	sort_u64(in, ROUNDS);
	cal->outside = out[ROUNDS / 2];
	cal->inside = in[ROUNDS / 2];
	cal->spread = out[ROUNDS - 1] - out[0];
	return 0;
}
