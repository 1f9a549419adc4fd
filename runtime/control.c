/* placeholder: replaced by main's control.c */
/*
 * control.c - callprof_pause()/callprof_resume() (see internal.h).  The real
 * implementation, with the hooks' side of muting a thread, is on main; this
 * stand-in only lets the api branch link.
 */
#include "runtime/internal.h"

void cp_control__pause(void)
{
}

void cp_control__resume(void)
{
}
