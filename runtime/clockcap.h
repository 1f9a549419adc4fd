/*
 * clockcap.h - cpu mode's "[kernel]" periods held to the thread's CPU
 * clock at the dump (flush.c, clock_cap; docs/profile-format.md, THREADS,
 * unclocked periods).  Arithmetic only, in a header so that the unit test
 * (tests/unit/test-clockcap.c) runs what the dump runs.
 */
#ifndef CP_RUNTIME_CLOCKCAP_H
#define CP_RUNTIME_CLOCKCAP_H

#include <stdint.h>

/*
 * Of the seen periods of a thread's table, kernel of them "[kernel]"
 * periods, how many its CPU clock (cpu ns, at period ns a period) does not
 * have, at most kernel.  The slack is unsampled()'s: the period running at
 * the dump, and one more for the dump's own jitter.  0 when the clock is
 * not known.
 */
static inline uint64_t cp_clock_cap(uint64_t seen, uint64_t kernel, uint64_t cpu, uint64_t period)
{
	uint64_t allowed;

	if (!period || !cpu)
		return 0;
	allowed = cpu / period + 2;
	if (seen <= allowed)
		return 0;
	return seen - allowed < kernel ? seen - allowed : kernel;
}

/*
 * Taking cut periods off lines that hold total of them, each line by its
 * share: line k gives the running sum's share, rounded down, less what the
 * lines before it gave, so the takes add up to cut when the lines add up
 * to total; never more than a line holds, nor than is left.
 */
struct cp_cut {
	uint64_t cut, total, given, left;
	unsigned __int128 num;
};

static inline void cp_cut__init(struct cp_cut *c, uint64_t cut, uint64_t total)
{
	c->cut = cut;
	c->total = total;
	c->given = 0;
	c->left = total ? cut : 0;
	c->num = 0;
}

static inline uint64_t cp_cut__take(struct cp_cut *c, uint64_t samples)
{
	uint64_t take;

	if (!c->left)
		return 0;
	c->num += (unsigned __int128)samples * c->cut;
	take = (uint64_t)(c->num / c->total) - c->given; /* given <= the sum's share, always */
	take = take < samples ? take : samples;
	take = take < c->left ? take : c->left;
	c->given += take;
	c->left -= take;
	return take;
}

#endif
