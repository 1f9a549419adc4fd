#!/bin/sh
# matrix: cc-opt
test_description='the overhead verdict: record names the tiny hot functions and the remedy; diff marks mostly-overhead times'
. "$(dirname "$0")/lib.sh"

# t-hot calls the one-line bump() 12 million times from one loop: the hooks
# are most of the run under every compiler and level (74-90% of the CPU
# time here).  t-spin makes four long calls: the hooks are nothing.  The
# shares themselves are not asserted, only which side of 20% they fall.

test_expect_success 'setup' '
	build_workload s-hot.c &&
	build_workload s-spin.c
'

# The remedy depends on the compiler that built bump (its DW_AT_producer):
# gcc has the exclude list and inlines less with its hooks, clang has
# after-inlining instrumentation but no exclude list; a sleds build of
# either is rid of a function's sled by an attribute.
check_remedy () {
	case "$CP_BUILD_KIND:$CC" in
	sleds:*)
		grep "^  remedy: mark them __attribute__((patchable_function_entry(0, 0))) and rebuild (a sleds build" "$1" &&
		! grep -e "-finstrument-functions" -e "no_instrument_function" -e "after-inlining" "$1"
		;;
	*clang*)
		grep "^  remedy: mark them __attribute__((no_instrument_function)) and rebuild" "$1" &&
		! grep -e "-finstrument-functions-exclude-function-list" "$1" &&
		! grep -e "after-inlining" "$1"
		;;
	*)
		grep "^  remedy: rebuild with -finstrument-functions-exclude-function-list=bump$" "$1" &&
		# bump is never inlined: after-inlining would keep its hooks (t0450)
		! grep "after-inlining" "$1"
		;;
	esac
}

test_expect_success 'tiny hot calls: one paragraph naming bump and the remedy, after the summary' '
	callprof record -o hot.cprof -- ./t-hot 2>err &&
	sed -n 1p err | grep "^callprof: wrote hot.cprof: 1 thread, 12000002 calls, 3 call paths, CPU time" &&
	test $(grep -c "^callprof: the hooks took [0-9.]*% of the CPU time (the profiler.s own share); the times shown leave it out" err) = 1 &&
	grep "^  most of it in the calls of tiny functions: bump (12000000 calls, [0-9.]*[nu]s own time each, [0-9]*% of the cost)$" err &&
	! grep "calls of tiny functions:.*work" err &&
	check_remedy err &&
	! grep -e "--budget" err &&
	test $(grep -c "^  " err) -le 4
'

# The flag given is one gcc takes, and it does what it says: rebuilt with
# it, bump runs no hooks and the verdict is gone.
test_expect_success 'gcc: rebuilt with the remedy given, the verdict is gone' '
	case "$CP_BUILD_KIND:$CC" in
	sleds:* | *clang*) return 0 ;;
	esac &&
	flag=$(sed -n "s/^  remedy: rebuild with \(-finstrument-functions-exclude-function-list=[^ ]*\)$/\1/p" err) &&
	test -n "$flag" &&
	$CC $OPT $CP_TEST_CFLAGS -g -finstrument-functions "$flag" -Wall -o t-hot-ex \
		"$WORKLOADS/s-hot.c" -lpthread &&
	callprof record -o ex.cprof -- ./t-hot-ex 2>err.ex &&
	grep "^callprof: wrote ex.cprof: 1 thread, 2 calls, 2 call paths" err.ex &&
	! grep "hooks took" err.ex
'

# One figure, computed once (issue 30, item 22): record's summary counted
# the samples with the profiler's and its share without the program's PLT
# stubs to the hooks (72% beside the verdict's 79%; 38 samples where the
# report said 6).  The summary, the verdict, report's banner and the json
# export now give the same sample count and share.
test_expect_success 'one share and one sample count: record, its verdict, report, json' '
	callprof record -o one.cprof -- ./t-hot 2>err1 &&
	sed -n "s/^callprof: wrote one.cprof: .* CPU time from \([0-9]*\) samples at [0-9]* Hz (profiler.s own share \([0-9.]*\)%)$/\1 \2/p" err1 >summary &&
	test_line_count = 1 summary &&
	read n share <summary &&
	grep "^callprof: the hooks took $share% of the CPU time " err1 &&
	callprof report one.cprof >report &&
	grep "^# time: CPU time sampled at .* on the exact call tree: $n samples, " report &&
	grep "^# profiler.s own share: $share% of the CPU time " report &&
	callprof export -f json -o one.json one.cprof &&
	python3 -c "
