/*
 * callprof.h - what a program profiled by callprof may include.
 *
 * Nothing needs to be included to be profiled: compile with
 * -finstrument-functions -g and run under `callprof record`, or link
 * libcallprof.a and set CALLPROF_OUT.  This header documents the interface
 * the runtime provides to the compiler, and the run-time control API a
 * long-running program may use: pause and resume recording, write a
 * snapshot of the profile, start counting afresh, label a thread, and mark
 * named regions (program phases, hand-written assembly) that appear in the
 * call tree like functions.
 *
 * The API is a shim: a program that uses it builds and runs without
 * callprof (no -lcallprof; static, PIE or not), and then every call does
 * nothing (callprof_dump() fails with ENOSYS).  Each wrapper finds the
 * runtime once - the symbol callprof__get_api, through a weak reference
 * (a program linked with libcallprof.a) or else dlsym(RTLD_DEFAULT) (the
 * runtime preloaded by `callprof record`; a weak reference alone would
 * not do, as GNU ld resolves it to 0 in non-PIE executables) - and keeps
 * what it found, per translation unit.  dlsym is in the C library from
 * glibc 2.34 on; older systems link with -ldl, or define
 * CALLPROF_NO_DLSYM before including this header to use the weak reference
 * only (which then works with PIE executables and libcallprof.a, not with
 * non-PIE executables under `callprof record`).
 *
 * Thread safety: every function may be called from any thread.  Only
 * callprof_region_begin/end and callprof_pause/resume may be called from a
 * signal handler; callprof_dump and callprof_reset take locks and
 * allocate, and must not be.  None changes errno, except a failing
 * callprof_dump.
 */
#ifndef CALLPROF_H
#define CALLPROF_H

#include <errno.h>
#include <stddef.h>
#ifndef CALLPROF_NO_DLSYM
#include <dlfcn.h>
#endif

#define CALLPROF_VERSION_MAJOR 0
#define CALLPROF_VERSION_MINOR 2

