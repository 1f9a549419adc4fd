// s-cxx.cc - C++ names: namespaces, classes, overloads, templates,
// operators, a lambda; the report prints them as c++filt does, parameters
// included.
#include <cstdio>

static volatile int sink;

namespace shapes {
struct Circle {
	int r;
	__attribute__((noinline)) int area() const { return 3 * r * r; }
	__attribute__((noinline)) void grow(int by) { r += by; }
	__attribute__((noinline)) void grow(double by) { r += (int)by; }
};

template <typename T> __attribute__((noinline)) T twice(T x)
{
	return x + x;
}

__attribute__((noinline)) bool operator<(const Circle &a, const Circle &b)
{
	return a.r < b.r;
}
} // namespace shapes

int main()
{
	shapes::Circle c{ 2 }, d{ 3 };
	auto square = [](int x) __attribute__((noinline)) { return x * x; };

	c.grow(1);
	c.grow(1.5);
	sink += c.area();
	sink += shapes::twice<int>(4) + (int)shapes::twice<double>(1.5);
	sink += c < d;
	sink += square(sink);
	std::printf("%d\n", sink);
	return 0;
}
