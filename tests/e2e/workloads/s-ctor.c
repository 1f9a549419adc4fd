/*
 * s-ctor.c - call paths start where the first instrumented function
 * starts: a static constructor, main, a destructor.
 */
#include <stdio.h>

static volatile int sink;

__attribute__((noinline)) void helper(int x)
{
	sink += x;
}

__attribute__((constructor)) static void setup(void)
{
	helper(1);
}

__attribute__((destructor)) static void teardown(void)
{
	helper(3);
}

int main(void)
{
	helper(2);
	printf("%d\n", sink);
	return 0;
}
