/*
 * s-tiny.c - nothing but tiny calls: hook overhead is most of every
 * measured time, so compensation is at its limit here.  It must never
 * produce a negative time and must keep self <= total and the children's
 * totals within their parent's.
 */
#include <stdio.h>

static volatile unsigned sink;

__attribute__((noinline)) void nop(void)
{
}

__attribute__((noinline)) void one(void)
{
	sink++;
}

__attribute__((noinline)) void two(void)
{
	one();
	one();
}

__attribute__((noinline)) void fan(void)
{
	for (int i = 0; i < 8; i++)
		nop();
	two();
}

int main(void)
{
	for (int i = 0; i < 100000; i++) {
		fan();
		one();
	}
	printf("%u\n", sink);
	return 0;
}
