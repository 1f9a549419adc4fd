/*
 * hooks-clock.c - the timing floor: hooks that only read the TSC, once at
 * enter and once at exit, and store it in a thread-local sink (volatile, so
 * neither the read nor the store is elided).  Any profiler that times every
 * call pays at least this; what callprof costs above it is its bookkeeping.
 * Preloaded like libcallprof.so, and built like it with initial-exec TLS;
 * where there is no TSC it reads CLOCK_MONOTONIC, as the runtime does.
 *
 * Built twice: hooks-clock.so reads a bare rdtsc (the runtime's
 * --clock=tsc-fast), hooks-clock-ordered.so (-DORDERED) an lfence; rdtsc,
 * the runtime's default read, which waits for every earlier instruction to
 * complete and so costs about twice as much on call-dense code.
 */
#include <stdint.h>
#include <time.h>

#define HOOK __attribute__((visibility("default"), no_instrument_function))

HOOK void __cyg_profile_func_enter(void *fn, void *site);
HOOK void __cyg_profile_func_exit(void *fn, void *site);

static __thread volatile uint64_t sink;

static inline __attribute__((always_inline, no_instrument_function)) uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

#ifdef ORDERED
	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
#else
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
#endif
	return ((uint64_t)hi << 32) | lo;
#else
	/* What the runtime reads where there is no TSC. */
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)fn;
	(void)site;
	sink = ticks();
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn;
	(void)site;
	sink = ticks();
}
