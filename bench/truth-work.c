/*
 * truth-work.c - the workload of bench/truth-smoke: a small program whose
 * time is spread the way real programs spread it, so that callprof's
 * picture of it can be held against a sampling profiler's of its plain
 * build in seconds.  Its parts:
 *
 *   scan       a memory-bound walk over a table larger than the caches,
 *              no calls: the biggest share
 *   by_key     a comparator that qsort (libc, not instrumented) calls
 *              back: instrumented code inside uninstrumented code
 *   mix        a tiny function called very often: hook cost dominates it
 *   get_ppid   system calls: kernel time, charged to its caller
 *
 * Every function prints nothing; main prints one checksum, so the plain
 * and instrumented builds can be told to agree.  The call counts are exact
 * and known (bench/truth-smoke checks them): ROUNDS calls of each of
 * round, scan, sort_keys and syscalls, ROUNDS * MIX_CALLS of mix.
 *
 *   truth-work [SCALE]    (SCALE, default 1, multiplies the work)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ROUNDS 8
#define MIX_CALLS 2000000
#define TABLE (8u << 20) /* 32 MB of uint32_t */

static uint32_t *table;
static uint32_t keys[50000];

__attribute__((noinline)) static uint64_t scan(uint32_t steps)
{
	uint64_t sum = 0;
	uint32_t at = 1;

	/* A chain through the table: each load depends on the one before. */
	for (uint32_t i = 0; i < steps; i++) {
		at = table[at];
		sum += at;
	}
	return sum;
}

__attribute__((noinline)) static int by_key(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) static uint64_t sort_keys(uint32_t seed)
{
	for (uint32_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		seed = seed * 1103515245u + 12345u;
		keys[i] = seed >> 8;
	}
	qsort(keys, sizeof(keys) / sizeof(keys[0]), sizeof(keys[0]), by_key);
	return keys[0];
}

__attribute__((noinline)) static uint32_t mix(uint32_t x)
{
	return x * 2654435761u ^ (x >> 13);
}

__attribute__((noinline)) static uint64_t get_ppid(uint32_t n)
{
	uint64_t sum = 0;

	/* Which process is the parent differs under a profiler: count, not sum. */
	for (uint32_t i = 0; i < n; i++)
		sum += getppid() > 0;
	return sum;
}

__attribute__((noinline)) static uint64_t round_of(uint32_t r, uint32_t scale)
{
	uint64_t sum = scan(300000 * scale);
	uint32_t x = r;

	sum += sort_keys(r + 1);
	for (uint32_t i = 0; i < MIX_CALLS * scale; i++)
		x = mix(x + i);
	return sum + x + get_ppid(15000 * scale);
}

int main(int argc, char **argv)
{
	uint32_t scale = argc > 1 ? (uint32_t)atoi(argv[1]) : 1, seed = 7;
	uint64_t sum = 0;

	if (scale < 1)
		scale = 1;
	table = malloc(TABLE * sizeof(*table));
	if (!table)
		return 1;
	/* A random cycle through the whole table (Sattolo), so scan misses the caches. */
	for (uint32_t i = 0; i < TABLE; i++)
		table[i] = i;
	for (uint32_t i = TABLE - 1; i > 0; i--) {
		uint32_t j, t;

		seed = seed * 1103515245u + 12345u;
		j = (seed >> 4) % i;
		t = table[i];
		table[i] = table[j];
		table[j] = t;
	}
	for (uint32_t r = 0; r < ROUNDS; r++)
		sum += round_of(r, scale);
	printf("%llu\n", (unsigned long long)sum);
	free(table);
	return 0;
}
