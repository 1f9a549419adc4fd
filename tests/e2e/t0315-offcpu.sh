#!/bin/sh
# matrix: cc-opt
test_description='off-CPU time: waiting and preempted time per call path, from context switches'
. "$(dirname "$0")/lib.sh"

CHECK="python3 $TEST_DIRECTORY/check-offcpu.py"

test_expect_success 'setup' '
	build_workload s-offcpu.c
'

# Ten 50 ms sleeps: the thread is blocked nearly all of sleeper's time.
test_expect_success 'a function that sleeps shows its time as wait, not cpu' '
	callprof record -o sleep.cprof -- ./t-offcpu sleep 2>/dev/null &&
	callprof export -f json sleep.cprof >sleep.json &&
	$CHECK share sleep.json sleeper wait_ns 0.90 1.0 &&
	$CHECK share sleep.json sleeper inactive_ns 0 0.05 &&
	$CHECK share sleep.json sleeper cpu_ns 0 0.05 &&
	$CHECK sums sleep.json
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

test_expect_success 'a fork child tracks its own switches' '
	callprof record -o fork.cprof -- ./t-offcpu fork 2>/dev/null &&
	child=$(ls fork.cprof.* | head -n 1) &&
	test -n "$child" &&
	callprof export -f json "$child" >child.json &&
	$CHECK share child.json sleeper wait_ns 0.90 1.0 &&
	callprof export -f json fork.cprof >parent.json &&
	$CHECK share parent.json sleeper wait_ns 0.90 1.0
'

test_expect_success 'tracking costs the program no file descriptor' '
	./t-offcpu fds >alone &&
	callprof record -o fds.cprof -- ./t-offcpu fds >profiled 2>/dev/null &&
	test_cmp alone profiled
'

test_expect_success 'CALLPROF_OFFCPU=0 turns tracking off' '
	CALLPROF_OFFCPU=0 callprof record -o off.cprof -- ./t-offcpu sleep 2>/dev/null &&
	callprof export -f json off.cprof >off.json &&
	$CHECK share off.json sleeper wait_ns 0 0
'

test_done
