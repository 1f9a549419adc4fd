#!/bin/sh
# matrix: cc-opt
# suite: thread
test_description='threads: merged and per-thread call counts, thread names'
. "$(dirname "$0")/lib.sh"

test_expect_success 'build the threads workload' '
	build_workload s-threads.c
'

test_expect_success 'merged counts add up the four workers' '
	callprof record -o th.cprof -- ./t-threads &&
	callprof export -f folded -m calls th.cprof >actual &&
	test_cmp "$EXPECT/threads.calls" actual
'

test_expect_success 'merged is the default' '
	callprof export -f folded -m calls --threads=merged th.cprof >actual.merged &&
	test_cmp "$EXPECT/threads.calls" actual.merged
'

test_expect_success 'per thread: the first frame is the thread name' '
	callprof export -f folded -m calls --threads=each th.cprof >actual.each &&
	test_cmp "$EXPECT/threads-each.calls" actual.each
'

test_expect_success 'the same counts in repeated runs' '
	for i in 1 2 3 4 5
	do
		callprof record -o th$i.cprof -- ./t-threads &&
		callprof export -f folded -m calls --threads=each th$i.cprof >each$i &&
		test_cmp "$EXPECT/threads-each.calls" each$i || return 1
	done
'

test_done
