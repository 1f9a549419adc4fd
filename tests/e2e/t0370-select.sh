#!/bin/sh
# matrix: cc-opt
test_description='record-time selection: --exclude, --include, --exclude-tree, --exclude-file, --start, --max-depth, --budget'
. "$(dirname "$0")/lib.sh"

SEL="python3 $TEST_DIRECTORY/check-select.py"

# paths NAME OPTIONS...: record t-select with OPTIONS into NAME.cprof, its paths into NAME.paths
paths () {
	_n=$1
	shift
	callprof record -o $_n.cprof "$@" ./t-select >$_n.out 2>$_n.err &&
	callprof export -f json $_n.cprof >$_n.json &&
	$SEL paths $_n.json >$_n.paths
}

test_expect_success 'setup' '
	build_workload s-select.c &&
	paths all
'

test_expect_success '--exclude: no node, callees under the caller, exact counts' '
	paths ex --exclude noisy &&
	! grep "noisy" ex.paths &&
	grep -x "main;phase;leaf 6" ex.paths &&
	grep -x "main;phase;helper 20" ex.paths &&
	grep -x "main;phase;helper;leaf 40" ex.paths &&
	grep -x "main;setup;leaf 5" ex.paths &&
	callprof report ex.cprof >ex.report &&
	grep "^# recorded with --exclude .noisy. (1 function)" ex.report &&
	grep "^# 2 calls of excluded functions" ex.report &&
	callprof report ex.cprof ex.cprof >ex2.report &&
	grep "^# 4 calls of excluded functions" ex2.report
'

# noisy spins; with it excluded, its self time is phase'"'"'s.  Each run
# is compared with itself (shares of phase'"'"'s total), not the other run:
# the machine is shared and one run may be twice as slow as the other.  The
# times are those on the CPU: a preemption that lands in one of phase'"'"'s
# tiny calls would stretch it by the machine'"'"'s load.
# check_exclude_shares ALL EXCLUDED: the two json exports.
check_exclude_shares () {
	noisy=$($SEL self-cpu $1 "main;phase;noisy") &&
	before=$($SEL self-cpu $1 "main;phase") &&
	total=$($SEL cpu $1 "main;phase") &&
	after=$($SEL self-cpu $2 "main;phase") &&
	total_ex=$($SEL cpu $2 "main;phase") &&
	echo "phase self $before + noisy self $noisy of $total -> $after of $total_ex" &&
	test $total -gt 0 && test $total_ex -gt 0 &&
	share=$(( 1000 * (before + noisy) / total )) &&
	share_before=$(( 1000 * before / total )) &&
	share_ex=$(( 1000 * after / total_ex )) &&
	echo "shares (per mille): phase $share_before, phase + noisy $share -> $share_ex" &&
	test $share -gt 800 &&
	test $share_ex -gt $(( share - 100 )) &&
	test $share_ex -gt $(( share_before + 500 ))
}

# With the clock, noisy'"'"'s 2 million spins are enough.
test_expect_success '--exclude, --time=clock: the excluded function'"'"'s time goes to its caller'"'"'s self' '
	paths allc --time=clock &&
	paths exc --time=clock --exclude noisy &&
	check_exclude_shares allc.json exc.json
'

# Sampled CPU time: noisy'"'"'s samples are phase'"'"'s self samples once it is
# excluded (not a row of its own).  Each of its two calls spins for 50 ms of
# CPU time: some 400 samples in all at the default rate, whatever the
# machine's speed, and each call stays well under the 0.2 s that a stretch
# without hooks needs to fill the ring.
test_expect_success '--exclude, sampled CPU time: the excluded function'"'"'s samples go to its caller'"'"'s self' '
	callprof record -o alln.cprof ./t-select noisy 50ms >alln.out 2>alln.err &&
	callprof record -o exn.cprof --exclude noisy ./t-select noisy 50ms >exn.out 2>exn.err &&
	callprof export -f json alln.cprof >alln.json &&
	callprof export -f json exn.cprof >exn.json &&
	$SEL paths exn.json >exn.paths &&
	! grep noisy exn.paths &&
	callprof report --flat --fields=samples,name exn.cprof >exn.flat &&
	n=$(awk "\$2 == \"phase\" { print \$1 }" exn.flat) &&
	echo "phase: $n samples" &&
	test "$n" -ge 150 &&
	check_exclude_shares alln.json exn.json
'

test_expect_success '--exclude-tree: it and all it calls are gone; counted in the banner' '
	paths tree --exclude-tree noisy &&
	! grep "noisy" tree.paths &&
	! grep -x "main;phase;leaf 6" tree.paths &&
	grep -x "main;phase;helper;leaf 40" tree.paths &&
	callprof report tree.cprof >tree.report &&
	grep "^# 6 calls inside --exclude-tree functions were not recorded" tree.report
'

