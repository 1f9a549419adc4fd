// s-attach-catch.cc - C++ that throws and catches, waiting to be attached
// to (t0516: callprof attach refuses a sleds build of it, unharmed).
//
//   t-attach-catch READY STOP
//
// Writes its pid to READY (by rename), then throws and catches an int in
// a loop until the file STOP exists; prints "done" and the sum, exits 0.
#include <cstdio>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE void thrower(long i)
{
	if (i % 3 == 0)
		throw (int)(i & 7);
	sink += i;
}

int main(int argc, char **argv)
{
	long sum = 0;

	if (argc != 3)
		return 2;
	if (ready_file(argv[1]))
		return 2;
	for (long i = 1;; i++) {
		try {
			thrower(i);
		} catch (int v) {
			sum += v;
		}
		if (!(i & 0xfff) && !access(argv[2], F_OK))
			break;
	}
	printf("done %ld\n", sum > 0 ? 1L : 0L);
	return 0;
}
