/*
 * s-wide.c - one caller with 2000 distinct callees: the child lookup must
 * stay exact (and O(1)) past the first hash-table growth.  Function fNNNN
 * is called (NNNN % 3) + 1 times, through a table of pointers.
 */
#include <stdio.h>

static volatile unsigned sink;

#define F(n) __attribute__((noinline)) void f##n(void) { sink += n; }
#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
#define F100(n) F10(n##0) F10(n##1) F10(n##2) F10(n##3) F10(n##4) F10(n##5) F10(n##6) \
	F10(n##7) F10(n##8) F10(n##9)
#define F1000(n) F100(n##0) F100(n##1) F100(n##2) F100(n##3) F100(n##4) F100(n##5) \
	F100(n##6) F100(n##7) F100(n##8) F100(n##9)
F1000(1)
F1000(2)

#define P(n) f##n,
#define P10(n) P(n##0) P(n##1) P(n##2) P(n##3) P(n##4) P(n##5) P(n##6) P(n##7) P(n##8) P(n##9)
#define P100(n) P10(n##0) P10(n##1) P10(n##2) P10(n##3) P10(n##4) P10(n##5) P10(n##6) \
	P10(n##7) P10(n##8) P10(n##9)
#define P1000(n) P100(n##0) P100(n##1) P100(n##2) P100(n##3) P100(n##4) P100(n##5) \
	P100(n##6) P100(n##7) P100(n##8) P100(n##9)

static void (*const table[])(void) = { P1000(1) P1000(2) };

int main(void)
{
	for (unsigned i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		for (unsigned k = 0; k <= (1000 + i) % 3; k++)
			table[i]();
	printf("%u\n", sink);
	return 0;
}
