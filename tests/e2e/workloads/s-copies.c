/*
 * s-copies.c - copies of one source function (little_endian, a static
 * inline function of s-copies.h, in three translation units) and two
 * different functions of one name (helper, static in s-copies-a.c and in
 * s-copies-b.c).  Built with s-copies-a.c and s-copies-b.c.
 *
 *   main -> little_endian x3, copies_a(3), copies_b(2)
 *   copies_a -> little_endian x3, helper (a) x3
 *   copies_b -> little_endian x2, helper (b) x2
 */
#include <stdio.h>

#include "s-copies.h"

volatile unsigned copies_sink;

int main(void)
{
	unsigned s = 0;

	for (int i = 0; i < 3; i++)
		s += little_endian((unsigned)i);
	s += copies_a(3) + copies_b(2);
	printf("%u\n", s);
	return 0;
}
