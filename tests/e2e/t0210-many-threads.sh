#!/bin/sh
# matrix: cc-opt
# suite: thread
test_description='10,000 short-lived threads, 1,000 at once: every call counted, memory bounded by call paths'
. "$(dirname "$0")/lib.sh"

test_expect_success '10 waves of 1000 threads: exact counts' '
	build_workload s-manythreads.c &&
	callprof record -o many.cprof -- ./t-manythreads 10 >out10 2>err &&
	grep "^callprof: wrote many.cprof: 10003 threads, " err &&
	cat >expect <<-\EOT &&
	main 1
	main;peak_kb 1
	short_main 10000
	short_main;shortwork 10000
	short_main;shortwork;leaf 30000
	steady_main 2
	steady_main;steadywork 2000
	EOT
	callprof export -f folded -m calls many.cprof >actual &&
	test_cmp expect actual
'

# The first 256 threads to end keep trees of their own; the rest are added
# into one tree per thread name.
test_expect_success 'exited threads beyond the first 256 are kept per name, names intact' '
	callprof report --threads=each many.cprof >each &&
	grep "^== short (exited) (9[0-9][0-9][0-9] threads, " each &&
	grep -c "^== " each >ntrees &&
	test $(cat ntrees) -le 260 &&
	grep -q "^== short/[0-9]* (1 thread, " each &&
	grep -q "^== steady" each
'

# Memory is a relation, not a figure: five times the threads (at the same
# number alive at once) must not cost much more.
test_expect_success 'peak memory does not grow with the number of threads' '
	callprof record -o few.cprof -- ./t-manythreads 2 >out2 &&
	p10=$(sed -n "s/^peak //p" out10) &&
	p2=$(sed -n "s/^peak //p" out2) &&
	echo "peak RSS: $p2 kB with 2000 threads, $p10 kB with 10000" &&
	test "$p10" -lt $((p2 * 3 / 2))
'

test_expect_success 'times stay consistent in the folded trees' '
	callprof export -f folded -m self many.cprof >self &&
	callprof export -f folded -m total many.cprof >total &&
	check_time_relations self total
'

test_done
