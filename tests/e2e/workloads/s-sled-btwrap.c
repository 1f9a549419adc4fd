/*
 * s-sled-btwrap.c - a preloaded interposer of backtrace() and
 * _Unwind_Backtrace() (t0531), as ASan's backtrace interceptor is one:
 * each goes on to the next definition through a frame of its own,
 * btwrap_backtrace() and btwrap_unwind(), which a walk from the program
 * shows.  Under callprof record it sits between the runtime's wrappers
 * and the C library's: the walks must show its frames and not the
 * runtime's, as they do alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unwind.h>

typedef int (*backtrace_fn)(void **, int);
typedef _Unwind_Reason_Code (*unwind_backtrace_fn)(_Unwind_Trace_Fn, void *);

volatile int btwrap_calls;

/* Not inlined, and no tail call: its frame is in the walk. */
__attribute__((noinline)) int btwrap_backtrace(void **buf, int size)
{
	backtrace_fn next = (backtrace_fn)dlsym(RTLD_NEXT, "backtrace");
	int n;

	if (!next)
		abort();
	n = next(buf, size);
	btwrap_calls++;
	return n;
}

__attribute__((noinline)) _Unwind_Reason_Code btwrap_unwind(_Unwind_Trace_Fn trace, void *arg)
{
	unwind_backtrace_fn next = (unwind_backtrace_fn)dlsym(RTLD_NEXT, "_Unwind_Backtrace");
	_Unwind_Reason_Code r;

	if (!next)
		abort();
	r = next(trace, arg);
	btwrap_calls++;
	return r;
}

int backtrace(void **buf, int size)
{
	int n = btwrap_backtrace(buf, size);

	btwrap_calls++;
	return n;
}

_Unwind_Reason_Code _Unwind_Backtrace(_Unwind_Trace_Fn trace, void *arg)
{
	_Unwind_Reason_Code r = btwrap_unwind(trace, arg);

	btwrap_calls++;
	return r;
}
