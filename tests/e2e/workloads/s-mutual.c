/*
 * s-mutual: mutual recursion.  main calls is_even(7) (8 alternating frames
 * down to is_odd(0)) and is_odd(4) (5 frames down to is_odd(0)).
 */
#include "workload.h"

volatile long sink;
volatile int arg_even = 7, arg_odd = 4;

NOINLINE int is_odd(int n);

NOINLINE int is_even(int n)
{
	if (n == 0)
		return 1;
	return is_odd(n - 1);
}

NOINLINE int is_odd(int n)
{
	if (n == 0)
		return 0;
	return is_even(n - 1);
}

int main(void)
{
	sink += is_even(arg_even);	/* 0: 7 is odd */
	sink += is_odd(arg_odd);	/* 0: 4 is even */
	return (int)sink;
}
