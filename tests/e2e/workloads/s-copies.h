/*
 * s-copies.h - a static function in a header, as a static inline one is
 * wherever it stays out of line: each translation unit that includes it
 * (s-copies.c, s-copies-a.c, s-copies-b.c) gets a copy of its own, at its
 * own address.  A hooks build would keep a copy of an inline one (it takes
 * the address), a sleds build none where every call is inlined: so it is
 * noinline, and not inline (gcc warns of the two together).
 */
#ifndef S_COPIES_H
#define S_COPIES_H

extern volatile unsigned copies_sink;

static __attribute__((noinline, unused)) unsigned little_endian(unsigned x)
{
	copies_sink += x;
	return copies_sink & 1;
}

unsigned copies_a(int n);
unsigned copies_b(int n);

#endif
