#!/bin/sh
test_description='record --time: sampled CPU time by default, the clock where perf is refused'
. "$(dirname "$0")/lib.sh"

CRAFT="python3 $TEST_DIRECTORY/cprof-craft.py"

# mode_of FILE: the profile's enum cp_mode (4 cpu, 0 timing, 1 counting,
# 2 coverage), read without callprof.
mode_of () {
	$CRAFT show "$1" | sed -n "s/^mode //p"
}

# calls_of FILE: its folded call counts, without the contexts of no calls
# the report makes for samples in code that is not instrumented (libc,
# static helpers): the exact counts of the calls the hooks saw.
calls_of () {
	callprof export -f folded -m calls "$1" | grep -v " 0$"
}

test_expect_success 'setup' '
	build_workload s-nested.c &&
	build_workload s-spin.c &&
	build_workload s-exit3.c &&
	$CC -O2 -Wall -o noperf "$WORKLOADS/s-noperf.c"
'

test_expect_success 'the default is cpu mode: exact counts, sampled CPU time' '
	callprof record -o nested.cprof -- ./t-nested 2>err &&
	test "$(mode_of nested.cprof)" = 4 &&
	calls_of nested.cprof >calls &&
	test_cmp "$EXPECT/nested.calls" calls &&
	grep "^callprof: wrote nested.cprof: 1 thread, 11 calls, 5 call paths, CPU time from [0-9]* samples at 3989 Hz" err
'

# t-nested runs for well under a millisecond: a handful of samples at most.
test_expect_success 'a run too short for its samples says so, once' '
	n=$(sed -n "s/.*CPU time from \([0-9]*\) samples.*/\1/p" err) &&
	test "$n" -lt 100 &&
	test $(grep -c "warning: CPU times rest on only [0-9]* samples\{0,1\}: run longer or raise --sample$" err) = 1 &&
	test_line_count = 2 err
'

# t-spin burns 125 ms of its CPU time (measured by its CPU clock, whatever
# the machine's speed): some 500 samples, nearly all the program's own (the
# hooks run a few times only).
test_expect_success 'a longer run: the samples and the profiler share on the summary line' '
	callprof record -o spin.cprof -- ./t-spin 2>err &&
	test "$(mode_of spin.cprof)" = 4 &&
	calls_of spin.cprof >calls &&
	test_cmp "$EXPECT/spin.calls" calls &&
	n=$(sed -n "s/^callprof: wrote spin.cprof: 1 thread, 4 calls, 4 call paths, CPU time from \([0-9]*\) samples at 3989 Hz (profiler.s own share [0-9.]*%)$/\1/p" err) &&
	test "$n" -ge 100 &&
	share=$(sed -n "s/.*own share \([0-9]*\)\.[0-9]%)$/\1/p" err) &&
	test "$share" -lt 50 &&
	test_line_count = 1 err
'

test_expect_success '--sample=HZ sets the rate of an instrumented program'"'"'s CPU-time samples' '
	callprof record --sample=1999 -o fast.cprof -- ./t-spin 2>err &&
	test "$(mode_of fast.cprof)" = 4 &&
	grep "^callprof: wrote fast.cprof: .* samples at 1999 Hz" err &&
	callprof record --time=cpu --sample -o dflt.cprof -- ./t-nested 2>err &&
	grep "^callprof: wrote dflt.cprof: .* samples at 3989 Hz" err
'

test_expect_success '--time=clock is timing mode, --time=none counting' '
	callprof record --time=clock -o clock.cprof -- ./t-nested 2>err &&
	test "$(mode_of clock.cprof)" = 0 &&
	echo "callprof: wrote clock.cprof: 1 thread, 11 calls, 5 call paths" >expect &&
	test_cmp expect err &&
	callprof record --time=none -o none.cprof -- ./t-nested 2>err &&
	test "$(mode_of none.cprof)" = 1 &&
	callprof record --mode=coverage --time=none -o cov.cprof -- ./t-nested &&
	test "$(mode_of cov.cprof)" = 2 &&
	callprof record --mode=timing --time=clock --budget=5 -o budget.cprof -- ./t-nested &&
	test "$(mode_of budget.cprof)" = 0 &&
	for f in clock none; do
		calls_of $f.cprof >calls &&
		test_cmp "$EXPECT/nested.calls" calls || return 1
	done
'

