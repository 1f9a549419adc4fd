// s-longnames.cc - long C++ names (nested namespaces, class templates with
// standard containers as arguments) in a program of two threads, one of
// which waits most of the time: the HTML page's layout and its metric
// and thread switches (t0290).
//
//   t-longnames MS   main computes for about MS milliseconds of CPU time
//                    while a second thread sleeps in ten steps of MS/10 ms
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <time.h>
#include <vector>

static volatile unsigned long sink;

namespace callprof_test {
namespace a_rather_long_namespace_name {
template <typename Key, typename Value> struct RegistryWithAVeryLongName {
	__attribute__((noinline)) static unsigned long
	mix_one_value_into_the_running_checksum(unsigned long h, unsigned long v)
	{
		for (int k = 0; k < 200; k++)
			h = (h ^ v ^ (unsigned long)k) * 1099511628211ul;
		return h;
	}

	__attribute__((noinline)) static void
	compute_everything_for_the_key(const std::map<Key, std::vector<Value>> &m, double ms)
	{
		struct timespec t0, t;
		unsigned long h = m.size();

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		do {
			for (unsigned long v = 0; v < 1000; v++)
				h = mix_one_value_into_the_running_checksum(h, v);
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		} while ((double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6 <
			 ms);
		sink = h;
	}

	__attribute__((noinline)) static void wait_for_the_other_thread_to_finish(long ms)
	{
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		nanosleep(&ts, nullptr);
	}
};
} // namespace a_rather_long_namespace_name
} // namespace callprof_test

using Registry = callprof_test::a_rather_long_namespace_name::RegistryWithAVeryLongName<
	std::string, std::vector<std::pair<int, double>>>;

__attribute__((noinline)) static void sleeper(long ms)
{
	for (int i = 0; i < 10; i++)
		Registry::wait_for_the_other_thread_to_finish(ms / 10);
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 300;
	std::map<std::string, std::vector<std::vector<std::pair<int, double>>>> m;
	std::thread t(sleeper, ms);

	Registry::compute_everything_for_the_key(m, (double)ms);
	t.join();
	std::printf("%lu\n", (unsigned long)sink);
	return 0;
}
