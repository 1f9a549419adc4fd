#!/bin/sh
test_description='callprof attach never harms or holds its target: refusals, bounded waits, Ctrl-C, SIGKILL (issue 30, A)'
. "$(dirname "$0")/lib.sh"

# The target (workloads/s-attach-busy.c) runs threads that compute, sleep,
# read a pipe and wait in epoll, and checks each result; told to stop (the
# file "stop"), it prints "done threads=N anomalies=0" and exits 0 if
# nothing went wrong.  Every case ends with that check: whatever attach
# did or failed to do, the target's output and status are those of a run
# without callprof.
#
# Every process a case starts is listed in $STARTED with its start time
# (/proc/PID/stat field 22) and killed when the script ends, if it is
# still the process we started.
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

# start_busy NAME [OPTION...]: start t-attach-busy (its pid in $pid, its
# output in NAME.out and NAME.err, its status in NAME.status when it ends),
# and wait until it is set up.
start_busy () {
	_n=$1
	shift
	rm -f "$_n.ready" "$_n.stop" "$_n.status" &&
	{
		(
			./t-attach-busy "$_n.ready" "$_n.stop" "$@" >"$_n.out" 2>"$_n.err"
			echo $? >"$_n.status"
		) </dev/null >/dev/null 2>&1 &
	} &&
	wait_for "$_n.ready" &&
	pid=$(cat "$_n.ready") &&
	list_started "$pid"
}

# busy_done NAME: tell the target to stop; it must end by itself (within
# 20 s), with status 0 and its one line of output: nothing went wrong.
busy_done () {
	touch "$1.stop" &&
	_i=0 &&
	while ! test -s "$1.status"
	do
		test $_i -lt 1000 || { echo "$1 still running 20 s after stop"; return 1; }
		sleep 0.02
		_i=$((_i + 1))
	done &&
	cat "$1.err" &&
	test "$(cat "$1.status")" = 0 &&
	grep -q "^done threads=[0-9]* anomalies=0\$" "$1.out" &&
	test_line_count = 1 "$1.out" &&
	test_must_be_empty "$1.err"
}

