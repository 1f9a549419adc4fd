#!/bin/sh
# matrix: cc-opt
test_description='callprof attach: the frames a longjmp abandons in the window close at the jump'
. "$(dirname "$0")/lib.sh"

# The server (workloads/s-server.c) answers "jump N": N times, jump_holder
# sets a jmp_buf and calls jump_dive 6 deep (7 frames), whose deepest call
# longjmps back to jump_holder, which then calls jump_after.  record
# interposes longjmp (runtime/interpose.c); attach points the program's GOT
# slots of the longjmp family at its runtime copy's for the window, as it
# does the exec family's.  Before, the abandoned frames stayed open until an
# exit below them matched, and jump_after landed under them (seen: the call
# after a longjmp out of six frames under the sixth; this test failed so
# in the hooks columns).  A sleds column attaches to a sledded server: its
# next entry finds the frames whose slots lie below its own abandoned and
# closes them (sleds.c), interposed or not; the abandoned frames' stubs
# are on the stack the jump leaves, which nothing returns into.

CHECK="python3 $TEST_DIRECTORY/check-attach.py"
SEL="python3 $TEST_DIRECTORY/check-select.py"
if test "$CP_BUILD_KIND" = sleds; then
	ON_STAT=sleds=call
	OFF_STAT="sleds nop"
fi
. "$TEST_DIRECTORY/attach-server-lib.sh"

test_expect_success 'setup' '
	build_workload s-server.c
'

test_expect_success 'the server alone: jump N calls what it says' '
	srv_start alone &&
	srv_cmd alone "jump 5" >alone.jump &&
	grep "^jumped 5$" alone.jump &&
	srv_stats alone alone.1 &&
	expect_stat alone.1 fn:jump_holder 5 &&
	expect_stat alone.1 fn:jump_dive 35 &&
	expect_stat alone.1 fn:jump_after 5 &&
	srv_quit alone
'

# The window ends by SIGINT once the commands are done (END_BY_INT in
# attach-server-lib.sh: no load can close it first).
test_expect_success 'attach: jump_after under jump_holder, no call under the abandoned frames, exact counts' '
	srv_start s &&
	srv_stats s w.P &&
	attach_bg w -o w.cprof "$(cat s.pid)" &&
	window_open s w w.A &&
	srv_cmd s "jump 50" >w.jump &&
	grep "^jumped 50$" w.jump &&
	srv_stats s w.B &&
	grep -q " $ON_STAT " w.B &&
	kill -INT "$(cat w.apid)" &&
	window_end s w 30 &&
	$CHECK exact w.json w.A w.B jump_holder jump_dive jump_after cmd_jump &&
	$SEL paths w.json >w.paths &&
	grep ";cmd_jump;jump_holder;jump_after 50$" w.paths &&
	grep ";cmd_jump;jump_holder;jump_dive;jump_dive;jump_dive;jump_dive;jump_dive;jump_dive;jump_dive 50$" w.paths &&
	! grep "jump_dive;.*jump_after" w.paths &&
	! grep "jump_dive;jump_dive;jump_dive;jump_dive;jump_dive;jump_dive;jump_dive;jump_dive" w.paths
'

# After the window the slots are the C library'"'"'s again: the program jumps
# on as it did, unrecorded, and quits with status 0.
test_expect_success 'after the detach: the jumps work, the server quits with status 0' '
	srv_cmd s "jump 5" >after.jump &&
	grep "^jumped 5$" after.jump &&
	srv_stats s after &&
	expect_stat after $OFF_STAT &&
	test $(($(stat_of after fn:jump_after) - $(stat_of w.C fn:jump_after))) = 5 &&
	srv_quit s
'

test_done
