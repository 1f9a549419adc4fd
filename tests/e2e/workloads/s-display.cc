// s-display.cc - what the views must fit on a screen (t0433): a long C++
// method inlined into the function that calls it, so that --lines of the
// caller has lines "(inlined NAME)" with a NAME of some 150 characters, and
// time in code without hooks (memset of a large buffer), whose rows have
// no call count.
//
//   main -> crunch (N calls) -> [inlined] ...::Accumulator<...>::add_every_value_of_the_buffer_in_place(...)
//                            -> memset (libc, no hooks)
//
//   t-display N   crunch runs N times (its work in loop iterations)
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

static volatile unsigned long sink;
static unsigned char buffer[1 << 20];

namespace callprof_display_test {
namespace a_second_rather_long_namespace {
template <typename Key, typename Value> struct Accumulator {
	// No hooks of its own (inlined everywhere): its lines are the caller's.
	__attribute__((always_inline, no_instrument_function)) static inline unsigned long
	add_every_value_of_the_buffer_in_place(const std::map<Key, std::vector<Value>> &, unsigned long h,
					       unsigned n)
	{
		for (unsigned k = 0; k < n; k++)
			h = (h ^ (unsigned long)k) * 1099511628211ul; /* ACCUMULATE */
		return h;
	}
};
} // namespace a_second_rather_long_namespace
} // namespace callprof_display_test

static std::map<std::string, std::vector<double>> m;

// extern "C": named "crunch" whatever the compiler's C++ names look like.
extern "C" __attribute__((noinline)) void crunch(void)
{
	using A = callprof_display_test::a_second_rather_long_namespace::Accumulator<std::string, double>;

	sink = A::add_every_value_of_the_buffer_in_place(m, sink, 400000);
	memset(buffer, (int)sink, sizeof(buffer));
	sink += buffer[sink % sizeof(buffer)];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;

	m["x"].push_back(1.0);
	for (int i = 0; i < n; i++)
		crunch();
	return 0;
}
