/*
 * merge-work.c - bench/merge's program: main calls a0..a99, each of which
 * calls b0..b99 (through a table), so a profile has 10,101 call paths.
 * The seed (argv[1]) varies how often each b is called, so the inputs of a
 * merge differ.
 */
#include <stdlib.h>

volatile long sink;
typedef void (*fn)(int);

#define B(k) __attribute__((noinline)) void b##k(int x) { sink += x; }
#define B10(k) B(k##0) B(k##1) B(k##2) B(k##3) B(k##4) B(k##5) B(k##6) B(k##7) B(k##8) B(k##9)
B10(1) B10(2) B10(3) B10(4) B10(5) B10(6) B10(7) B10(8) B10(9) B10(10)

static fn bs[100];
static int reps;

#define A(k) __attribute__((noinline)) void a##k(int x) \
	{ for (int j = 0; j < 100; j++) for (int r = 0; r <= (j + x) % reps; r++) bs[j](x); }
#define A10(k) A(k##0) A(k##1) A(k##2) A(k##3) A(k##4) A(k##5) A(k##6) A(k##7) A(k##8) A(k##9)
A10(1) A10(2) A10(3) A10(4) A10(5) A10(6) A10(7) A10(8) A10(9) A10(10)

#define T(p, k) p##k##0, p##k##1, p##k##2, p##k##3, p##k##4, p##k##5, p##k##6, p##k##7, p##k##8, p##k##9
static fn all_b[100] = { T(b, 1), T(b, 2), T(b, 3), T(b, 4), T(b, 5),
			 T(b, 6), T(b, 7), T(b, 8), T(b, 9), T(b, 10) };
static fn all_a[100] = { T(a, 1), T(a, 2), T(a, 3), T(a, 4), T(a, 5),
			 T(a, 6), T(a, 7), T(a, 8), T(a, 9), T(a, 10) };

int main(int argc, char **argv)
{
	int seed = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 1;

	reps = 1 + seed % 3;
	for (int i = 0; i < 100; i++)
		bs[i] = all_b[i];
	for (int i = 0; i < 100; i++)
		all_a[i](seed);
	return 0;
}
