/*
 * ring.c - reading a perf_event mmap ring.
 *
 * The kernel writes records after data_head and never past data_tail;
 * we own data_tail.  data_head is read with acquire ordering so that the
 * record bytes it covers are visible before we read them, and data_tail is
 * written with release ordering so that the kernel cannot reuse the space
 * before we are done copying out of it.  Records are 8-byte aligned but
 * may straddle the end of the data area; each is copied into one piece
 * first, so the parsers never deal with the wrap.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "sample/internal.h"
#include "util/util.h"

/* Copy len bytes at ring position pos (any value; wraps) into dst. */
static void ring_copy(const struct cp_ring *r, uint64_t pos, void *dst, size_t len)
{
	size_t off = pos & r->mask, first = r->mask + 1 - off;

	if (first >= len) {
		memcpy(dst, r->data + off, len);
	} else {
		memcpy(dst, r->data + off, first);
		memcpy((char *)dst + first, r->data, len - first);
	}
}

int cp_ring__drain(struct cp_ring *r, cp_ring_fn fn, void *arg)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	/* A record is at most 64 KiB (its size is a u16); u64 keeps it aligned. */
	static uint64_t buf[65536 / sizeof(uint64_t)];
	int n = 0;

	while (tail < head) {
		struct perf_event_header h;

		if (head - tail < sizeof(h))
			goto corrupt;
		ring_copy(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			goto corrupt;
		ring_copy(r, tail, buf, h.size);
		fn(buf, h.size, arg);
		tail += h.size;
		n++;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;

corrupt:
	__atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
	return -1;
}