# untouched PID: no thread of PID is stopped or traced.
untouched () {
	for _s in /proc/"$1"/task/*/status
	do
		if grep -q "^State:[[:space:]]*[tT]" "$_s" || ! grep -q "^TracerPid:[[:space:]]*0\$" "$_s"; then
			echo "still held: $_s"
			grep -E "^(State|TracerPid):" "$_s"
			return 1
		fi
	done
}

# attach_bounded NAME SECS ARGS...: callprof attach ARGS, killed if it runs
# longer than SECS (then this fails); its status in NAME.astatus.
attach_bounded () {
	_n=$1
	_secs=$2
	shift 2
	timeout -s KILL "$_secs" env --default-signal=INT "$CALLPROF_BUILD/callprof" attach "$@" \
		>"$_n.aout" 2>"$_n.aerr"
	echo $? >"$_n.astatus"
	if test "$(cat "$_n.astatus")" -gt 128; then
		echo "callprof attach $* died by signal $(($(cat "$_n.astatus") - 128)) (killed after $_secs s?):"
		cat "$_n.aerr"
		return 1
	fi
}

# one_line NAME PATTERN: attach NAME failed (status 1) with one line matching PATTERN.
one_line () {
	test "$(cat "$1.astatus")" = 1 &&
	test_line_count = 1 "$1.aerr" &&
	grep -E "^callprof: error: (attach: )?$2" "$1.aerr"
}

test_expect_success 'setup' '
	build_workload s-attach-busy.c -ldl &&
	build_workload s-attach-tracer.c &&
	$CC $OPT -g -shared -fPIC -o libslowctor.so "$WORKLOADS/s-lib-slowctor.c"
'

test_expect_success 'the target alone: its output, status 0' '
	start_busy alone &&
	sleep 0.3 &&
	busy_done alone
'

# A1: PTRACE_SEIZE refused (another tracer) was taken for a thread that
# had ended, and retried for ever with every thread held.
test_expect_success 'two attaches at once, six times: each ends, with a profile or one line' '
	start_busy two &&
	for i in 1 2 3 4 5 6
	do
		{ attach_bounded two-a$i 60 --duration 0.3 -o two-a$i.cprof $pid & } &&
		other=$! &&
		attach_bounded two-b$i 60 --duration 0.3 -o two-b$i.cprof $pid &&
		wait $other &&
		for w in a b
		do
			n=two-$w$i &&
			if test "$(cat $n.astatus)" = 0; then
				grep "^callprof: attached to $pid .*; wrote $n.cprof\$" $n.aerr
			else
				one_line $n "(thread [0-9]+ of process $pid \(t-attach-busy\) is traced by process [0-9]+ \(callprof\)|process $pid \(t-attach-busy\) is (already traced by process [0-9]+ \(callprof\)|being recorded by another callprof attach))"
			fi || return 1
		done &&
		untouched $pid || return 1
	done &&
	busy_done two
'

test_expect_success 'a thread held by another tracer: one line naming it, the target unharmed' '
	start_busy traced &&
	tid=$(ls /proc/$pid/task | grep -v "^$pid\$" | head -1) &&
	rm -f traced.tracer &&
	{ ./t-attach-tracer $tid traced.tracer & } &&
	tracer=$! &&
	list_started $tracer &&
	wait_for traced.tracer &&
	attach_bounded traced 60 --duration 0.3 -o traced.cprof $pid &&
	one_line traced "thread $tid of process $pid \(t-attach-busy\) is traced by process $tracer \(t-attach-tracer\)" &&
	test_path_is_missing traced.cprof &&
	kill $tracer &&
	{ wait $tracer || :; } &&
	untouched $pid &&
	busy_done traced
'

# A4: success is said only of a profile seen written: complete, and this
# attach's (the process's pid, recording since the attach).
test_expect_success 'a profile the process cannot write (a file size limit): one line, exit 1' '
	start_busy fsize &&
	prlimit --pid $pid --fsize=2048:unlimited &&
	attach_bounded fsize 60 --duration 0.3 -o fsize.cprof $pid &&
	one_line fsize "process $pid \(t-attach-busy\) could not write its profile to fsize.cprof: File too large" &&
	test_path_is_missing fsize.cprof &&
	busy_done fsize
'

test_expect_success 'a profile written is said so, and an older one kept as FILE.old' '
	start_busy ok &&
	echo old >ok.cprof &&
	: >ok.cprof &&
	attach_bounded ok 60 --duration 0.3 -o ok.cprof $pid &&
	test "$(cat ok.astatus)" = 0 &&
	grep "^callprof: moved the previous ok.cprof to ok.cprof.old\$" ok.aerr &&
	grep "^callprof: attached to $pid (t-attach-busy) for .*; wrote ok.cprof\$" ok.aerr &&
	test_path_is_file ok.cprof.old &&
	callprof report ok.cprof >/dev/null &&
	busy_done ok
'

if test "$(id -u)" = 0 && id -u nobody >/dev/null 2>&1; then
	test_expect_success 'the process drops to another user in the window: it cannot write, said in one line' '
		mkdir -p rootdir &&
		chmod 755 rootdir &&
		start_busy drop setuid "$(id -u nobody)" &&
		{ attach_bounded drop 60 --duration 1.5 -o rootdir/drop.cprof $pid & } &&
		apid=$! &&
		i=0 &&
		while ! grep -q callprof-attach /proc/$pid/maps && test $i -lt 500
		do
			sleep 0.02 && i=$((i + 1))
		done &&
		touch drop.stop.uid &&
		wait $apid &&
		one_line drop "process $pid \(t-attach-busy\) could not write its profile to rootdir/drop.cprof: Permission denied" &&
		test_path_is_missing rootdir/drop.cprof &&
		busy_done drop
	'
else
	test_skip 'the process drops to another user in the window' 'not root'
fi

test_done
