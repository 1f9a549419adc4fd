/*
 * test-sample.c - the sampler's pieces that need no kernel: reading a
 * perf ring across the end of its data area, load biases from program
 * headers, and the tree a few stacks make.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "sample/internal.h"
#include "tests/unit/unittest.h"

#define RING 256 /* data bytes of the fake ring */

static struct perf_event_mmap_page meta;
static unsigned char data[RING];
static struct cp_ring ring = { .meta = &meta, .data = data, .mask = RING - 1 };

/* Write a record of len bytes (type, then the byte pattern i) at ring position pos. */
static void put_record(uint64_t pos, uint16_t len, uint32_t type)
{
	unsigned char rec[RING];
	struct perf_event_header h = { .type = type, .size = len };

	memcpy(rec, &h, sizeof(h));
	for (uint16_t i = sizeof(h); i < len; i++)
		rec[i] = (unsigned char)(type + i);
	for (uint16_t i = 0; i < len; i++)
		data[(pos + i) & (RING - 1)] = rec[i];
}

static int seen, bad;
static size_t seen_len[8];

static void check_record(const void *rec, size_t len, void *arg)
{
	const struct perf_event_header *h = rec;
	const unsigned char *p = rec;

	if (h->size != len)
		bad++;
	for (size_t i = sizeof(*h); i < len; i++)
		if (p[i] != (unsigned char)(h->type + i))
			bad++;
	seen_len[seen++ & 7] = len;
}

TEST(ring_record_across_the_wrap_is_whole)
{
	/* Three records from 200: 40 bytes, then 48 crossing 256, then 16. */
	meta.data_tail = 200 + 5 * RING; /* positions keep counting past the size */
	put_record(meta.data_tail, 40, 1);
	put_record(meta.data_tail + 40, 48, 2);
	put_record(meta.data_tail + 88, 16, 3);
	meta.data_head = meta.data_tail + 104;
	seen = bad = 0;
	CHECK_EQ(cp_ring__drain(&ring, check_record, NULL), 3);
	CHECK_EQ(bad, 0);
	CHECK_EQ(seen_len[0], 40);
	CHECK_EQ(seen_len[1], 48);
	CHECK_EQ(seen_len[2], 16);
	CHECK_EQ(meta.data_tail, meta.data_head);
	/* Nothing new: nothing read, tail unchanged. */
	CHECK_EQ(cp_ring__drain(&ring, check_record, NULL), 0);
}

TEST(ring_header_split_by_the_wrap)
{
	meta.data_tail = RING - 4; /* records are 8-aligned, but the reader must not care */
	put_record(meta.data_tail, 24, 7);
	meta.data_head = meta.data_tail + 24;
	seen = bad = 0;
	CHECK_EQ(cp_ring__drain(&ring, check_record, NULL), 1);
	CHECK_EQ(bad, 0);
}

TEST(ring_corrupt_size_skips_to_head)
{
	meta.data_tail = 0;
	put_record(0, 64, 1);
	meta.data_head = 32; /* the record claims more than there is */
	CHECK_EQ(cp_ring__drain(&ring, check_record, NULL), -1);
	CHECK_EQ(meta.data_tail, 32);
	put_record(32, 0, 1); /* size 0 would loop forever */
	meta.data_head = 48;
	CHECK_EQ(cp_ring__drain(&ring, check_record, NULL), -1);
	CHECK_EQ(meta.data_tail, 48);
}

