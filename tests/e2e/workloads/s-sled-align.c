/*
 * s-sled-align: calls that gcc -O2 makes without aligning the stack to 16
 * bytes (it knows, across functions, that the callees need no alignment:
 * -fipa-stack-alignment), for callprof's sled paths, which call C that
 * may need it (t0540).  burn() runs without a call for longer than a
 * thread's sample ring holds at the default rate, so that its return
 * drains a full ring in the full exit path, on the stack as mid() left it.
 */
#include <stdio.h>
#include "workload.h"

volatile long sink;

NOINLINE void burn(long n)
{
	long acc = 0;

	for (long i = 0; i < n; i++) {
		acc += i;
		__asm__ __volatile__("" : "+r"(acc));
	}
	sink ^= acc;
}

NOINLINE void mid(long n)
{
	burn(n);
}

NOINLINE void top(long n)
{
	for (int i = 0; i < 3; i++)
		mid(n);
}

int main(void)
{
	top(400000000L);
	printf("done\n");
	return 0;
}
