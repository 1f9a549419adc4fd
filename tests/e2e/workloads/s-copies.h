/*
 * s-copies.h - a static inline function in a header: each translation
 * unit that includes it (s-copies.c, s-copies-a.c, s-copies-b.c) gets a
 * copy of its own, at its own address.  A hooks build takes its address,
 * so one exists even where the calls are inlined; a sleds build has none
 * where every call is inlined, hence noinline: the copies stay calls.
 */
#ifndef S_COPIES_H
#define S_COPIES_H

extern volatile unsigned copies_sink;

static inline __attribute__((noinline)) unsigned little_endian(unsigned x)
{
	copies_sink += x;
	return copies_sink & 1;
}

unsigned copies_a(int n);
unsigned copies_b(int n);

#endif
