// s-cxx.cc - C++ names: namespaces, classes, overloads, templates,
// operators, a lambda; the report prints them as c++filt does, parameters
// included.
#include <cstdio>

// Each function stays one function with its own name in every build: gcc
// -O2 would clone area() (.isra) and the lambda (.constprop), whose
// clones a sleds build counts under the clone's name.
#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

static volatile int sink;

namespace shapes {
struct Circle {
	int r;
	NOINLINE int area() const { return 3 * r * r; }
	NOINLINE void grow(int by) { r += by; }
	NOINLINE void grow(double by) { r += (int)by; }
};

template <typename T> NOINLINE T twice(T x)
{
	return x + x;
}

NOINLINE bool operator<(const Circle &a, const Circle &b)
{
	return a.r < b.r;
}
} // namespace shapes

int main()
{
	shapes::Circle c{ 2 }, d{ 3 };
	auto square = [](int x) NOINLINE { return x * x; };

	c.grow(1);
	c.grow(1.5);
	sink += c.area();
	sink += shapes::twice<int>(4) + (int)shapes::twice<double>(1.5);
	sink += c < d;
	sink += square(sink);
	std::printf("%d\n", sink);
	return 0;
}
