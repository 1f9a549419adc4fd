/*
 * s-sled-spin: one thread calls an empty function in a loop, so that a
 * stop lands inside its sled (gcc's five 1-byte NOPs) about half the time
 * (t0516: callprof attach moves such a thread to the sled's end).
 *
 *   t-sled-spin READY STOP
 *
 * Writes its pid to READY (by rename), loops until the file STOP exists,
 * then prints "done" and exits 0.
 */
#include <stdio.h>
#include <unistd.h>

#include "workload.h"

NOINLINE void empty(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	if (ready_file(argv[1]))
		return 2;
	for (unsigned long i = 1;; i++) {
		empty();
		if (!(i & 0xfffff) && !access(argv[2], F_OK))
			break;
	}
	printf("done\n");
	return 0;
}
