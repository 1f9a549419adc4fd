/*
 * s-cc-vec: a C++ program whose hot loop is std::vector's operator[], a
 * function of a system header that -O2 inlines.  Built by `callprof c++`,
 * only its own functions have hooks: main -> total(int), 3 calls.  Built
 * with gcc's -finstrument-functions alone, operator[] has hooks too (1000
 * calls per total), inlined or not.
 */
#include <vector>

#include "workload.h"

volatile long sink;
static std::vector<int> v(1000, 1);

NOINLINE long total(int k)
{
	long s = 0;

	for (std::size_t i = 0; i < v.size(); i++)
		s += v[i] * k;
	return s;
}

int main()
{
	for (int k = 1; k <= 3; k++)
		sink += total(k);
	return sink == 6000 ? 0 : 1;
}
