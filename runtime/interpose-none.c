/*
 * interpose-none.c - the static runtime (libcallprof*.a) cannot interpose
 * the C library it is linked with, so there is nothing to set up; see
 * interpose.c for what the preloaded runtime does.  It has no watcher
 * either (watch.c): its data pages are the program's own.
 */
#include "runtime/internal.h"

void cp_interpose__init(void)
{
}

void cp_signals__init(void)
{
}

void cp_watch__init(void)
{
}

void cp_watch__spawn(void)
{
	cp_session.watch_pending = 0;
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
