// s-libcalls-throw: C++ exceptions and library calls (t0350).
//
//   main -> sorter -> qsort -> cmp, which throws on its 5th call; sorter
//   catches: the exception unwinds through qsort's frame (in libc).  Then
//   main -> catcher -> thrower throws through instrumented frames only, and
//   main -> lengths -> strlen shows library calls still recorded after both.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "workload.h"

volatile long sink;
static int ncmp;

NOINLINE static int cmp(const void *a, const void *b)
{
	if (++ncmp == 5)
		throw 7;
	return *(const int *)a - *(const int *)b;
}

NOINLINE static int sorter()
{
	int v[16];

	for (int i = 0; i < 16; i++)
		v[i] = 16 - i;
	try {
		qsort(v, 16, sizeof(int), cmp);
	} catch (int e) {
		return e;
	}
	return 0;
}

NOINLINE static void thrower(int n)
{
	if (!n)
		throw 3;
	thrower(n - 1);
}

NOINLINE static int catcher()
{
	try {
		thrower(3);
	} catch (int e) {
		return e;
	}
	return 0;
}

NOINLINE static void lengths()
{
	static char s[8] = "abc";

	for (int i = 0; i < 4; i++) {
		s[0] = (char)('a' + i);
		sink += (long)strlen(s);
	}
}

int main()
{
	int a = 0, b = 0;

	for (int i = 0; i < 3; i++) {
		ncmp = 0;
		a += sorter();
		b += catcher();
	}
	lengths();
	printf("caught %d %d\n", a, b);
	return a == 21 && b == 9 ? 0 : 1;
}
