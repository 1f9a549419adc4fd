/*
 * hooks-empty.c - the floor: __cyg_profile_func_enter/exit that do nothing.
 * Preloaded (LD_PRELOAD) into the instrumented workload exactly as
 * libcallprof.so is, so what it costs over the plain build is the price of
 * -finstrument-functions itself: the two calls through the PLT per call and
 * what instrumentation does to the code around them.
 */

#define HOOK __attribute__((visibility("default"), no_instrument_function))

HOOK void __cyg_profile_func_enter(void *fn, void *site);
HOOK void __cyg_profile_func_exit(void *fn, void *site);

void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)fn;
	(void)site;
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn;
	(void)site;
}
