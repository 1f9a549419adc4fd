// s-throw.cc - an exception thrown through 5 levels and caught by
// catcher(), whose catch block calls handler(); 1000 times.  handler()
// must be recorded directly under catcher() (clang runs no exit hooks while
// unwinding; gcc does).  Then the same through a rethrow, caught a second
// time one level up by outer().
#include <cstdio>

#include "workload.h"

volatile long sink;

NOINLINE void thrower(int depth)
{
	if (depth == 0)
		throw 42;
	thrower(depth - 1);
	sink++;
}

NOINLINE void handler(int v)
{
	sink += v;
}

NOINLINE void catcher()
{
	try {
		thrower(5);
	} catch (int v) {
		handler(v);
	}
}

NOINLINE void middle()
{
	try {
		thrower(2);
	} catch (int) {
		throw;
	}
}

NOINLINE void outer()
{
	try {
		middle();
	} catch (int v) {
		handler(v);
	}
}

int main()
{
	for (int i = 0; i < 1000; i++)
		catcher();
	for (int i = 0; i < 10; i++)
		outer();
	std::printf("%ld\n", (long)sink);
	return 0;
}