# A seccomp filter refuses perf_event_open, as in many containers: record
# finds out before the program runs, and times each call with the clock.
test_expect_success 'perf refused: one warning, a timing profile, the same counts, the status kept' '
	test_expect_code 3 ./noperf callprof record -o np.cprof -- ./t-exit3 >out 2>err &&
	test "$(mode_of np.cprof)" = 0 &&
	cat >expect <<-\EOF &&
	callprof: warning: CPU-time sampling unavailable: perf_event_open: Operation not permitted; timing each call with the clock instead (--time=clock: times include the hooks'"'"' cost)
	callprof: wrote np.cprof: 1 thread, 5 calls, 3 call paths
	EOF
	grep -v "^a line on stderr$" err >err.callprof &&
	test_cmp expect err.callprof &&
	grep "^a line on stderr$" err &&
	test_expect_code 3 callprof record -o ok.cprof -- ./t-exit3 >out.ok 2>/dev/null &&
	test_cmp out.ok out &&
	callprof export -f folded -m calls np.cprof >np.calls &&
	calls_of ok.cprof >ok.calls &&
	test_cmp ok.calls np.calls &&
	test_cmp "$EXPECT/exit3.calls" np.calls
'

test_expect_success 'perf refused: --time=cpu asked for explicitly falls back too, and says so' '
	./noperf callprof record --time=cpu -o npx.cprof -- ./t-nested 2>err &&
	test "$(mode_of npx.cprof)" = 0 &&
	test $(grep -c "^callprof: warning: CPU-time sampling unavailable: perf_event_open: " err) = 1 &&
	./noperf callprof record --mode=cpu --sample=1999 -o npm.cprof -- ./t-nested 2>err &&
	test "$(mode_of npm.cprof)" = 0 &&
	test $(grep -c "^callprof: warning: CPU-time sampling unavailable" err) = 1 &&
	test_line_count = 2 err
'

test_expect_success 'perf refused: modes that take no time need no perf, and say nothing' '
	./noperf callprof record --time=none -o npn.cprof -- ./t-nested 2>err &&
	test "$(mode_of npn.cprof)" = 1 &&
	echo "callprof: wrote npn.cprof: 1 thread, 11 calls, 5 call paths (counting)" >expect &&
	test_cmp expect err
'

test_expect_success '--time and --mode must agree; --budget needs --time=clock' '
	for args in "--time=clock --mode=cpu" "--time=none --mode=timing" \
		    "--time=cpu --mode=counting" "--time=cpu --mode=coverage" \
		    "--mode=timing --time=none"; do
		test_expect_code 129 callprof record $args -o bad.cprof -- ./t-nested 2>err &&
		grep "^callprof: error: --mode=[a-z]* and --time=[a-z]* disagree: --mode=[a-z]* takes " err &&
		test_path_is_missing bad.cprof || return 1
	done &&
	test_expect_code 129 callprof record --time=wall -- ./t-nested 2>err &&
	grep "time" err &&
	for args in "" "--time=cpu" "--mode=counting" "--time=none"; do
		test_expect_code 129 callprof record $args --budget=5 -o bad.cprof -- ./t-nested 2>err &&
		grep "^callprof: error: --budget needs --time=clock" err &&
		test_path_is_missing bad.cprof || return 1
	done
'

# Without record (or in a program that sandboxes itself after record's
# check), each thread finds out alone: counts, no CPU time, and the
# profile says which threads.
test_expect_success 'perf refused to the runtime itself: threads marked unsampled' '
	./noperf env LD_PRELOAD="$CALLPROF_BUILD/libcallprof-cpu.so" CALLPROF_OUT="$PWD/direct.cprof" \
		./t-nested >/dev/null &&
	$CRAFT show direct.cprof >show &&
	grep "^mode 4$" show &&
	grep "^thread 0 tid [0-9]* flags [0-9]* nthreads 1$" show &&
	flags=$(sed -n "s/^thread 0 tid [0-9]* flags \([0-9]*\) .*/\1/p" show) &&
	test $((flags & 8)) = 8 &&
	calls_of direct.cprof >calls &&
	test_cmp "$EXPECT/nested.calls" calls &&
	$CRAFT show nested.cprof >show.ok &&
	flags=$(sed -n "s/^thread 0 tid [0-9]* flags \([0-9]*\) .*/\1/p" show.ok) &&
	test $((flags & 8)) = 0
'

test_expect_success 'perf refused after record'"'"'s check: the summary names the threads and the cause' '
	callprof record -o late.cprof -- ./noperf ./t-nested 2>err &&
	test "$(mode_of late.cprof)" = 4 &&
	grep "^callprof: wrote late.cprof: 1 thread, 11 calls, 5 call paths, CPU time from 0 samples at 3989 Hz$" err &&
	grep "^callprof: warning: no CPU time for 1 thread: the program.s seccomp filter forbids perf_event_open$" err &&
	! grep "rest on only" err
'

# The note that the hooks took most of the CPU time is said from 100
# samples on (as record'"'"'s warning): one sample in the hooks of a 1 ms run
# is not "100% callprof'"'"'s own".  Crafted (tests/mkprofile.c): the runtime
# module (flags=2) holds the samples at 0x7f0000000010; NAME RUNTIME PROGRAM.
test_expect_success 'report: the profiler-share note needs 100 samples' '
	while read name rt prog; do
		{
			echo "meta mode=4 hz=1000 period=1000000 switches=1" &&
			echo "cmd ./prog" &&
			echo "module $CALLPROF_BUILD/libcallprof.so bias=0x7f0000000000 flags=2" &&
			echo "thread tid=1 name=main" &&
			echo "node" &&
			echo "node parent=0 fn=0x1000 calls=1" &&
			echo "line node=1 ip=0x7f0000000010 samples=$rt" &&
			if test $prog -gt 0; then
				echo "line node=1 ip=0x1010 samples=$prog"
			fi
		} >$name.txt &&
		"$CALLPROF_BUILD/tests/mkprofile" $name.cprof <$name.txt &&
		callprof report $name.cprof >$name.report || return 1
	done <<-\EOF &&
	one 1 0
	few 60 39
	enough 61 39
	EOF
	grep "^# profiler.s own share: 100.0% " one.report &&
	! grep "^# note: most of the run.s CPU time was callprof.s own" one.report &&
	grep "^# profiler.s own share: 60.6% " few.report &&
	! grep "^# note: most of the run.s CPU time was callprof.s own" few.report &&
	grep "^# profiler.s own share: 61.0% " enough.report &&
	grep "^# note: most of the run.s CPU time was callprof.s own: .* slowed 2.6x" enough.report
'

# Kernel time is the task clock's growth between samples; on a VM the task
# clock also runs while the hypervisor has the CPU, the thread's CPU clock
# does not, and the runtime leaves out of "[kernel]" what the clock does not
# have (t0315 failed on it once: 6.8 ms of kernel time in a spin loop).  The
# thread records say how many periods (tests/mkprofile.c, unclocked=): the
# banner and the json export say so, across threads, and a merge keeps it.
test_expect_success 'kernel periods beyond the CPU clocks: the banner, json and merge say so' '
	cat >unclocked.txt <<-\EOF &&
	meta mode=4 hz=1000 period=1000000 switches=1
	cmd ./prog
	thread tid=1 name=main cpu=60000000 unclocked=7
	node
	node parent=0 fn=0x1000 calls=1
	line node=1 ip=0x1010 samples=55
	line node=1 ip=0 samples=3
	thread tid=2 name=worker cpu=20000000 unclocked=2
	node
	node parent=0 fn=0x2000 calls=1
	line node=3 ip=0x2010 samples=20
	EOF
	"$CALLPROF_BUILD/tests/mkprofile" unclocked.cprof <unclocked.txt &&
	callprof report unclocked.cprof >unclocked.report &&
	grep "^# 9.00ms of kernel time left out: the task clock the samples run on counted it, the threads. CPU clocks did not (time a hypervisor took the CPU from this virtual machine, or interrupts)$" unclocked.report &&
	callprof export -f json unclocked.cprof >unclocked.json &&
	python3 -c "import json,sys; d=json.load(open(\"unclocked.json\")); sys.exit(d[\"time_source\"][\"unclocked_samples\"] != 9)" &&
	callprof merge -o unclocked2.cprof unclocked.cprof unclocked.cprof 2>/dev/null &&
	callprof report unclocked2.cprof | grep "^# 18.00ms of kernel time left out" &&
	callprof report nested.cprof >nested.report &&
	! grep "kernel time left out" nested.report
'

# The tree header compares the tree's cpu with the kernel's count of the
# threads' CPU time: it says what the kernel's holds that the tree's does
# not (the profiler's own CPU time; the hooks' cost that compensation took
# off), so that the two do not look contradictory.
test_expect_success 'tree headers: the kernel'"'"'s count says what it holds that cpu does not' '
	t="[0-9.]*[mun]*s" &&
	callprof report spin.cprof >spin.report &&
	grep "^== all threads (1 thread, $t, cpu $t; the kernel counted $t, the profiler.s own CPU time included) ==$" spin.report &&
	callprof report clock.cprof >clock.report &&
	grep "^== all threads (1 thread, $t, cpu $t compensated; the kernel counted $t, the hooks. cost included) ==$" clock.report &&
	callprof report --no-compensate clock.cprof >raw.report &&
	grep "^== all threads (1 thread, $t, cpu $t; the kernel counted $t) ==$" raw.report
'

# Counting and coverage profiles have no times: no view may print one (a
# "0ns" total in the tree header was one), only the banner's run time.
test_expect_success 'profiles without times: no time in any view or header' '
	for p in none cov; do
		for v in "" --threads=each --flat "--callers c" "--callees a" --plist; do
			callprof report $v $p.cprof >view &&
			grep -v "^# pid [0-9]*, started .*, ran " view >timeless &&
			! grep -E "[0-9](ns|us|ms|s)\b" timeless || return 1
		done
	done &&
	callprof report none.cprof >none.report &&
	grep "^== all threads (1 thread, counts only) ==$" none.report &&
	callprof report --threads=each cov.cprof >cov.report &&
	grep "^== t-nested (1 thread) ==$" cov.report &&
	callprof diff none.cprof none.cprof >diff.out &&
	callprof diff clock.cprof none.cprof >>diff.out &&
	! grep -E "[0-9](ns|us|ms|s)\b" diff.out
'

test_done
