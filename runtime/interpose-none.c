/*
 * interpose-none.c - the static runtime (libcallprof*.a) cannot interpose
 * the C library it is linked with, so there is nothing to set up; see
 * interpose.c for what the preloaded runtime does, and libcalls.c for the
 * library-call trampolines, which need a preloaded runtime too.  It has no
 * watcher either (watch.c): its data pages are the program's own.
 */
#include "runtime/internal.h"

void cp_interpose__init(void)
{
}

void cp_libcalls__init(void)
{
}

void cp_libcalls__abandon_below(uintptr_t target)
{
}

void cp_signals__init(void)
{
}

void cp_signals__give_back(void)
{
}

int cp_seccomp__syscall(long nr, const long *a, long *ret)
{
	return 0;
}

int cp_seccomp__known(void)
{
	return 0;
}

/* A static runtime cannot read filters: under one an earlier image saw, it does not start. */
void cp_seccomp__inherit(const char *mask)
{
	cp_sys_denied = ~0u;
}

void cp_watch__init(void)
{
}

void cp_watch__spawn(void)
{
	cp_session.watch_pending = 0;
}

void cp_watch__spawn_again(void)
{
}

void cp_watch__fork_prepare(void)
{
}

void cp_watch__fork_parent(void)
{
}

void cp_watch__fork_child(void)
{
}
