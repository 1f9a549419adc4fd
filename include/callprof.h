/*
 * callprof.h - what a program profiled by callprof may include.
 *
 * Nothing needs to be included to be profiled: compile with
 * -finstrument-functions -g and run under `callprof record`, or link
 * libcallprof.a and set CALLPROF_OUT.  This header only documents the
 * interface the runtime provides to the compiler.
 */
#ifndef CALLPROF_H
#define CALLPROF_H

#define CALLPROF_VERSION_MAJOR 0
#define CALLPROF_VERSION_MINOR 1

#ifdef __cplusplus
extern "C" {
#endif

/* Called by code compiled with -finstrument-functions. */
void __cyg_profile_func_enter(void *fn, void *call_site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *call_site) __attribute__((no_instrument_function));

#ifdef __cplusplus
}
#endif

#endif /* CALLPROF_H */