test_expect_success '--include: only matching functions get nodes' '
	paths inc --include phase --include "lea?" &&
	cat >inc.expect <<-\EOF &&
	leaf 5
	phase 2
	phase;leaf 46
	EOF
	sed "/ -\$/d" inc.paths >inc.counted &&
	test_cmp inc.expect inc.counted
'

test_expect_success '--regex: patterns are extended regular expressions' '
	paths re --regex --exclude "^(noisy|helper)$" &&
	! grep -e noisy -e helper re.paths &&
	grep -x "main;phase;leaf 46" re.paths
'

# Known gap: with clang 14 (DWARF 5) the source-file match finds no
# function yet (docs/limitations.md), so this runs for gcc builds only.
case $CC in
*clang*) ;;
*)
	test_expect_success '--exclude-file: every function of the source file' '
		paths file --exclude-file s-select.c &&
		sed "/ -\$/d" file.paths >file.counted &&
		test_must_be_empty file.counted
	'
	;;
esac

test_expect_success '--start: only the start function'"'"'s two subtrees, exact counts' '
	paths start --start phase &&
	cat >start.expect <<-\EOF &&
	phase 2
	phase;helper 20
	phase;helper;leaf 40
	phase;noisy 2
	phase;noisy;leaf 6
	EOF
	sed "/ -\$/d" start.paths >start.counted &&
	test_cmp start.expect start.counted &&
	callprof report --plist start.cprof >start.plist &&
	grep "Starting function: phase\$" start.plist
'

test_expect_success '--max-depth: deeper calls fold into the context at depth N' '
	paths depth --max-depth 3 &&
	! grep "main;deep;deep;deep" depth.paths &&
	grep -x "main;deep;deep 1" depth.paths &&
	! grep "main;phase;helper;leaf" depth.paths &&
	grep -x "main;phase;helper 20" depth.paths &&
	callprof report depth.cprof >depth.report &&
	grep "^# --max-depth 3: [0-9]* deeper calls folded" depth.report
'

# The budget keeps every count: the same paths with the same calls.
test_expect_success '--budget: counts identical, demotions listed' '
	callprof record --time=clock -o b0.cprof ./t-select fib 22 2>/dev/null &&
	callprof record --time=clock -o b1.cprof --budget 5 ./t-select fib 22 2>/dev/null &&
	callprof export -f json b0.cprof >b0.json &&
	callprof export -f json b1.cprof >b1.json &&
	$SEL paths b0.json >b0.paths &&
	$SEL paths b1.json >b1.paths &&
	test_cmp b0.paths b1.paths &&
	callprof report b1.cprof >b1.report &&
	grep "^# --budget 5.00%: [1-9][0-9]* call-path records" b1.report &&
	grep "^#   count-only: fib ([0-9]* contexts, [0-9]* calls)" b1.report
'

test_expect_success 'selection does not change the program'"'"'s output or exit status' '
	./t-select >plain.out &&
	test_cmp plain.out ex.out &&
	test_cmp plain.out start.out
'

test_expect_success 'bad selection options: one line, usage exit status' '
	test_expect_code 129 callprof record --regex --exclude "(" ./t-select 2>err &&
	test_line_count = 1 err &&
	grep "bad regular expression" err &&
	test_expect_code 129 callprof record --max-depth 0 ./t-select 2>err &&
	grep "max-depth wants a number" err &&
	test_expect_code 129 callprof record --budget abc ./t-select 2>err &&
	grep "budget wants a percentage" err &&
	test_expect_code 129 callprof record --mode=coverage --start phase ./t-select 2>err &&
	test_expect_code 1 callprof record -o nostart.cprof --start no_such_fn ./t-select 2>err &&
	test_line_count = 1 err &&
	grep "start .no_such_fn. matches no function" err &&
	test_path_is_missing nostart.cprof
'

# A thread's TLS destructors run after the runtime's own saw it end: a
# thread muted then (outside every --start function, inside an
# --exclude-tree function it never returned from) stays muted.
test_expect_success 'calls of later TLS destructors stay unrecorded when the thread was muted' '
	build_workload s-tlsdtor.c &&
	callprof record -o dtor.cprof --start phase --exclude-tree quiet ./t-tlsdtor >dtor.out &&
	callprof export -f folded -m calls dtor.cprof >dtor.folded &&
	cat >dtor.expect <<-\EOF &&
	phase 2
	phase;leaf 2
	EOF
	test_cmp dtor.expect dtor.folded &&
	callprof report dtor.cprof >dtor.report &&
	grep "^# 10 calls made outside every --start function were not recorded" dtor.report &&
	grep "^# 8 calls inside --exclude-tree functions were not recorded" dtor.report
'

test_expect_success 'the same past 256 ended threads, whose states are recycled' '
	callprof record -o dtor300.cprof --start phase --exclude-tree quiet ./t-tlsdtor 300 >dtor.out &&
	callprof export -f folded -m calls dtor300.cprof >dtor.folded &&
	cat >dtor.expect <<-\EOF &&
	phase 600
	phase;leaf 600
	EOF
	test_cmp dtor.expect dtor.folded
'

test_done
