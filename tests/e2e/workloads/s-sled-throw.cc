// s-sled-throw.cc - C++ exceptions through sledded frames (t0530).
//
//   ./t-sled-throw [N]        N rounds (default 2000) of:
//     catcher(): thrower(4) throws an int through 5 frames, each holding a
//       Guard whose destructor runs as the frame is unwound; catcher()'s
//       catch block calls handler(), then after_catch() (must be under
//       catcher(), not under a frame the throw left).
//     outer(): middle() catches and rethrows (throw;), outer() catches.
//     via_lib(): a library built without sleds or hooks (lib_call_back())
//       calls back into back_thrower(int), which throws through the
//       library's frame (it has a cleanup of its own) to via_lib().
//   ./t-sled-throw bare [N]   N rounds of the first two without the Guard
//     (no cleanups in the frames thrown through)
//   ./t-sled-throw terminate  thrower() throws a std::runtime_error that
//     main() catches with catch (...), says so, and rethrows with no
//     handler left: std::terminate prints its message, abort() ends it.
//     (The catch in main proves the search phase saw through every frame:
//     an unwinder stopped by a foreign return address would not find it
//     and would terminate at once, with the same message.)
// Prints the result and its own counts (s-sled-count.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#define SLED_COUNT_MAIN
#include "s-sled-count.h"

volatile long sink;

extern "C" void lib_call_back(void (*cb)(int), int v);

NOINLINE void guard_done(int depth)
{
	COUNT("guard_done(int)");
	sink += depth;
}

struct Guard {
	int depth;
	~Guard() { guard_done(depth); }
};

NOINLINE void thrower(int depth)
{
	COUNT("thrower(int)");
	Guard g{depth};
	if (depth == 0)
		throw 42;
	thrower(depth - 1);
	sink++;
}

NOINLINE void handler(int v)
{
	COUNT("handler(int)");
	sink += v;
}

NOINLINE void after_catch()
{
	COUNT("after_catch()");
	sink++;
}

NOINLINE void catcher()
{
	COUNT("catcher()");
	try {
		thrower(4);
	} catch (int v) {
		handler(v);
	}
	after_catch();
}

NOINLINE void middle()
{
	COUNT("middle()");
	try {
		thrower(2);
	} catch (int) {
		throw;
	}
}

NOINLINE void outer()
{
	COUNT("outer()");
	try {
		middle();
	} catch (int v) {
		handler(v);
	}
	after_catch();
}

NOINLINE void back_thrower(int v)
{
	COUNT("back_thrower(int)");
	thrower(v);
}

NOINLINE void via_lib()
{
	COUNT("via_lib()");
	try {
		lib_call_back(back_thrower, 1);
	} catch (int v) {
		handler(v);
	}
	after_catch();
}

// The same without the Guard: no cleanup in the frames thrown through.
NOINLINE void bare_thrower(int depth)
{
	COUNT("bare_thrower(int)");
	if (depth == 0)
		throw 7;
	bare_thrower(depth - 1);
	sink++;
}

NOINLINE void bare_catcher()
{
	COUNT("bare_catcher()");
	try {
		bare_thrower(4);
	} catch (int v) {
		handler(v);
	}
	after_catch();
}

NOINLINE void bare_middle()
{
	COUNT("bare_middle()");
	try {
		bare_thrower(2);
	} catch (int) {
		throw;
	}
}

NOINLINE void bare_outer()
{
	COUNT("bare_outer()");
	try {
		bare_middle();
	} catch (int v) {
		handler(v);
	}
	after_catch();
}

NOINLINE void raise_error(int depth)
{
	COUNT("raise_error(int)");
	if (depth == 0)
		throw std::runtime_error("boom from the sledded frames");
	raise_error(depth - 1);
	sink++;
}

int main(int argc, char **argv)
{
	COUNT("main");
	if (argc > 1 && !std::strcmp(argv[1], "terminate")) {
		try {
			raise_error(3);
		} catch (...) {
			std::printf("main caught it, rethrows\n");
			std::fflush(stdout);
			throw;
		}
		return 0;
	}
	if (argc > 1 && !std::strcmp(argv[1], "bare")) {
		long n = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 2000;

		for (long i = 0; i < n; i++) {
			bare_catcher();
			bare_outer();
		}
		std::printf("sink %ld\n", (long)sink);
		sled_count_print();
		return 0;
	}
	long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 2000;
	for (long i = 0; i < n; i++) {
		catcher();
		outer();
		via_lib();
	}
	std::printf("sink %ld\n", (long)sink);
	sled_count_print();
	return 0;
}
