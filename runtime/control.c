/*
 * control.c - callprof_pause() and callprof_resume() (include/callprof.h).
 *
 * Pausing is process-wide and costs the hooks one load of cp_paused on
 * entry.  A call that begins while it is set mutes its thread (hooks.c):
 * neither it nor anything it calls is recorded, and its thread records
 * again once it has returned.  Calls already open keep being timed, so a
 * pause shows as self time of the calls that were open.
 */
#include "runtime/internal.h"

volatile int cp_paused;

void cp_control__pause(void)
{
	__atomic_store_n(&cp_paused, 1, __ATOMIC_RELEASE);
}

void cp_control__resume(void)
{
	__atomic_store_n(&cp_paused, 0, __ATOMIC_RELEASE);
}
