/*
 * test-clockcap.c - cpu mode's "[kernel]" periods held to the thread's CPU
 * clock at the dump (runtime/clockcap.h, used by runtime/flush.c): how
 * many periods come off, and how they are taken from the kernel lines.
 */
#include "runtime/clockcap.h"
#include "tests/unit/unittest.h"

/*
 * Period 250 us.  A thread whose CPU clock says 34.74 ms (138 periods, and
 * 2 of slack: 140) with 163 periods in its table, 27 of them kernel (t0315
 * on a loaded VM): 23 come off.  Never more than the kernel periods, none
 * within the slack, none when the clock is not known.
 */
TEST(the_periods_over_the_cpu_clock_come_off_the_kernel_ones)
{
	CHECK_EQ(cp_clock_cap(163, 27, 34743942, 250000), 23);
	CHECK_EQ(cp_clock_cap(163, 5, 34743942, 250000), 5);
	CHECK_EQ(cp_clock_cap(140, 27, 34743942, 250000), 0);
	CHECK_EQ(cp_clock_cap(141, 27, 34743942, 250000), 1);
	CHECK_EQ(cp_clock_cap(163, 27, 0, 250000), 0);
	CHECK_EQ(cp_clock_cap(163, 27, 34743942, 0), 0);
	CHECK_EQ(cp_clock_cap(0, 0, 34743942, 250000), 0);
}

/*
 * 8 of 16 kernel periods off lines of 10, 5 and 1: the running sum's
 * shares are 5, 7 and 8, so the lines give 5, 2 and 1.
 */
TEST(each_kernel_line_gives_its_share_and_the_takes_add_up)
{
	struct cp_cut c;

	cp_cut__init(&c, 8, 16);
	CHECK_EQ(cp_cut__take(&c, 10), 5);
	CHECK_EQ(cp_cut__take(&c, 5), 2);
	CHECK_EQ(cp_cut__take(&c, 1), 1);
	CHECK_EQ(c.left, 0);
	/* Lines that grew after the count (another thread adds to its table): never more than the cut. */
	cp_cut__init(&c, 3, 4);
	CHECK_EQ(cp_cut__take(&c, 4), 3);
	CHECK_EQ(cp_cut__take(&c, 4), 0);
	/* Every line, however many, and a cut of all. */
	cp_cut__init(&c, 7, 7);
	for (int k = 0; k < 7; k++)
		CHECK_EQ(cp_cut__take(&c, 1), 1);
	CHECK_EQ(cp_cut__take(&c, 1), 0);
	/* Nothing to take, or nothing to take from. */
	cp_cut__init(&c, 0, 9);
	CHECK_EQ(cp_cut__take(&c, 9), 0);
	cp_cut__init(&c, 5, 0);
	CHECK_EQ(cp_cut__take(&c, 9), 0);
}

/* Many small lines whose shares round down to nothing one by one still give all of the cut. */
TEST(small_lines_add_up_to_the_cut)
{
	struct cp_cut c;
	uint64_t sum = 0;

	cp_cut__init(&c, 100, 1000);
	for (int k = 0; k < 1000; k++) {
		uint64_t take = cp_cut__take(&c, 1);

		CHECK(take <= 1);
		sum += take;
	}
	CHECK_EQ(sum, 100);
}
