/*
 * s-fnptr: calls through an array of function pointers in a loop.  The
 * array is volatile so that -O2 keeps real indirect calls.
 *
 * 10 iterations over 3 entries: op_add 4, op_sub 3, op_mul 3, all directly
 * under run_ops; run_ops itself is also called through a pointer.
 */
#include "workload.h"

volatile long sink;

NOINLINE static long op_add(long x)
{
	return x + 3;
}

NOINLINE static long op_sub(long x)
{
	return x - 1;
}

NOINLINE static long op_mul(long x)
{
	return x * 2;
}

static long (*volatile ops[3])(long) = { op_add, op_sub, op_mul };

NOINLINE static void run_ops(int n)
{
	long x = 1;

	for (int i = 0; i < n; i++)
		x = ops[i % 3](x);
	sink = x;
}

static void (*volatile runner)(int) = run_ops;

int main(void)
{
	runner(10);
	return 0;
}