TEST(load_bias_of_pie_text_mapping)
{
	/* A PIE as Debian links it: r, r-x, r, rw (the last shares a page with the one before). */
	struct cp_elf_seg segs[] = {
		{ .vaddr = 0x0, .memsz = 0x1a40, .offset = 0x0, .filesz = 0x1a40, .flags = 4 },
		{ .vaddr = 0x2000, .memsz = 0x9db1, .offset = 0x2000, .filesz = 0x9db1,
		  .flags = 5 },
		{ .vaddr = 0xc000, .memsz = 0x2e00, .offset = 0xc000, .filesz = 0x2e00,
		  .flags = 4 },
		{ .vaddr = 0xfbd0, .memsz = 0x6f0, .offset = 0xebd0, .filesz = 0x4b0, .flags = 6 },
	};
	uint64_t bias = 0;

	CHECK_EQ(cp_load_bias(segs, 4, 0x555555556000ull, 0x2000, &bias), 0);
	CHECK_EQ(bias, 0x555555554000ull);
	/* The data segment: mapped from offset 0xe000 at vaddr 0xf000 + bias. */
	CHECK_EQ(cp_load_bias(segs, 4, 0x555555563000ull, 0xe000, &bias), 0);
	CHECK_EQ(bias, 0x555555554000ull);
	/* A non-PIE (ET_EXEC) text segment: bias 0. */
	segs[1].vaddr = 0x402000;
	CHECK_EQ(cp_load_bias(segs + 1, 1, 0x402000, 0x2000, &bias), 0);
	CHECK_EQ(bias, 0);
	CHECK_EQ(cp_load_bias(segs, 1, 0x1000, 0x40000, &bias), -1);
}

TEST(tree_counts_paths_inclusively_with_call_sites)
{
	struct sp_tree t;
	/* main -> run -> hot twice, main -> run -> hot from another site once. */
	struct sp_frame a[] = { { 0x100, 0 }, { 0x200, 0x105 }, { 0x300, 0x205 } };
	struct sp_frame b[] = { { 0x100, 0 }, { 0x200, 0x105 }, { 0x300, 0x209 } };

	sp_tree__init(&t);
	sp_tree__add(&t, a, 3, 0x310, 1000);
	sp_tree__add(&t, a, 3, 0x310, 1000);
	sp_tree__add(&t, b, 3, 0x318, 500);
	sp_tree__add(&t, a, 2, 0x220, 1000); /* in run itself */
	CHECK_EQ(t.nnodes, 5); /* root, main, run, hot, hot's other site */
	CHECK_EQ(t.nodes[0].calls, 4);
	CHECK_EQ(t.nodes[0].ticks, 3500);
	CHECK_EQ(t.nodes[2].calls, 4);
	CHECK_EQ(t.nodes[3].fn, 0x300);
	CHECK_EQ(t.nodes[3].calls, 2);
	CHECK_EQ(t.nodes[4].flags, CP_NODE_SITE);
	CHECK_EQ(t.nodes[4].parent, 2);
	CHECK_EQ(t.nodes[4].site, 0x209);
	CHECK_EQ(t.nodes[4].calls, 1);
	CHECK_EQ(t.nodes[4].ticks, 500);
	/* Lines: per leaf context and address; the site record is never a line's node. */
	CHECK_EQ(t.nlines, 3);
	CHECK_EQ(t.lines[0].node, 3);
	CHECK_EQ(t.lines[0].samples, 2);
	CHECK_EQ(t.lines[1].node, 3);
	CHECK_EQ(t.lines[1].ip, 0x318);
	CHECK_EQ(t.lines[2].node, 2);
	sp_tree__release(&t);
}

/*
 * A sample whose call site is new adds a site record, which can move the
 * node array: the count must go to the moved record (ASan saw the old
 * array written when both were in one expression).
 */
TEST(tree_new_site_records_survive_the_nodes_moving)
{
	struct sp_tree t;
	uint64_t total = 0;

	sp_tree__init(&t);
	for (uint64_t i = 0; i < 1000; i++) {
		struct sp_frame f[] = { { 0x100, 0 }, { 0x200, 0x105 + i } };

		sp_tree__add(&t, f, 2, 0x210, 1 + i);
		total += 1 + i;
	}
	CHECK_EQ(t.nnodes, 1001 + 1); /* root, main, run, 999 more sites of run */
	CHECK_EQ(t.nodes[0].ticks, total);
	CHECK_EQ(t.nodes[2].calls, 1);
	CHECK_EQ(t.nodes[2].site, 0x105);
	for (uint32_t k = 3; k < t.nnodes; k++) {
		CHECK_EQ(t.nodes[k].flags, CP_NODE_SITE);
		CHECK_EQ(t.nodes[k].calls, 1);
		CHECK_EQ(t.nodes[k].ticks, t.nodes[k].site - 0x105 + 1);
	}
	sp_tree__release(&t);
}
