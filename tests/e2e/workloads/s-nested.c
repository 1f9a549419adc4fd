/*
 * s-nested: a small fixed call tree.
 *
 *   main -> a -> b (x2) -> c (x3 per b), and main -> d.
 *
 * Expected calls: main 1, main;a 1, main;a;b 2, main;a;b;c 6, main;d 1.
 */
#include "workload.h"

volatile long sink;

NOINLINE void c(int i)
{
	sink += i;
}

NOINLINE void b(int n)
{
	for (int i = 0; i < 3; i++)
		c(n + i);
}

NOINLINE void a(void)
{
	b(1);
	b(2);
}

NOINLINE void d(void)
{
	sink += 100;
}

int main(void)
{
	a();
	d();
	return 0;
}