#ifdef __cplusplus
extern "C" {
#endif

/* Called by code compiled with -finstrument-functions. */
void __cyg_profile_func_enter(void *fn, void *call_site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *call_site) __attribute__((no_instrument_function));

/*
 * The runtime's implementation of the API below, as one table (the
 * wrappers' business; programs call the callprof_* functions).  Later
 * versions append members; size says how many there are.
 */
struct callprof__api {
	size_t size; /* bytes of this table the runtime fills */
	void (*pause)(void);
	void (*resume)(void);
	int (*dump)(const char *path);
	void (*reset)(void);
	void (*set_thread_name)(const char *name);
	void (*region_begin)(const char *name);
	void (*region_end)(const char *name);
};

#ifdef CALLPROF__RUNTIME /* the runtime, which defines it */
const struct callprof__api *callprof__get_api(void) __attribute__((no_instrument_function));
#else
const struct callprof__api *callprof__get_api(void)
	__attribute__((weak, no_instrument_function));
#endif

/*
 * Out of line (-O0), these wrappers would be counted: no_instrument_function
 * keeps hooks out, and patchable_function_entry(0, 0) keeps sleds out
 * (`callprof cc --sleds`; gcc 8, clang 10), which no_instrument_function
 * does not.
 */
#if defined(__has_attribute)
#if __has_attribute(patchable_function_entry)
#define CALLPROF__NO_SLED __attribute__((patchable_function_entry(0, 0)))
#endif
#endif
#ifndef CALLPROF__NO_SLED
#define CALLPROF__NO_SLED
#endif
#define CALLPROF__INLINE static inline __attribute__((no_instrument_function, unused)) CALLPROF__NO_SLED

/* The runtime's table, or NULL when the program runs without callprof. */
CALLPROF__INLINE const struct callprof__api *callprof__api(void)
{
	/* 0: not looked up yet; 1: looked up, absent; else the table */
	static const struct callprof__api *cached;
	const struct callprof__api *api = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
	const struct callprof__api *(*get)(void);

	if (api)
		return api == (const struct callprof__api *)1 ? NULL : api;
	get = callprof__get_api;
#ifndef CALLPROF_NO_DLSYM
	if (!get) {
		int saved_errno = errno;
		void *sym = dlsym(((void *)0) /* RTLD_DEFAULT */, "callprof__get_api");

		__builtin_memcpy(&get, &sym, sizeof(get));
		errno = saved_errno;
	}
#endif
	api = get ? get() : NULL;
	__atomic_store_n(&cached, api ? api : (const struct callprof__api *)1, __ATOMIC_RELEASE);
	return api;
}

/*
 * Stop recording, process-wide, until callprof_resume(): a call that
 * begins while paused is not recorded, nor is anything it calls (that
 * thread records nothing until that call returns, even if recording
 * resumes meanwhile).  Calls already open when recording paused go on
 * being timed; the profile's metadata counts the calls not recorded
 * (calls_paused).  Pauses do not nest: one resume ends any number of
 * pauses.
 */
CALLPROF__INLINE void callprof_pause(void)
{
	const struct callprof__api *api = callprof__api();

	if (api)
		api->pause();
}

/* Record again: calls that begin from now on are recorded. */
CALLPROF__INLINE void callprof_resume(void)
{
	const struct callprof__api *api = callprof__api();

	if (api)
		api->resume();
}

/*
 * Write a snapshot of the whole process's profile now, without stopping
 * (or pausing) recording: every thread's tree as it stands, calls still
 * open counted as if they ended now (they go on).  path NULL: the
 * recording's profile path with ".dumpN" appended (N = 1, 2, ... per
 * process, shared with `callprof dump`).  The file appears complete or not
 * at all.  Returns 0, or -1 with errno set: ENOSYS without callprof,
 * EAGAIN when the runtime is not recording (not yet started, or the final
 * profile is written), or why the file could not be written.  Dumps from
 * several threads are serialised.  Not async-signal-safe.
 */
CALLPROF__INLINE int callprof_dump(const char *path)
{
	const struct callprof__api *api = callprof__api();

	if (!api) {
		errno = ENOSYS;
		return -1;
	}
	return api->dump(path);
}

/*
 * Forget what was recorded so far: from now on the profile (and
 * snapshots) count only what happens after the reset.  A call open at the
 * reset is not counted as a call, but the time it spends after the reset
 * is (as in a fork child: the open call path stays, as context).  The
 * shortest and longest call of a path stay those of the whole run, capped
 * by the time left after the reset.  Does nothing in coverage mode.  Not
 * async-signal-safe.
 */
CALLPROF__INLINE void callprof_reset(void)
{
	const struct callprof__api *api = callprof__api();

	if (api)
		api->reset();
}

/*
 * Label the calling thread in the profile (up to 63 bytes are kept; NULL
 * or "" removes the label).  The OS thread keeps its name; the label wins
 * over it, and over pthread_setname_np, in reports.
 */
CALLPROF__INLINE void callprof_set_thread_name(const char *name)
{
	const struct callprof__api *api = callprof__api();

	if (api)
		api->set_thread_name(name);
}

/*
 * Named regions: a region is a node of the call tree like a function
 * call, shown as "[name]", with what is called inside it below it.  Begin
 * and end it in the same function (or end it where it began), like a call
 * and its return; regions nest with calls and with each other.  Names are
 * copied (up to 255 bytes; regions of the same name are one), so name may
 * be any string; a process has at most 3071 distinct names, later ones are
 * not recorded.  An end whose region is not the innermost open one closes
 * it and what was opened inside it; an end of a region not open is counted
 * as an unpaired exit.
 */
CALLPROF__INLINE void callprof_region_begin(const char *name)
{
	const struct callprof__api *api = callprof__api();

	if (api)
		api->region_begin(name);
}

CALLPROF__INLINE void callprof_region_end(const char *name)
{
	const struct callprof__api *api = callprof__api();

	if (api)
		api->region_end(name);
}

#undef CALLPROF__INLINE

#ifdef __cplusplus
}
#endif

#endif /* CALLPROF_H */
