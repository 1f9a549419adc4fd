/*
 * s-fib: naive recursive fib(20).  The folded path main;fib^k is entered
 * once for every call made at recursion depth k, so the expected counts are
 * the number of calls at each depth (21891 calls in all).
 */
#include "workload.h"

volatile long sink;
volatile int fib_arg = 20;

NOINLINE long fib(int n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

int main(void)
{
	sink = fib(fib_arg);
	return sink == 6765 ? 0 : 1;
}
