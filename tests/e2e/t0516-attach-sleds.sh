#!/bin/sh
# matrix: cc-opt
test_description='callprof attach PID to a server built with sleds (issue 31, item 4)'
. "$(dirname "$0")/lib.sh"

# The server of t0510 (workloads/s-server.c), built as `callprof cc --sleds`
# builds (patchable entries, no hooks), started without callprof.  The
# attach patches its sleds with every thread held (the server reports
# sleds=call while they are), the window's counts are exactly the server's
# own, and at the end the sleds are NOPs again (sleds=nop, and its code in
# memory is its file's), no return address on any thread's stack points
# into callprof's code (gdb's unwinding, not callprof's), a call entered
# in the window and still open at the end returns where it should, the
# server serves on, and a second attach works as the first.

CHECK="python3 $TEST_DIRECTORY/check-attach.py"
STACKS="python3 $TEST_DIRECTORY/check-stacks.py"
ON_STAT=sleds=call
OFF_STAT="sleds nop"
. "$TEST_DIRECTORY/attach-server-lib.sh"

EXACT="handle_request parse compute reply spin_leaf on_epoll_event on_pipe_data on_usr1 usr1_work"
calm_gdb () {
	expect_stat "$1" eintr "$(stat_of "$1" eintr_epoll)" &&
	expect_stat "$1" short_sleeps 0 &&
	expect_stat "$1" anomalies 0
}

exact () {
	$CHECK exact "$1.json" "$1.A" "$1.B" $EXACT &&
	$CHECK bound "$1.json" "$1.P" "$1.C"
}

# after_detach SRV: nothing of callprof's left where the server would run it.
# (gdb's attach makes the epoll thread's wait fail with EINTR, as t0510
# shows a stop and continue does: so the stats are held calm before it, and
# after it by calm_gdb.)
after_detach () {
	expect_stat "$1.after" sleds nop &&
	$STACKS code "$(cat "$1.pid")" &&
	$STACKS frames "$(cat "$1.pid")"
}

test_expect_success 'setup: the server built with sleds' '
	build_sleds s-server.c -ldl &&
	readelf -SW t-server | grep -q __patchable_function_entries
'

test_expect_success 'the server alone: sleds=nop, no hooks, its code is its file'"'"'s' '
	srv_start alone &&
	srv_stats alone alone.0 &&
	expect_stat alone.0 sleds nop &&
	expect_stat alone.0 hooks none &&
	$STACKS code "$(cat alone.pid)" &&
	$STACKS frames "$(cat alone.pid)" &&
	srv_quit alone
'

# A slow request entered in the window is open at its end: its return
# address is a stub then, given back at the end; released after the
# detach, it returns to its real caller and the server goes on.
test_expect_success 'a window: exact counts; after it the sleds are NOPs and no stack points into callprof' '
	srv_start s &&
	END_BY_INT=t attach_window s w1 200 &&
	exact w1 &&
	grep "sleds patched, unpatched at the end" w1.aerr &&
	srv_stats s s.after &&
	calm s.after &&
	after_detach s &&
	srv_cmd s "work 50" >s.work &&
	grep "^done 50 " s.work &&
	srv_stats s s.after2 &&
	calm_gdb s.after2
'

test_expect_success 'a call entered in the window and open at its end returns to its caller' '
	srv_stats s w2.P &&
	attach_bg w2 -o w2.cprof "$(cat s.pid)" &&
	window_open s w2 w2.A &&
	srv_cmd s "slow 600000" >w2.slow &&
	grep "^slow started$" w2.slow &&
	{ $STACKS frames "$(cat s.pid)" >w2.inside; test $? = 1; } &&
	grep "into callprof" w2.inside &&
	kill -INT "$(cat w2.apid)" &&
	attach_wait w2 30 &&
	expect_status w2.astatus 0 &&
	srv_stats s s.after &&
	after_detach s &&
	srv_cmd s release >w2.release &&
	grep "^released$" w2.release &&
	srv_poll s w2.C slow_done "$(($(stat_of w2.P slow_done) + 1))" &&
	calm_gdb w2.C
'

test_expect_success 'a third attach to the same process: exact counts again' '
	END_BY_INT=t attach_window s w3 100 &&
	exact w3 &&
	srv_stats s s.after &&
	after_detach s &&
	srv_quit s
'

test_done
