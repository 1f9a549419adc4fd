#!/bin/sh
# matrix: cc-opt
test_description='off-CPU time: waiting and preempted time per call path, from context switches'
. "$(dirname "$0")/lib.sh"

CHECK="python3 $TEST_DIRECTORY/check-offcpu.py"

test_expect_success 'setup' '
	build_workload s-offcpu.c
'

# Ten 50 ms sleeps: the thread is blocked nearly all of sleeper's time.
# The shares are of the time it was not preempted (split): each wake-up
# waits in the run queue for as long as the machine's load says (inactive
# time), which is not sleeper's to keep small.
test_expect_success 'a function that sleeps shows its time as wait, not cpu' '
	callprof record -o sleep.cprof -- ./t-offcpu sleep 2>/dev/null &&
	callprof export -f json sleep.cprof >sleep.json &&
	$CHECK split sleep.json sleeper wait_ns 0.90 1.0 &&
	$CHECK split sleep.json sleeper cpu_ns 0 0.05 &&
	$CHECK sums sleep.json
'

# 3000 sleeps of 100 us in one call without a hook: 6000 switch records,
# more than the ring holds (2048 in cpu mode, 1024 with the clock).  The
# ones the kernel dropped are recovered from the thread's clocks when the
# drain finds the ring full, in napper; they had landed in the root at the
# dump (napper held 27% of the thread's time, the rest was the root's).
# The time outside napper is the start and the end, where a loaded machine
# can block the loader or the runtime (reading a page, say): once, in a
# make check that ran beside another, 8.5% of the time not preempted was
# blocked in the root outside main, and napper's own was complete.
test_expect_success 'a call that sleeps more often than the ring holds keeps all its off-CPU time' '
	callprof record -o naps.cprof -- ./t-offcpu naps 2>/dev/null &&
	callprof export -f json naps.cprof >naps.json &&
	$CHECK whole naps.json napper 0.85 &&
	$CHECK share naps.json napper cpu_ns 0 0.25 &&
	$CHECK sums naps.json &&
	callprof record --time=clock -o napsc.cprof -- ./t-offcpu naps 2>/dev/null &&
	callprof export -f json napsc.cprof >napsc.json &&
	$CHECK whole napsc.json napper 0.85 &&
	$CHECK share napsc.json napper cpu_ns 0 0.25 &&
	$CHECK sums napsc.json &&
	callprof export -f json --threads=each naps.cprof >each.json &&
	$CHECK kernel each.json
'

# Two threads on one CPU, each spinning for 1 s of wall time: each can run
# about half of it.  The margins are wide: the machine is shared.
test_expect_success 'two spinners pinned to one CPU are each preempted for the other' '
	callprof record -o pinned.cprof -- ./t-offcpu pinned 2>/dev/null &&
	callprof export -f json pinned.cprof >pinned.json &&
	$CHECK share pinned.json spinner_a inactive_ns 0.25 1.0 &&
	$CHECK share pinned.json spinner_b inactive_ns 0.25 1.0 &&
	$CHECK share pinned.json spinner_a wait_ns 0 0.10 &&
	$CHECK share pinned.json spinner_b wait_ns 0 0.10 &&
	$CHECK sums pinned.json
'

# The same, with tiny calls: preemptions fall inside the hooks, between a
# frame'"'"'s clock read and the ring'"'"'s drain, as often as anywhere.  Off-CPU
# time is charged only to calls whose time holds it, at every level.
test_expect_success 'preempted among tiny calls: off-CPU time stays within each call'"'"'s time' '
	callprof record -o calls.cprof -- ./t-offcpu calls 2>/dev/null &&
	callprof export -f json --no-compensate calls.cprof >calls.json &&
	$CHECK share calls.json caller_loop inactive_ns 0.25 1.0 &&
	$CHECK sums calls.json
'

# The kernel counts each thread'"'"'s CPU time by itself: what the tree says
# is left after the switches must be that, less (cpu mode) the profiler'"'"'s
# share, the samples in callprof'"'"'s hooks (check-offcpu.py kernel).  The
# spinners run 1 s in burn_until, without a hook: more samples than their
# ring holds, whose CPU time must still be counted.
test_expect_success 'each thread'"'"'s cpu in the tree is the CPU time the kernel counted' '
	callprof export -f json --threads=each pinned.cprof >each.json &&
	$CHECK kernel each.json &&
	callprof export -f json --threads=each sleep.cprof >each.json &&
	$CHECK kernel each.json
'

