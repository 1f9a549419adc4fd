/*
 * profiles.h - hand-made profile files for the unit tests of the report
 * model: a writer of whole files from node and thread records, and the
 * small two-thread profile test-filter.c and test-tui.c work on.
 */
#ifndef CP_TESTS_UNIT_PROFILES_H
#define CP_TESTS_UNIT_PROFILES_H

#include "format/format.h"
#include "tests/unit/unittest.h"

/*
 * Write a timing profile to path: meta (NULL: CLOCK_MONOTONIC, one tick a
 * nanosecond), nn node records, nth thread records whose names are
 * names[i] (each thread record's name is set here).
 */
static inline void cp_test__write_profile(const char *path, const struct cp_meta *meta,
					  const struct cp_node_rec *n, uint32_t nn,
					  struct cp_thread_rec *th, const char *const *names,
					  uint32_t nth)
{
	static struct cp_writer w;
	struct cp_meta dflt = { .clock = CP_CLOCK_MONOTONIC, .ticks_per_sec = 1000000000u };

	CHECK_EQ(cp_writer__begin(&w, path), 0);
	cp_writer__section(&w, CP_SEC_META, sizeof(*meta));
	cp_writer__put(&w, meta ? meta : &dflt, sizeof(*meta));
	cp_writer__section(&w, CP_SEC_NODES, sizeof(n[0]));
	cp_writer__put(&w, n, nn * sizeof(n[0]));
	for (uint32_t i = 0; i < nth; i++)
		th[i].name = cp_writer__string(&w, names[i]);
	cp_writer__section(&w, CP_SEC_THREADS, sizeof(th[0]));
	cp_writer__put(&w, th, nth * sizeof(th[0]));
	CHECK_EQ(cp_writer__finish(&w, CP_FEAT_TIMING), 0);
}

#define M 0x100
#define G 0x200
#define A 0x300
#define B 0x400
#define C 0x500

/*
 * Thread "main" (tid 1):
 *   root             ticks 2000
 *     M              calls 1, ticks 1900                self 100
 *       G            calls 2, ticks 1000, wait 30       self 300
 *         A          calls 4, ticks 300, min 50, max 100
 *         B          calls 1, ticks 400
 *       A            calls 6, ticks 600, min 20, max 200
 *       C            calls 1, ticks 200                 self 150
 *         G          calls 1, ticks 50, wait 7, vol 1
 * Thread "worker" (tid 2):
 *   root             ticks 500
 *     C              calls 3, ticks 400
 */
static inline void cp_test__mgabc_profile(const char *path)
{
	static const char *const names[2] = { "main", "worker" };
	struct cp_thread_rec th[2] = { 0 };
	struct cp_node_rec n[10] = { 0 };

	n[0] = (struct cp_node_rec){ .parent = CP_NO_PARENT, .calls = 1, .ticks = 2000 };
	n[1] = (struct cp_node_rec){ .fn = M, .parent = 0, .calls = 1, .ticks = 1900,
				     .min_ticks = 1900, .max_ticks = 1900 };
	n[2] = (struct cp_node_rec){ .fn = G, .parent = 1, .calls = 2, .ticks = 1000,
				     .wait_ticks = 30 };
	n[3] = (struct cp_node_rec){ .fn = A, .parent = 2, .calls = 4, .ticks = 300,
				     .min_ticks = 50, .max_ticks = 100 };
	n[4] = (struct cp_node_rec){ .fn = B, .parent = 2, .calls = 1, .ticks = 400,
				     .min_ticks = 400, .max_ticks = 400 };
	n[5] = (struct cp_node_rec){ .fn = A, .parent = 1, .calls = 6, .ticks = 600,
				     .min_ticks = 20, .max_ticks = 200 };
	n[6] = (struct cp_node_rec){ .fn = C, .parent = 1, .calls = 1, .ticks = 200 };
	n[7] = (struct cp_node_rec){ .fn = G, .parent = 6, .calls = 1, .ticks = 50,
				     .wait_ticks = 7, .switches_vol = 1 };
	n[8] = (struct cp_node_rec){ .parent = CP_NO_PARENT, .calls = 1, .ticks = 500 };
	n[9] = (struct cp_node_rec){ .fn = C, .parent = 0, .calls = 3, .ticks = 400 };
	th[0] = (struct cp_thread_rec){ .tid = 1, .nnodes = 8, .nthreads = 1 };
	th[1] = (struct cp_thread_rec){ .tid = 2, .first_node = 8, .nnodes = 2, .nthreads = 1,
					.seq = 1 };
	cp_test__write_profile(path, NULL, n, 10, th, names, 2);
}

#endif /* CP_TESTS_UNIT_PROFILES_H */
