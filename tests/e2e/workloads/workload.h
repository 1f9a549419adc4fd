/*
 * workload.h - shared macros for the end-to-end workloads.
 *
 * The tests assert exact call counts and exact function names, for gcc and
 * clang at -O0 and -O2.  Both compilers keep the -finstrument-functions hooks
 * of a function they inline, so inlining would not change the counts, but gcc
 * may clone a function (name.constprop.0, name.isra.0, name.part.0) and the
 * clone's code would then carry a name the expectations do not know.  NOINLINE
 * keeps every asserted function a real, uncloned function under both.
 * Results go to a volatile sink so that -O2 cannot delete the calls.
 */
#ifndef CP_TESTS_E2E_WORKLOAD_H
#define CP_TESTS_E2E_WORKLOAD_H

/*
 * A build with sleds is the plain build's code, and gcc -O2 folds functions
 * whose code is identical into one (-fipa-icf): a hooks build keeps them
 * apart (each passes its own address to the hooks), a sleds build would
 * count both under one name.  no_icf keeps each function its own code.
 */
#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone, no_icf))
#endif

/*
 * NOINSTR: a helper that callprof must not count, in every kind of build.
 * no_instrument_function keeps -finstrument-functions' hooks out, but not
 * a sled: `callprof cc --sleds` (-fpatchable-function-entry) gives every
 * out-of-line function one unless it says patchable_function_entry(0, 0)
 * (gcc 8, clang 10), as include/callprof.h's wrappers do.
 */
#ifndef __has_attribute
#define __has_attribute(x) 0
#endif
#if __has_attribute(patchable_function_entry)
#define NOINSTR __attribute__((no_instrument_function, patchable_function_entry(0, 0)))
#else
#define NOINSTR __attribute__((no_instrument_function))
#endif

/* Every workload defines the sink once: `volatile long sink;` */
extern volatile long sink;

#include <stdio.h>
#include <unistd.h>

/*
 * Tell a test that waits for the program that it is set up: its pid into
 * the file path, by rename from path.tmp, so that the file is never seen
 * half written.  0, or -1 with errno set.  Not counted (NOINSTR).
 */
NOINSTR static inline int ready_file(const char *path)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", (int)getpid());
	if (fclose(f) || rename(tmp, path))
		return -1;
	return 0;
}

#endif
