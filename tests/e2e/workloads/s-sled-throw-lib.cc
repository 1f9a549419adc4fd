// s-sled-throw-lib.cc - a library built without sleds or hooks (t0530):
// calls back into the program, whose callback throws through this frame.
// The frame has a cleanup (a destructor) that must run as it is unwound.
#include <cstdio>

static volatile long lib_sink;

struct LibGuard {
	~LibGuard() { lib_sink++; }
};

extern "C" __attribute__((noinline)) void lib_call_back(void (*cb)(int), int v)
{
	LibGuard g;
	cb(v);
	lib_sink += v;
}
