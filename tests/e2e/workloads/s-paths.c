/*
 * s-paths: one function, leaf, reached along three call paths with
 * different counts, so that the callers of leaf can be told apart:
 *
 *   main -> leaf                      1 call
 *   main -> left -> leaf              2 calls (left called once)
 *   main -> right -> deep -> leaf     3 calls (right once, deep once)
 */
#include "workload.h"

volatile long sink;

NOINLINE void leaf(int i)
{
	sink += i;
}

NOINLINE void left(void)
{
	leaf(1);
	leaf(2);
}

NOINLINE void deep(void)
{
	for (int i = 0; i < 3; i++)
		leaf(i);
}

NOINLINE void right(void)
{
	deep();
	sink++;
}

int main(void)
{
	leaf(0);
	left();
	right();
	return 0;
}