test_expect_success 'a fork child tracks its own switches' '
	callprof record -o fork.cprof -- ./t-offcpu fork 2>/dev/null &&
	child=$(ls fork.cprof.* | head -n 1) &&
	test -n "$child" &&
	callprof export -f json "$child" >child.json &&
	$CHECK split child.json sleeper wait_ns 0.90 1.0 &&
	callprof export -f json fork.cprof >parent.json &&
	$CHECK split parent.json sleeper wait_ns 0.90 1.0
'

test_expect_success 'tracking costs the program no file descriptor' '
	./t-offcpu fds >alone &&
	callprof record -o fds.cprof -- ./t-offcpu fds >profiled 2>/dev/null &&
	test_cmp alone profiled
'

test_expect_success 'record --no-offcpu (CALLPROF_OFFCPU=0) turns tracking off' '
	callprof record --time=clock --no-offcpu -o off.cprof -- ./t-offcpu sleep 2>/dev/null &&
	callprof export -f json off.cprof >off.json &&
	$CHECK share off.json sleeper wait_ns 0 0 &&
	CALLPROF_OFFCPU=0 callprof record --time=clock -o off2.cprof -- ./t-offcpu sleep 2>/dev/null &&
	callprof export -f json off2.cprof >off2.json &&
	$CHECK share off2.json sleeper wait_ns 0 0
'

# Two pool threads block in pool_wait and never run again; main spins.  A
# snapshot and the profile written at SIGTERM (a background job of sh
# ignores SIGINT) close the calls still open: the pool threads'"'"' time, whose
# switch-out their hooks never drained, is wait, not cpu.  Both are blocked
# when t-offcpu writes ready; a preemption before they blocked is the
# load's (split leaves it out), so no time needs to pass before the dump.
test_expect_success 'threads blocked at a dump or a fatal signal: their open time is wait' '
	rm -f ready &&
	{ command callprof record -o pool.cprof -- ./t-offcpu pool ready >out 2>err & } &&
	rpid=$! &&
	wait_for ready &&
	pid=$(cat ready) &&
	callprof dump -o snap.cprof $pid >path &&
	kill -TERM $pid &&
	test_expect_code 143 wait $rpid &&
	for f in snap pool
	do
		callprof export -f json $f.cprof >$f.json &&
		$CHECK split $f.json pool_wait cpu_ns 0 0.2 &&
		$CHECK split $f.json pool_wait wait_ns 0.8 1.0 &&
		$CHECK sums $f.json &&
		$CHECK machine $f.json &&
		callprof export -f json --threads=each $f.cprof >$f-each.json &&
		$CHECK kernel $f-each.json || exit 1
	done
'

# Where the kernel refuses perf events, recording goes on without the split.
test_expect_success 'perf_event_open refused: exact counts still, no split' '
	$CC -O2 -Wall -o noperf "$WORKLOADS/s-noperf.c" &&
	./noperf callprof record --time=clock -o refused.cprof -- ./t-offcpu sleep 2>err &&
	cat >expect <<-\EOF &&
	callprof: wrote refused.cprof: 1 thread, 2 calls, 2 call paths
	callprof: warning: no wait/inactive split: perf_event_open refused: Operation not permitted (see callprof-record(1), OFF-CPU TIME)
	EOF
	test_cmp expect err &&
	callprof export -f folded -m calls refused.cprof >calls &&
	grep "^main;sleeper 1$" calls &&
	callprof export -f json refused.cprof >refused.json &&
	$CHECK share refused.json sleeper wait_ns 0 0
'

# Hybrid: the exact tree of an instrumented program, plus 1 kHz samples of
# the running instruction placed in the innermost open call.  hot() spends
# ten times as long on its first loop's line as on its second's.
test_expect_success 'record --sample of an instrumented program: hot lines of a call path' '
	callprof record --sample=1000 -o hot.cprof -- ./t-offcpu hot 2>/dev/null &&
	callprof export -f folded -m calls hot.cprof >calls &&
	grep "^main;hot 1$" calls &&
	callprof report --lines hot hot.cprof >lines &&
	grep "^hot: [0-9]* samples" lines &&
	first=$(grep -n "i < 100000000L" "$WORKLOADS/s-offcpu.c" | cut -d: -f1) &&
	second=$(grep -n "i < 10000000L" "$WORKLOADS/s-offcpu.c" | cut -d: -f1) &&
	a=$(awk -v l="s-offcpu.c:$first" "\$4 == l { print \$1 }" lines) &&
	b=$(awk -v l="s-offcpu.c:$second" "\$4 == l { print \$1 }" lines) &&
	echo "first loop $a samples, second $b" &&
	test "$a" -gt 0 && test "$a" -gt "$((2 * ${b:-0}))" &&
	sed -n "/samples  percent/{n;p;}" lines | grep "s-offcpu.c:$first "
'

test_done
