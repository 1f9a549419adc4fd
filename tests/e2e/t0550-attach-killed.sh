#!/bin/sh
# matrix: cc-opt
test_description='callprof attach killed (SIGKILL) at each of its phases: the target lives on, unharmed (issue 31, item 5)'
. "$(dirname "$0")/lib.sh"

# When its tracer dies the kernel lets each thread go on from whatever
# registers and memory it has then.  CALLPROF_TEST_KILL_AT=POINT (a test
# hook of engine/attach-ptrace.c) makes callprof kill itself with SIGKILL
# at POINT; for each point the target (workloads/s-attach-kill.c) must
# live on untraced and unstopped, and, told to stop, print what it prints
# without callprof and exit 0: its threads check every result, every pipe
# byte, every sleep, and the main thread (the one attach runs its calls
# on) its vector registers, rounding modes, signal mask, alternate signal
# stack and errno across each of its waits.
#
# The points, in the order an attach passes them (docs/internals/attach.md,
# "Killed"): every thread seized; the caller chosen; each call of ours
# (map: the page of the return stub, dlopen, start, stop, release) with
# its registers set, in its middle (at its first system call) and at its
# rt_sigreturn; the runtime started; the switch with every thread held,
# its seeds written, half its slots written (the exits), all written; the
# window; the end with every thread held, its slots restored; the profile
# written.  Killed before the slots were ours, nothing is recorded and no
# profile is written; from then until the stop, the process writes its
# profile when it ends (recording until the end, or until the slots were
# restored); from the stop on, the profile is written.

STARTED=$TRASH_DIRECTORY.pids
: >"$STARTED"
kill_started () {
	while read -r _p _t
	do
		test "$(awk '{ print $22 }' /proc/"$_p"/stat 2>/dev/null)" = "$_t" &&
			kill -9 "$_p" 2>/dev/null
	done <"$STARTED"
	rm -f "$STARTED"
}
trap 'kill_started' EXIT
trap 'exit 1' INT TERM HUP

list_started () {
	echo "$1 $(awk '{ print $22 }' /proc/"$1"/stat)" >>"$STARTED"
}

. "$TEST_DIRECTORY/attach-busy-lib.sh"

# start_kill NAME: t-attach-kill, as attach-busy-lib's start_target runs it
# ($pid), listed, with no profile of an earlier run left.
start_kill () {
	rm -f "$1.cprof" &&
	start_target "$1" ./t-attach-kill &&
	list_started "$pid"
}

