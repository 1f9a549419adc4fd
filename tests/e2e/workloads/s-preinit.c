/*
 * s-preinit.c - instrumented code that runs from .preinit_array, before
 * the C library has set environ and before any constructor: the runtime
 * starts there and must still find its settings (CALLPROF_OUT).
 *
 *   pre -> early, then main -> early
 *
 * With the argument "setenv", the .preinit_array function first gives the
 * process an environment of its own with another CALLPROF_OUT ("hijacked"
 * in the current directory): the runtime's settings are those the process
 * was started with, so the profile still goes where they say.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "workload.h"

volatile long sink;

NOINLINE static void early(void)
{
	sink++;
}

static void pre(int argc, char **argv, char **envp)
{
	if (argc > 1 && !strcmp(argv[1], "setenv"))
		setenv("CALLPROF_OUT", "hijacked", 1);
	early();
}

__attribute__((section(".preinit_array"), used)) static void (*pre_p)(int, char **, char **) = pre;

int main(void)
{
	early();
	puts("main ran");
	return 3;
}
