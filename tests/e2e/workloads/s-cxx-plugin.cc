// s-cxx-plugin.cc - a C++ plugin that throws and catches, for a C program
// that dlopens it (s-cxx-host.c, t0191): its libstdc++ and libgcc_s come
// with it, in its own scope, not the program's.
//
// plug_catch(n): n calls of plug_thrower, which throws on odd i through
// plug_middle; each throw is caught in plug_catch.  Returns the sum.
#include "workload.h"

extern "C" {
volatile long plug_sink;

NOINLINE void plug_thrower(int i)
{
	if (i % 2)
		throw i;
	plug_sink += i;
}

NOINLINE void plug_middle(int i)
{
	plug_thrower(i);
	plug_sink++;
}

NOINLINE void plug_after(void)
{
	plug_sink++;
}

NOINLINE int plug_catch(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++) {
		try {
			plug_middle(i);
			s += i;
		} catch (int v) {
			s += v;
			plug_after();
		}
	}
	return s;
}
}
