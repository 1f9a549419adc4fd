#!/bin/sh
# matrix: cc-opt
# suite: thread
test_description='10,000 short-lived threads, 1,000 at once: every call counted, memory bounded by call paths'
. "$(dirname "$0")/lib.sh"

# ASan's quarantine holds freed blocks back from reuse, up to 256 MB by
# default: a sanitized program's resident memory grows with all it has
# ever freed, and ten waves of threads free five times what two do (here
# the plain workload under ASan, without callprof: 125 MB after two waves,
# 188 MB after ten).  The memory check below is of what callprof keeps,
# bounded by the threads alive at once: no quarantine for this run.
if sanitized address; then
	ASAN_OPTIONS=$ASAN_OPTIONS:quarantine_size_mb=0:thread_local_quarantine_size_kb=0
fi

test_expect_success '10 waves of 1000 threads: exact counts' '
	build_workload s-manythreads.c &&
	callprof record -o many.cprof -- ./t-manythreads 10 >out10 2>err &&
	grep "^callprof: wrote many.cprof: 10003 threads, 52005 calls, " err &&
	cat >expect <<-\EOT &&
	main 1
	main;peak_kb 2
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
# number alive at once) must not cost much more.  Both peaks are of one
# run (after the second wave and after the tenth), so that nothing but the
# threads that came and went since differs between them.
test_expect_success 'peak memory does not grow with the number of threads' '
	p10=$(sed -n "s/^peak //p" out10) &&
	p2=$(sed -n "s/^peak2 //p" out10) &&
	echo "peak RSS: $p2 kB after 2000 threads, $p10 kB after 10000" &&
	test "$p10" -lt $((p2 * 3 / 2))
'

test_expect_success 'times stay consistent in the folded trees' '
	callprof export -f folded -m self many.cprof >self &&
	callprof export -f folded -m total many.cprof >total &&
	check_time_relations self total
'

test_done
