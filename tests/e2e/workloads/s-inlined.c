/*
 * s-inlined.c - functions inlined into their callers (always, even at
 * -O0), for `report --lines`: mix has no hooks (as clang's
 * -finstrument-functions-after-inlining leaves every inlined function),
 * stir keeps them in its inlined copies (gcc's -finstrument-functions).
 * tick, called often, puts samples in the PLT stubs of the hooks.
 */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned sink;

static inline __attribute__((always_inline, no_instrument_function)) void mix(unsigned i)
{
	for (unsigned k = 0; k < 64; k++)
		sink += i * 3u + k; /* MIX */
}

static inline __attribute__((always_inline)) void stir(unsigned i)
{
	for (unsigned k = 0; k < 64; k++)
		sink ^= i + k; /* STIR */
}

__attribute__((noinline)) void tick(void)
{
	sink++;
}

__attribute__((noinline)) static void work(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		mix(i);
		stir(i);
		tick();
	}
}

__attribute__((noinline)) static void again(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		mix(i);
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 100000;

	work(n);
	again(n);
	printf("%u\n", sink);
	return 0;
}
