/*
 * interpose-none.c - the static runtime (libcallprof*.a) cannot interpose
 * the C library it is linked with, so there is nothing to set up; see
 * interpose.c for what the preloaded runtime does.
 */
#include "runtime/internal.h"

void cp_interpose__init(void)
{
}

void cp_signals__init(void)
{
}
