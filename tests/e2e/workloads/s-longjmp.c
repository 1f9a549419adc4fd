/*
 * s-longjmp.c - control that skips exit hooks.
 *
 * holder() calls dive(20), which longjmps from the bottom straight back to
 * holder(); holder() then calls helper(), which must be recorded directly
 * under holder(), not under the abandoned dive() frames.  sholder() does
 * the same through a signal: sdive(5) raises SIGUSR1 at the bottom, and
 * the (instrumented) handler siglongjmps back.  Counts are exact.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

#include "workload.h"

volatile long sink;
static jmp_buf env;
static sigjmp_buf senv;

NOINLINE void dive(int depth)
{
	if (depth == 0)
		longjmp(env, 1);
	dive(depth - 1);
	sink++;
}

NOINLINE void helper(void)
{
	sink++;
}

NOINLINE void holder(void)
{
	if (!setjmp(env))
		dive(20);
	helper();
}

NOINLINE void on_signal(int sig)
{
	sink += sig;
	siglongjmp(senv, 1);
}

NOINLINE void sdive(int depth)
{
	if (depth == 0)
		raise(SIGUSR1);
	sdive(depth - 1);
	sink++;
}

NOINLINE void sholder(void)
{
	if (!sigsetjmp(senv, 1))
		sdive(5);
	helper();
}

int main(void)
{
	signal(SIGUSR1, on_signal);
	for (int i = 0; i < 1000; i++)
		holder();
	for (int i = 0; i < 100; i++)
		sholder();
	printf("%ld\n", sink);
	return 0;
}
