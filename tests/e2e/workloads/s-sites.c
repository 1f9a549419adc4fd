/*
 * s-sites.c - call sites with known lines: report --fields=site shows
 * FILE:LINE of the call instruction of each context's first call.
 * Keep the line numbers in tests/e2e/t0110-symbols.sh in step.
 */
#include <stdio.h>

static volatile int sink;

__attribute__((noinline)) void leaf(void)
{
	sink++;
}

__attribute__((noinline)) void mid(void)
{
	leaf(); /* line 17 */
	sink++;
}

int main(void)
{
	mid(); /* line 23 */
	sink++;
	leaf(); /* line 25 */
	sink++;
	printf("%d\n", sink);
	return 0;
}
