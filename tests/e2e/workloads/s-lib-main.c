/*
 * s-lib-main: the executable for s-lib.c; link with -L. -lslib.
 *
 *   main -> use_lib -> slib_compute(3) (x2) -> slib_step (x3 each)
 *   main -> slib_compute(3) -> slib_step (x3)
 *   main -> slib_apply(square, 2) -> square (x2, back in the executable)
 */
#include "workload.h"

volatile long sink;

long slib_compute(int n);
long slib_apply(long (*cb)(long), int n);

NOINLINE static long square(long x)
{
	return x * x;
}

NOINLINE static void use_lib(void)
{
	sink += slib_compute(3);
	sink += slib_compute(3);
}

int main(void)
{
	use_lib();
	sink += slib_compute(3);
	sink += slib_apply(square, 2);
	return 0;
}
