/*
 * many-work.c - bench/many-files' program: a short run with some hundred
 * call paths (main calls s0..s19, each of which calls three of t0..t9,
 * chosen by the seed), so that its profile is some 15 KB: one process of
 * a job that runs many of them.
 */
#include <stdlib.h>

volatile long sink;
typedef void (*fn)(long);

#define T(k) __attribute__((noinline)) void t##k(long x) { for (long i = 0; i < 200 * (k + 1); i++) sink += x ^ i; }
T(0) T(1) T(2) T(3) T(4) T(5) T(6) T(7) T(8) T(9)
static fn ts[10] = { t0, t1, t2, t3, t4, t5, t6, t7, t8, t9 };
static long seed;

#define S(k) __attribute__((noinline)) void s##k(long x) \
	{ for (int j = 0; j < 3; j++) ts[(k + j * (seed + 1)) % 10](x + j); }
S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8) S(9)
S(10) S(11) S(12) S(13) S(14) S(15) S(16) S(17) S(18) S(19)
static fn ss[20] = { s0, s1, s2, s3, s4, s5, s6, s7, s8, s9,
		     s10, s11, s12, s13, s14, s15, s16, s17, s18, s19 };

int main(int argc, char **argv)
{
	seed = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	for (int r = 0; r < 200; r++)
		for (int i = 0; i < 20; i++)
			ss[i](r);
	return 0;
}
