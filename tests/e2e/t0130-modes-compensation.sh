#!/bin/sh
# matrix: cc-opt
test_description='counting and coverage modes; overhead compensation'
. "$(dirname "$0")/lib.sh"

WORKLOADS_COMPARED="nested fib mutual fnptr paths threads"

test_expect_success 'build the workloads' '
	for w in $WORKLOADS_COMPARED tiny
	do
		build_workload s-$w.c || return 1
	done
'

test_expect_success 'counting mode: the same exact counts as timing mode' '
	for w in $WORKLOADS_COMPARED
	do
		callprof record -o $w.timing.cprof -- ./t-$w >/dev/null &&
		callprof record --mode=counting -o $w.counting.cprof -- ./t-$w >/dev/null 2>err &&
		grep "^callprof: wrote $w.counting.cprof: .* call paths (counting)$" err &&
		callprof export -f folded -m calls $w.timing.cprof >$w.timing.calls &&
		callprof export -f folded -m calls $w.counting.cprof >$w.counting.calls &&
		test_cmp $w.timing.calls $w.counting.calls &&
		callprof export -f folded -m calls --threads=each $w.timing.cprof >$w.timing.each &&
		callprof export -f folded -m calls --threads=each $w.counting.cprof >$w.counting.each &&
		test_cmp $w.timing.each $w.counting.each || return 1
	done
'

test_expect_success 'coverage mode: the same set of functions as timing mode' '
	for w in $WORKLOADS_COMPARED
	do
		callprof record --mode=coverage -o $w.coverage.cprof -- ./t-$w >/dev/null 2>err &&
		grep "functions ran (coverage)$" err &&
		callprof report --flat --fields=name --sort=name $w.timing.cprof >$w.timing.fns &&
		callprof report --flat --fields=name --sort=name $w.coverage.cprof >$w.coverage.fns &&
		test_cmp $w.timing.fns $w.coverage.fns || return 1
	done
'

test_expect_success 'coverage mode: per thread, each function once' '
	callprof export -f folded -m calls --threads=each threads.coverage.cprof >cov &&
	! grep -v " 1$" cov &&
	sed "s/ 1$//" cov | LC_ALL=C sort >cov-pairs &&
	callprof export -f folded -m calls --threads=each threads.timing.cprof >tim &&
	sed "s/ [0-9]*$//; s/^\([^;]*\);.*;\([^;]*\)$/\1;\2/" tim | LC_ALL=C sort -u >tim-pairs &&
	test_cmp tim-pairs cov-pairs
'

test_expect_success 'modes without times refuse time metrics, print "-" in time columns' '
	test_must_fail callprof export -f folded -m self nested.counting.cprof 2>err &&
	test_line_count = 1 err &&
	grep "has no times" err &&
	callprof report --fields=calls,total,name nested.counting.cprof >report &&
	grep -E "^ +1 +-  main$" report &&
	callprof report nested.counting.cprof >banner &&
	grep "^# mode: counting" banner
'

test_expect_success 'only tiny calls: compensation never goes negative, relations hold' '
	callprof record -o tiny.cprof -- ./t-tiny >out &&
	callprof export -f folded -m self tiny.cprof >self &&
	callprof export -f folded -m total tiny.cprof >total &&
	! grep -- "-[0-9]" self total &&
	check_time_relations self total &&
	callprof export -f folded -m self --threads=each tiny.cprof >self-each &&
	callprof export -f folded -m total --threads=each tiny.cprof >total-each &&
	check_time_relations self-each total-each
'

# not_above A B: every path's value in folded export A is <= its value in B.
not_above () {
	awk "NR == FNR { v[\$1] = \$2; next } !(\$1 in v) || \$2 > v[\$1] { print; bad = 1 } END { exit bad }" \
		"$2" "$1"
}

test_expect_success 'compensated times never exceed raw ones; raw relations hold too' '
	callprof export -f folded -m self --no-compensate tiny.cprof >raw-self &&
	callprof export -f folded -m total --no-compensate tiny.cprof >raw-total &&
	check_time_relations raw-self raw-total &&
	not_above self raw-self &&
	not_above total raw-total
'

test_expect_success 'the banner says what compensation subtracted; --no-compensate says raw' '
	callprof report tiny.cprof >report &&
	grep -E "^# overhead compensated: [0-9.]+ns per call in the caller, [0-9.]+ns in the callee; .* subtracted \([0-9.]+%\)" report &&
	callprof report --no-compensate tiny.cprof >raw &&
	grep "^# clock: .*; raw times: they include hook overhead of" raw
'

# Whether a given time is mostly overhead depends on measured durations, so
# the exact marking rule is tested on a hand-made profile (test-report.c);
# here only that a workload of nothing but tiny calls gets marks at all, and
# raw times never do.
# Whether nop'"'"'s time is mostly overhead depends on the machine'"'"'s load:
# other jobs on the same cores can double what each hook costs while the
# calibration (the best of many tries, at exit) does not see it.  So one
# of up to three recordings must show the mark; none may show it raw.
test_expect_success 'times that are mostly overhead are marked ~, raw times never' '
	callprof report --no-compensate --min-percent=0 --fields=calls,total,self,name tiny.cprof >unmarked &&
	! grep "~" unmarked &&
	cp tiny.cprof try.cprof &&
	for i in 1 2 3
	do
		callprof report --min-percent=0 --fields=calls,total,self,name try.cprof >marked &&
		if grep -E "~[0-9.]+[a-z]+ " marked
		then
			break
		fi &&
		callprof record -o try.cprof -- ./t-tiny >out || exit 1
	done &&
	grep -E "~[0-9.]+[a-z]+ " marked
'

test_done
