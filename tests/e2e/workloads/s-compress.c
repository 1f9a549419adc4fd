/*
 * s-compress: the shape of a compressor's inner loop, where a loaded CPU
 * moved the picture when elapsed time was the weight.  compress() scans a
 * buffer through a tiny read16() (millions of calls, nearly no work of
 * their own: their hooks are most of their time) and hashes each position
 * itself; checksum() runs over the buffer without calls, 12 times: enough
 * to be on top in every column without the hooks (perf: 60-73%; at 8 gcc
 * -O0 had compress on top).  Preempted while in read16's hooks, the time
 * lands in read16's context.
 *
 *   t-compress [ROUNDS]   default 240
 */
#include <stdlib.h>

#include "workload.h"

volatile long sink;
static unsigned char buf[1 << 16];

NOINLINE unsigned read16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

NOINLINE unsigned long compress(void)
{
	unsigned long h = 0;

	for (size_t i = 0; i + 1 < sizeof(buf); i++) {
		unsigned v = read16(buf + i);

		for (int k = 0; k < 4; k++)
			h = (h ^ v) * 0x100000001b3UL + (unsigned long)k;
	}
	return h;
}

NOINLINE unsigned long checksum(void)
{
	unsigned long s = 0;

	for (int r = 0; r < 12; r++)
		for (size_t i = 0; i < sizeof(buf); i++)
			s = (s + buf[i]) * 31 + (unsigned long)r;
	return s;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 240;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 2654435761u >> 13);
	for (int r = 0; r < rounds; r++)
		sink ^= (long)((compress() ^ checksum()) & 0x7fffffff);
	return 0;
}