# free PID: within 5 s no thread of PID is traced or stopped (t, T).
free () {
	_i=0
	while test $_i -lt 250
	do
		if ! grep -q "^TracerPid:[[:space:]]*[1-9]" /proc/"$1"/task/*/status 2>/dev/null &&
		   ! grep -q "^State:[[:space:]]*[tT]" /proc/"$1"/task/*/status 2>/dev/null
		then
			return 0
		fi
		sleep 0.02
		_i=$((_i + 1))
	done
	echo "process $1 is still traced or stopped:"
	grep -H "^State\|^TracerPid" /proc/"$1"/task/*/status
	return 1
}

# kill_done NAME: it is told to stop and ends by itself (target_done), with
# the output of a run without callprof.
kill_done () {
	target_done "$1" &&
	echo "done threads=4 anomalies=0" >"$1.expect" &&
	test_cmp "$1.expect" "$1.out"
}

# killed_at NAME POINT: attach to a fresh target, callprof killed at POINT;
# the target lives on (0.3 s more), untraced and unstopped, and ends as
# without callprof.  The profile: none before "switch-slots"; from
# "switched" on, one that reads back, with the target's fib in it.
killed_at () {
	start_kill "$1" &&
	sleep 0.1 &&
	{
		CALLPROF_TEST_KILL_AT=$2 timeout -s KILL 60 "$CALLPROF_BUILD/callprof" attach \
			--duration 0.3 -o "$PWD/$1.cprof" "$pid" >"$1.aout" 2>"$1.aerr"
		echo $? >"$1.astatus"
	} &&
	test "$(cat "$1.astatus")" = 137 &&
	grep "^callprof: test: killed at $2\$" "$1.aerr" &&
	free "$pid" &&
	sleep 0.3 &&
	kill -0 "$pid" &&
	free "$pid" &&
	kill_done "$1" &&
	case $2 in
	seized|chosen|map*|dlopen*|start*|switch-seized|switch-seeded)
		test_path_is_missing "$1.cprof" ;;
	switch-slots|switch-sleds)
		# its exits only, or half its sleds: a profile, if any, that reads back
		{ ! test -f "$1.cprof" || "$CALLPROF_BUILD/callprof" report "$1.cprof" >"$1.report"; } ;;
	*)
		"$CALLPROF_BUILD/callprof" report "$1.cprof" >"$1.report" &&
		grep -q "fib" "$1.report" ;;
	esac
}

POINTS='seized chosen map-set map map-return dlopen-set dlopen dlopen-return start-set start
start-return started switch-seized switch-seeded switch-slots switched window end-seized
end-slots stop-set stop stop-return stopped release-set release release-return'
# A sleds build (a sleds column) has no hook slots; its sleds are written
# at the switch (half the pages, all), and at the end written back (half,
# all), the threads run out of callprof's code, and the return addresses
# are given back (the first, all).
HALF_POINT=switch-slots
if test "$CP_BUILD_KIND" = sleds; then
	HALF_POINT="switch-sleds end-given"
	POINTS=$(echo $POINTS | sed 's/switch-slots/switch-sleds switch-sleds-all/;
		s/end-slots/end-slots end-sleds end-sleds-all end-runout end-given end-given-all/')
fi
# The load, the calls and the stop go the same way whatever the compiler:
# the gcc columns (hooks and sleds) kill at every point.  Where the build
# matters is where the threads are met, at the switch and at the end: the
# clang columns kill there, and in the load once (CI time: 20 s a column).
if test "$CC" = clang && test "$CP_BUILD_KIND" != sleds; then
	POINTS='dlopen switch-seized switch-seeded switch-slots switched end-seized end-slots stopped'
fi

test_expect_success 'setup' '
	build_workload s-attach-kill.c &&
	build_workload s-attach-busy.c -ldl &&
	$CC $OPT -g -shared -fPIC -o libslowctor.so "$WORKLOADS/s-lib-slowctor.c"
'

test_expect_success 'the target alone, and attached to without a kill: its output, status 0' '
	start_kill alone &&
	sleep 0.3 &&
	kill_done alone &&
	start_kill plain &&
	"$CALLPROF_BUILD/callprof" attach --duration 0.3 -o "$PWD/plain.cprof" "$pid" 2>plain.aerr &&
	grep "wrote .*plain.cprof" plain.aerr &&
	free "$pid" &&
	kill_done plain
'

for point in $POINTS
do
	test_expect_success "killed at $point: the target lives on, as without callprof" '
		killed_at "k-$point" "$point"
	'
done

# The copy a killed attach left is inert (before the window) or records
# on (in it): a later attach then records as usual (the first copy's TLS
# block, which the second borrows, is not in use), or is refused in one
# line, the first attach's FILE written at the end.
test_expect_success 'attached again after a kill before the window: a profile, the target unharmed' '
	killed_at again started &&
	start_kill again2 &&
	{
		CALLPROF_TEST_KILL_AT=switch-seeded "$CALLPROF_BUILD/callprof" attach --duration 0.2 \
			-o "$PWD/again2-a.cprof" "$pid" 2>again2-a.aerr
		test $? = 137
	} &&
	free "$pid" &&
	"$CALLPROF_BUILD/callprof" attach --duration 0.3 -o "$PWD/again2.cprof" "$pid" 2>again2.aerr &&
	grep "wrote .*again2.cprof" again2.aerr &&
	free "$pid" &&
	kill_done again2 &&
	test_path_is_missing again2-a.cprof &&
	"$CALLPROF_BUILD/callprof" report again2.cprof | grep -q fib
'

test_expect_success 'attached again after a kill in the window: one line, the first profile at the end' '
	start_kill inwin &&
	{
		CALLPROF_TEST_KILL_AT=window "$CALLPROF_BUILD/callprof" attach --duration 0.2 \
			-o "$PWD/inwin.cprof" "$pid" 2>inwin-a.aerr
		test $? = 137
	} &&
	free "$pid" &&
	test_must_fail "$CALLPROF_BUILD/callprof" attach --duration 0.3 -o "$PWD/inwin2.cprof" \
		"$pid" 2>inwin2.aerr &&
	test_line_count = 1 inwin2.aerr &&
	grep "is being recorded by another callprof attach (or by one that was killed" inwin2.aerr &&
	kill_done inwin &&
	test_path_is_missing inwin2.cprof &&
	"$CALLPROF_BUILD/callprof" report inwin.cprof | grep -q fib
'

# A second attach unloads its copy at the end (dlclose; the first copy,
# whose TLS block the others borrow, stays): killed with the call's
# registers set, in its middle and at its return, the target lives on
# (the call runs to its end without us), the profile was written before,
# and a next attach records.
test_expect_success 'killed as a second attach unloads its copy: the target lives on, the next attach records' '
	start_kill unl &&
	"$CALLPROF_BUILD/callprof" attach --duration 0.2 -o "$PWD/unl-first.cprof" "$pid" \
		2>unl-first.aerr &&
	free "$pid" &&
	fails= &&
	for point in dlclose-set dlclose dlclose-return
	do
		{
			CALLPROF_TEST_KILL_AT=$point timeout -s KILL 60 "$CALLPROF_BUILD/callprof" \
				attach --duration 0.2 -o "$PWD/unl-$point.cprof" "$pid" 2>"unl-$point.aerr"
			echo $? >"unl-$point.astatus"
		} &&
		test "$(cat "unl-$point.astatus")" = 137 &&
		grep -q "^callprof: test: killed at $point\$" "unl-$point.aerr" &&
		free "$pid" &&
		"$CALLPROF_BUILD/callprof" report "unl-$point.cprof" | grep -q fib ||
			fails="$fails $point"
	done &&
	"$CALLPROF_BUILD/callprof" attach --duration 0.2 -o "$PWD/unl.cprof" "$pid" 2>unl.aerr &&
	grep "wrote .*unl.cprof" unl.aerr &&
	free "$pid" &&
	kill_done unl &&
	if test -n "$fails"
	then
		for f in $fails
		do
			echo "--- killed at $f:" && cat "unl-$f.aerr"
		done
		false
	fi
'

# Killed while a call of ours waits: the dlopen, for the loader's lock,
# which a slow constructor of the program's holds (t0514's target,
# workloads/s-attach-busy.c).  Signals sent meanwhile to every thread
# (sigqueue: SI_QUEUE, the thread's id as value) reach the one in our call
# blocked there: the kernel keeps them pending, and the rt_sigreturn that
# ends the call (the constructor let go after the kill) delivers them with
# what their sender said, which the target's handler checks.  A real
# kill -9 from outside, this time.
test_expect_success 'kill -9 while its dlopen waits for the loader lock: signals sent meanwhile come, with their siginfo' '
	rm -f lk.go lk.sent lk.ready lk.stop lk.status &&
	{
		(
			SLOW_CTOR_UNTIL=$PWD/lk.go ./t-attach-busy lk.ready lk.stop dlopen-slow \
				"$PWD/libslowctor.so" siginfo "$PWD/lk.sent" >lk.out 2>lk.err
			echo $? >lk.status
		) </dev/null >/dev/null 2>&1 &
	} &&
	wait_for lk.ready &&
	pid=$(cat lk.ready) &&
	list_started "$pid" &&
	{ "$CALLPROF_BUILD/callprof" attach --duration 0.5 -o "$PWD/lk.cprof" "$pid" 2>lk.aerr & } &&
	apid=$! &&
	_i=0 &&
	while ! grep -q "^TracerPid:[[:space:]]*[1-9]" /proc/"$pid"/task/*/status 2>/dev/null &&
		test $_i -lt 500
	do
		sleep 0.02
		_i=$((_i + 1))
	done &&
	sleep 0.5 &&
	python3 - $pid lk.sent <<-\EOT &&
	import ctypes, os, struct, sys
	libc = ctypes.CDLL(None, use_errno=True)
	pid, sent = int(sys.argv[1]), 0
	for tid in sorted(int(t) for t in os.listdir(f"/proc/{pid}/task")):
	    # siginfo_t: signo, errno, code (SI_QUEUE), pid, uid, value (the tid)
	    info = ctypes.create_string_buffer(128)
	    struct.pack_into("iii4xiIq", info, 0, 0, 0, -1, os.getpid(), os.getuid(), tid)
	    for sig in 10, 12:  # SIGUSR1, SIGUSR2
	        struct.pack_into("i", info, 0, sig)
	        if libc.syscall(297, pid, tid, sig, info):  # rt_tgsigqueueinfo
	            sys.exit(f"rt_tgsigqueueinfo({pid}, {tid}): {os.strerror(ctypes.get_errno())}")
	        sent += 1
	open(sys.argv[2], "w").write(f"{sent}\n")
	EOT
	grep -q "^TracerPid:[[:space:]]*$apid" /proc/"$pid"/task/*/status &&
	kill -9 $apid &&
	{ wait $apid; test $? = 137; } &&
	free "$pid" &&
	touch lk.go &&
	sleep 0.3 &&
	touch lk.stop &&
	_i=0 &&
	while ! test -s lk.status
	do
		test $_i -lt 1000 || { echo "lk still running 20 s after stop"; false; } &&
		sleep 0.02 &&
		_i=$((_i + 1))
	done &&
	cat lk.err &&
	test "$(cat lk.status)" = 0 &&
	grep -q "^done threads=[0-9]* anomalies=0\$" lk.out &&
	test_must_be_empty lk.err &&
	test_path_is_missing lk.cprof
'

# Job control: the process stopped (SIGSTOP) while our dlopen waits, then
# callprof killed.  The kernel puts a thread a dead tracer let go back in
# the group stop: every thread stays stopped, untraced, until SIGCONT.
# (An epoll_wait may fail with EINTR after a stop and SIGCONT, with or
# without callprof: siginfo mode lets the target take it as the program's.)
test_expect_success 'kill -9 while the process is stopped by job control: it stays stopped; continued, it ends as without callprof' '
	rm -f jc.go jc.ready jc.stop jc.status &&
	echo 0 >jc.sent &&
	{
		(
			SLOW_CTOR_UNTIL=$PWD/jc.go ./t-attach-busy jc.ready jc.stop dlopen-slow \
				"$PWD/libslowctor.so" siginfo "$PWD/jc.sent" >jc.out 2>jc.err
			echo $? >jc.status
		) </dev/null >/dev/null 2>&1 &
	} &&
	wait_for jc.ready &&
	pid=$(cat jc.ready) &&
	list_started "$pid" &&
	{ "$CALLPROF_BUILD/callprof" attach --duration 0.5 -o "$PWD/jc.cprof" "$pid" 2>jc.aerr & } &&
	apid=$! &&
	_i=0 &&
	while ! grep -q "^TracerPid:[[:space:]]*$apid" /proc/"$pid"/task/*/status 2>/dev/null &&
		test $_i -lt 500
	do
		sleep 0.02
		_i=$((_i + 1))
	done &&
	sleep 0.3 &&
	kill -STOP "$pid" &&
	sleep 0.3 &&
	kill -9 $apid &&
	{ wait $apid; test $? = 137; } &&
	sleep 0.3 &&
	! grep -q "^TracerPid:[[:space:]]*[1-9]" /proc/"$pid"/task/*/status &&
	! grep "^State:" /proc/"$pid"/task/*/status | grep -v "T (stopped)" &&
	kill -CONT "$pid" &&
	free "$pid" &&
	touch jc.go &&
	sleep 0.3 &&
	touch jc.stop &&
	_i=0 &&
	while ! test -s jc.status
	do
		test $_i -lt 1000 || { echo "jc still running 20 s after stop"; false; } &&
		sleep 0.02 &&
		_i=$((_i + 1))
	done &&
	cat jc.err &&
	test "$(cat jc.status)" = 0 &&
	grep -q "^done threads=[0-9]* anomalies=0\$" jc.out &&
	test_must_be_empty jc.err
'

# The phases that hold a thread in our code or in a stop, again with the
# machine loaded (two busy loops: our stops then take longer to come, and
# the calls to return), three rounds each.  Once, in the gcc -O2 column:
# the loops would slow every script make check runs beside this one, and
# the other columns have killed callprof at each point above.
if test "$CC$OPT" != gcc-O2
then
	test_skip 'beside two busy loops: killed in each call and at each held phase, three rounds' \
		'run in the gcc -O2 column only'
else
test_expect_success 'beside two busy loops: killed in each call and at each held phase, three rounds' '
	{ sh -c "while :; do :; done" & } && b1=$! && list_started $b1 &&
	{ sh -c "while :; do :; done" & } && b2=$! && list_started $b2 &&
	fails= &&
	for round in 1 2 3
	do
		for point in seized dlopen start switch-seeded $HALF_POINT end-slots stop release
		do
			killed_at "b$round-$point" "$point" >"b$round-$point.log" 2>&1 ||
				fails="$fails $round:$point"
		done
	done &&
	kill $b1 $b2 &&
	if test -n "$fails"
	then
		for f in $fails
		do
			echo "--- round ${f%%:*}, killed at ${f#*:}:" &&
			cat "b${f%%:*}-${f#*:}.log" "b${f%%:*}-${f#*:}.aerr"
		done
		false
	fi
'
fi

test_done
