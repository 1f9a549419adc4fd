/*
 * clock.c - the time base: the invariant TSC when the CPU promises one
 * (constant rate and not stopping in idle states, CPUID 0x80000007
 * EDX bit 8, what Linux reports as constant_tsc + nonstop_tsc), otherwise
 * CLOCK_MONOTONIC through the vDSO (no syscall, but about twice the cost).
 *
 * TSC ticks are converted to nanoseconds with a rate calibrated against
 * CLOCK_MONOTONIC over the whole run, from start to dump; runs shorter than
 * CALIBRATE_MIN_NS sleep the difference so the rate is good to ~0.1%.
 */
#include <cpuid.h>
#include <errno.h>
#include <time.h>

#include "runtime/internal.h"

#define CALIBRATE_MIN_NS 20000000ull /* 20 ms */

int cp_clock_has_invariant_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
		return 0;
	__cpuid(0x80000007, a, b, c, d);
	return (d >> 8) & 1;
#else
	return 0;
#endif
}

uint64_t cp_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Ticks per second, measured from the session start to now; *elapsed_ns
 * gets the monotonic time since the start (before any calibration wait).
 * Call once, at the dump.
 */
uint64_t cp_clock_ticks_per_sec(uint64_t *elapsed_ns)
{
	uint64_t t1, m1, dt;
	int saved_errno = errno;

	m1 = cp_clock_ns(CLOCK_MONOTONIC);
	*elapsed_ns = m1 - cp_session.mono0_ns; /* the run, without the wait below */
	if (cp_clock_is_tsc() && m1 - cp_session.mono0_ns < CALIBRATE_MIN_NS) {
		uint64_t left = CALIBRATE_MIN_NS - (m1 - cp_session.mono0_ns);
		struct timespec ts = { (time_t)(left / 1000000000u), (long)(left % 1000000000u) };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	/* Read the pair close together: retry if a preemption split them. */
	for (int i = 0; i < 5; i++) {
		uint64_t a = cp_ticks();

		m1 = cp_clock_ns(CLOCK_MONOTONIC);
		t1 = cp_ticks();
		if (!cp_clock_is_tsc() || t1 - a < 20000)
			break;
	}
	errno = saved_errno;
	if (!cp_clock_is_tsc())
		return 1000000000u;
	dt = t1 - cp_session.tsc0;
	if (m1 == cp_session.mono0_ns)
		return 0;
	return (uint64_t)((unsigned __int128)dt * 1000000000u / (m1 - cp_session.mono0_ns));
}