import json, sys
t = json.load(open(\"one.json\"))[\"time_source\"]
assert t[\"samples\"] == int(sys.argv[1]), t
assert \"%.1f\" % (100 * t[\"profiler_share\"]) == sys.argv[2], t" "$n" "$share" &&
	callprof diff one.cprof one.cprof >d &&
	grep "^# A: CPU time sampled at [0-9]* Hz: $n samples; " d &&
	grep "^# warning: A: callprof.s hooks took $share% of the CPU time" d
'

# The attribute given is one both compilers take, and it does what it says:
# bump keeps no sled, is not recorded, and the verdict is gone.
test_expect_success 'sleds: rebuilt with the remedy given, the verdict is gone' '
	case "$CP_BUILD_KIND" in
	sleds) ;;
	*) return 0 ;;
	esac &&
	attr=$(sed -n "s/^  remedy: mark them \(__attribute__((patchable_function_entry(0, 0)))\) and rebuild .*/\1/p" err) &&
	test -n "$attr" &&
	sed "s/^NOINLINE void bump(/$attr &/" "$WORKLOADS/s-hot.c" >hot-ex.c &&
	grep -q "^__attribute__((patchable_function_entry(0, 0))) NOINLINE void bump(" hot-ex.c &&
	cc_kind sleds $CC $OPT $CP_TEST_CFLAGS -g -Wall -I"$WORKLOADS" -o t-hot-ex hot-ex.c &&
	callprof record -o ex.cprof -- ./t-hot-ex 2>err.ex &&
	grep "^callprof: wrote ex.cprof: 1 thread, 2 calls, 2 call paths" err.ex &&
	! grep "hooks took" err.ex
'

# An excluded function (record --exclude) has no context, but its calls
# still run the hooks: excluding bump leaves the run as costly, and the
# verdict named work, its caller, as a "tiny function" of one call with
# the whole cost (bzip2's mainSort, 2026-12-01).  It names bump, excluded,
# and the remedy that does take its hooks out.
test_expect_success 'an excluded hot function: the verdict names it, not its caller' '
	callprof record --exclude bump -o exb.cprof -- ./t-hot 2>errx &&
	grep "^callprof: the hooks took [0-9.]*% of the CPU time" errx &&
	grep "^  most of it in the calls of tiny functions: bump (12000000 calls, excluded: its hooks still run, [0-9]*% of the cost)$" errx &&
	! grep "calls of tiny functions:.*work" errx &&
	check_remedy errx
'

test_expect_success 'the verdict leaves the exit status alone' '
	test_expect_code 3 callprof record -o hot3.cprof -- ./t-hot 12000000 3 2>err &&
	grep "^callprof: the hooks took" err
'

test_expect_success 'clocked: the same functions, and --time=cpu or --budget' '
	callprof record --time=clock -o hotc.cprof -- ./t-hot 2>err &&
	grep "^callprof: the hooks took [0-9.]*% of the clocked time on the CPU; the times shown subtract an estimate" err &&
	grep "^  most of it in the calls of tiny functions: bump (12000000 calls" err &&
	check_remedy err &&
	grep "^  or record with --time=cpu (the hooks left out of the times) or --budget=5 " err
'

test_expect_success 'few long calls: no verdict, either way' '
	callprof record -o spin.cprof -- ./t-spin 2>err &&
	! grep "hooks took" err &&
	! grep "^  " err &&
	callprof record --time=clock -o spinc.cprof -- ./t-spin 2>err &&
	! grep "hooks took" err
'

# Crafted clocked profiles (tests/mkprofile.c, one tick one nanosecond):
# main and tiny, 1000000 calls of tiny at 10 ns outside + 10 ns inside.
# tiny's raw 15 ms (A) and 14 ms (B) lose 10 ms each: 5 and 4 ms are left,
# mostly overhead on both sides; main keeps most of its time.  The hooks
# are 20 of the 60 ms raw (33%) on each side.
craft_clocked () {
	{
		echo "meta mode=0 overhead=10 self_overhead=10" &&
		echo "cmd ./prog" &&
		echo "thread tid=1 name=main" &&
		echo "node" &&
		echo "node parent=0 fn=0x1000 calls=1 ticks=60000000" &&
		echo "node parent=1 fn=0x2000 calls=1000000 ticks=$2"
	} >$1.txt &&
	"$CALLPROF_BUILD/tests/mkprofile" $1.cprof <$1.txt
}

COLS=calls-a,calls-b,calls-delta,self-a,self-b,self-delta,status,path
test_expect_success 'diff: mostly-overhead times are marked, and the header says why' '
	craft_clocked oa 15000000 &&
	craft_clocked ob 14000000 &&
	callprof diff oa.cprof ob.cprof >out &&
	grep "^# warning: A: callprof.s hooks took 33.3% of the clocked time: .* may point the wrong way$" out &&
	grep "^# warning: B: callprof.s hooks took 33.3% of the clocked time" out &&
	grep "^# .~. marks times that are mostly hook overhead .*: 1 changed path; --fail-if ignores" out &&
	grep " ~5.00ms *~4.00ms .*+0x2000$" out &&
	# the counts beside the times (the default puts the change first: callprof-diff(1))
	callprof diff --fields=$COLS oa.cprof ob.cprof >rows &&
	grep "^ *1000000 *1000000 *0 *~5.00ms *~4.00ms *-1.00ms .*+0x2000$" rows &&
	grep "^ *1 *1 *0 *35.00ms *36.00ms " rows
'

test_expect_success 'diff --fail-if: no failure on a change between mostly-overhead times, and it says so' '
	callprof diff --fail-if "self<-10%" oa.cprof ob.cprof >out 2>err &&
	grep "^callprof: fail-if .self<-10%. left out 1 call path: in A and in B, its time rests on too few samples (.?.) or mostly hook overhead (.~.)$" err &&
	! grep "holds" err
'

# A change from a mostly-overhead time to a firm one is real: tiny grew to
# 40 ms raw (30 ms left after the 10 ms): the condition holds.
test_expect_success 'diff --fail-if: a firm side makes the change count' '
	craft_clocked oc 40000000 &&
	test_expect_code 3 callprof diff --fields=$COLS --fail-if "self>+100%" oa.cprof oc.cprof >out 2>err &&
	grep "^callprof: fail-if .self>+100%. holds for 1 call path; worst: .*+0x2000: self 5.00ms -> 30.00ms" err &&
	! grep "left out" err &&
	grep "^ *1000000 *1000000 *0 *~5.00ms *30.00ms " out
'

test_done
