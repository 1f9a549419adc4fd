/* s-cc-util: the second file of s-cc-main.c (twice calls leaf twice). */
#include "workload.h"
#include "s-cc.h"

NOINLINE static void leaf(int i)
{
	sink += i;
}

NOINLINE void twice(int i)
{
	leaf(i);
	leaf(i);
}
