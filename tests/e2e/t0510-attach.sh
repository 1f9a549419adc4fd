#!/bin/sh
# matrix: cc-opt
test_description='callprof attach PID: a window of a server started without callprof (issue 23)'
. "$(dirname "$0")/lib.sh"

# The acceptance test of `callprof attach` (issue 23, "Acceptance"): the
# server (workloads/s-server.c) counts its own calls; a window's profile must
# hold exactly the calls the server made between two of its stats replies,
# both read while the hooks' slots point at callprof's runtime (the server
# reports where they point: hooks=glibc|callprof).  Nothing here is skipped:
# while the attaching engine is missing every attach case fails, saying so.
#
# gcc -O2 runs every scenario; the other columns the core: one attach with
# a call open at attach, exact counts, and the server serving on after it.

CHECK="python3 $TEST_DIRECTORY/check-attach.py"
full=
test "$(basename "$CC")" = gcc && test "$OPT" = -O2 && full=t

# In a sleds column the server is built with sleds: the window is the
# time its sleds are calls (sleds=call), record shows them so, and the
# hook slots it has none of; t0516 holds what only sleds have.
REC_STAT="hooks callprof"
if test "$CP_BUILD_KIND" = sleds; then
	ON_STAT=sleds=call
	OFF_STAT="sleds nop"
	REC_STAT="sleds call"
fi
. "$TEST_DIRECTORY/attach-server-lib.sh"

EXACT="handle_request parse compute reply spin_leaf on_epoll_event on_pipe_data on_usr1 usr1_work"
exact () {
	$CHECK exact "$1.json" "$1.A" "$1.B" $EXACT &&
	$CHECK bound "$1.json" "$1.P" "$1.C"
}

test_expect_success 'setup' '
	build_workload s-server.c
'

# What the attach cases rest on, true without callprof: the server's
# protocol, its counters and its view of the hook slots.
test_expect_success 'the server alone: replies, counters, hooks=glibc, quit with status 0' '
	srv_start alone &&
	srv_stats alone alone.0 &&
	expect_stat alone.0 $OFF_STAT &&
	{ test "$CP_BUILD_KIND" = sleds || test "$(stat_of alone.0 slots)" -ge 2; } &&
	expect_stat alone.0 fn:worker_loop 4 &&
	expect_stat alone.0 fn:handle_request 0 &&
	srv_cmd alone "work 100" >alone.work &&
	grep "^done 100 ns=[0-9]" alone.work &&
	srv_cmd alone "spin 20" >alone.spin &&
	grep "^spun calls=[1-9][0-9]* ns=[0-9]" alone.spin &&
	srv_cmd alone "slow 100" >alone.slow &&
	grep "^slow started$" alone.slow &&
	srv_poll alone alone.slow1 slow_done 1 &&
	test_must_fail srv_cmd alone release &&
	srv_cmd alone "slow 600000" &&
	srv_cmd alone release >alone.release &&
	grep "^released$" alone.release &&
	srv_cmd alone ping >alone.ping &&
	grep "^pong 1$" alone.ping &&
	srv_usr1 alone alone.0 &&
	test_must_fail srv_cmd alone "work x" &&
	srv_cmd alone "work 0" &&
	srv_stats alone alone.1 &&
	expect_stat alone.1 fn:handle_request 100 &&
	expect_stat alone.1 fn:compute 100 &&
	expect_stat alone.1 fn:spin_leaf "$(sed "s/^spun calls=\([0-9]*\) .*/\1/" alone.spin)" &&
	expect_stat alone.1 fn:on_epoll_event 1 &&
	expect_stat alone.1 fn:on_pipe_data 1 &&
	expect_stat alone.1 fn:usr1_work 1 &&
	expect_stat alone.1 pings 1 &&
	calm alone.1 &&
	srv_quit alone &&
	expect_stat alone.final slow_done 2 &&
	expect_stat alone.final fn:cmd_quit 1
'

# The server's EINTR check can fail: a stop and a continue (as a naive
# ptrace attach and detach do; strace -p and gdb -p alike) make the thread
# in epoll_wait return EINTR, which Linux does not restart; read and
# nanosleep are restarted.
test_expect_success 'the server sees the EINTR of a stop and continue (its check can fail)' '
	srv_start stop &&
	pid=$(cat stop.pid) &&
	kill -STOP $pid &&
	sleep 0.3 &&
	kill -CONT $pid &&
	srv_poll stop stop.1 eintr_epoll 1 &&
	expect_stat stop.1 eintr 1 &&
	expect_stat stop.1 short_sleeps 0 &&
	srv_cmd stop ping &&
	srv_quit stop
'

# Under record every call of the run is in the profile: the server's own
# final counts must be the profile's, function by function, and no other
# function may appear (so the server counts every instrumented function it
# has), and its probe sees the slots on callprof's hooks.
test_expect_success 'under callprof record the profile holds exactly the server'"'"'s counts' '
	rm -f rec.cmd rec.reply rec.status &&
	mkfifo rec.cmd &&
	{
		(
			callprof record -o rec.cprof -- ./t-server rec.cmd rec.reply \
				>rec.stdout 2>rec.stderr
			echo $? >rec.status
		) </dev/null >/dev/null 2>&1 &
	} &&
	srv_wait_lines rec 1 &&
	sed -n "1s/^ready //p" rec.reply >rec.pid &&
	srv_stats rec rec.0 &&
	expect_stat rec.0 $REC_STAT &&
	srv_cmd rec "work 300" &&
	srv_cmd rec "spin 10" &&
	srv_cmd rec "slow 50" &&
	srv_cmd rec ping &&
	srv_usr1 rec rec.0 &&
	srv_cmd rec quit &&
	srv_wait_status rec &&
	expect_status rec.status 0 &&
	sed -n "s/^final /final /p" rec.stdout >rec.final &&
	test_line_count = 1 rec.final &&
	callprof export -f json rec.cprof >rec.json &&
	$CHECK record rec.json rec.final
'

# The window: a handler entered before the attach returns inside it (the
# test releases it once the window is open); the only requests of the
# window are the 1000 of window_core.
test_expect_success 'attach --duration 2: the profile holds exactly the window'"'"'s calls' '
	srv_start s &&
	srv_cmd s "slow 60000" >s.slow &&
	grep "^slow started$" s.slow &&
	RELEASE=t attach_window s w1 1000 --duration 2 &&
	expect_stat w1.A slow_done 0 &&
	expect_stat w1.C slow_done 1 &&
	test $(($(stat_of w1.B fn:handle_request) - $(stat_of w1.A fn:handle_request))) = 1000 &&
	exact w1 &&
	grep "attached to $(cat s.pid) " w1.aerr
'

test_expect_success 'a call open at attach: its context, marked open at attach, 0 calls' '
	test_path_is_file w1.json &&
	$CHECK open w1.json "worker_main;worker_loop;handle_slow" &&
	$CHECK exact w1.json w1.A w1.B handle_slow worker_loop worker_main &&
	callprof report --min-percent=0 w1.cprof >w1.report &&
	grep "handle_slow (open at attach)" w1.report
'

test_expect_success 'blocked threads saw no EINTR and no short sleep, in and after the window' '
	test_path_is_file w1.C &&
	calm w1.A &&
	calm w1.B &&
	calm w1.C &&
	expect_stat w1.B pings 1
'

test_expect_success 'after the detach the server serves on, untraced, at glibc'"'"'s hooks' '
	test_path_is_file w1.C &&
	pid=$(cat s.pid) &&
	srv_cmd s "work 100" >s.after &&
	grep "^done 100 " s.after &&
	srv_stats s s.after2 &&
	test $(($(stat_of s.after2 fn:handle_request) - $(stat_of w1.C fn:handle_request))) = 100 &&
	expect_stat s.after2 $OFF_STAT &&
	calm s.after2 &&
	grep "^TracerPid:	0$" /proc/$pid/status &&
	! grep -q "^State:	[tT]" /proc/$pid/status
'

# A thread blocked in a call for the whole window runs no hook, yet is what
# one may attach to find: the stop gives it a tree of its open calls, timed
# from the attach, its time off CPU.  So is main, blocked in pthread_join.
still_window () {
	_sw=$1 &&
	shift &&
	srv_cmd s "slow 60000" >"$_sw.slow" &&
	grep "^slow started$" "$_sw.slow" &&
	attach_bg "$_sw" -o "$_sw.cprof" --duration 1 "$@" "$(cat s.pid)" &&
	attach_wait "$_sw" 30 &&
	expect_status "$_sw.astatus" 0 &&
	srv_cmd s release >"$_sw.release" &&
	grep "^released$" "$_sw.release" &&
	grep "threads ran no instrumented code in the window" "$_sw.aerr" &&
	callprof export -f json "$_sw.cprof" >"$_sw.json" &&
	$CHECK still "$_sw.json" "worker_main;worker_loop;handle_slow" 1 &&
	$CHECK still "$_sw.json" main 1 &&
	callprof report --min-percent=0 "$_sw.cprof" >"$_sw.report" &&
	grep "handle_slow (open at attach)" "$_sw.report"
}

test_expect_success 'a thread blocked through the whole window is in the profile, off CPU' '
	still_window w4
'

if test -n "$full"; then
test_expect_success 'the same in timing mode (--time=clock)' '
	still_window w4c --time=clock
'

# The split of a thread's time off CPU that no hook saw (blocked at the
# end of the window) takes the scheduler's run-queue wait since the
# thread's tracking began.  Counted since the thread began, a server's
# run-queue wait from before the attach came out as inactive time.  The
# reader gets some (a spin on one CPU, the first this test may use, beside
# a busy loop, which ends with this script if not before) before the
# attach, then in the window answers the attach's stats and blocks in read
# until the end.
test_expect_success 'a thread blocked at the end: wait, not the run-queue wait from before the attach' '
	srv_start d &&
	pid=$(cat d.pid) &&
	cpu=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p" /proc/self/status) &&
	taskset -a -c -p "$cpu" $pid >/dev/null &&
	{ taskset -c "$cpu" sh -c "while kill -0 \$PPID 2>/dev/null; do :; done" & } &&
	echo $! >hog.pid &&
	srv_cmd d "spin 600" >d.spin &&
	kill "$(cat hog.pid)" &&
	delay=0 &&
	for f in /proc/$pid/task/*/schedstat
	do
		delay=$((delay + $(cut -d" " -f2 "$f")))
	done &&
	{ test $delay -ge 100000000 || { echo "only $delay ns of run-queue wait before the attach"; false; }; } &&
	attach_bg d1 -o d1.cprof --duration 1.5 $pid &&
	window_open d d1 d1.A &&
	attach_wait d1 30 &&
	expect_status d1.astatus 0 &&
	callprof export -f json d1.cprof >d1.json &&
	$CHECK blocked d1.json "reader_main;read_command" 0.8 &&
	srv_quit d
'

test_expect_success 'a second attach (--duration 3) gives exact counts again' '
	attach_window s w2 500 --duration 3 &&
	exact w2 &&
	calm w2.C
'

test_expect_success 'Ctrl-C ends the window: the profile is written, exit 0, the server runs on' '
	srv_stats s w3.P &&
	attach_bg w3 -o w3.cprof "$(cat s.pid)" &&
	window_open s w3 w3.A &&
	window_core s w3 200 &&
	sleep 1 &&
	kill -INT "$(cat w3.apid)" &&
	window_end s w3 20 &&
	exact w3 &&
	srv_cmd s "work 10" &&
	calm w3.C
'

for mode in --time=clock --time=none
do
	test_expect_success "attach $mode: exact counts" '
		tag=w-${mode#--time=} &&
		END_BY_INT=t attach_window s $tag 300 $mode &&
		exact $tag
	'
done

test_expect_success 'attach --mode=coverage: the window'"'"'s functions are listed' '
	END_BY_INT=t attach_window s wc 300 --mode=coverage &&
	$CHECK listed wc.json handle_request parse compute reply spin_leaf &&
	calm wc.C
'
fi

test_expect_success 'quit after the attaches: status 0, only the server'"'"'s own output' '
	srv_quit s &&
	calm s.final &&
	expect_stat s.final $OFF_STAT
'

if test -n "$full"; then
test_expect_success 'the process killed while attached: attach says so and ends' '
	srv_start k &&
	pid=$(cat k.pid) &&
	attach_bg wk -o wk.cprof --duration 30 $pid &&
	window_open k wk wk.A &&
	kill -9 $pid &&
	srv_wait_status k &&
	expect_status k.status 137 &&
	attach_wait wk 20 &&
	cat wk.aerr &&
	grep -E "process $pid\>.*(ended|exited|killed|died|gone)" wk.aerr &&
	! kill -0 "$(cat wk.apid)" 2>/dev/null
'
fi

# Leave nothing running: a server or an attach left by a failed case.
for f in *.pid *.apid
do
	test -s "$f" || continue
	case "$f" in *.apid) st=${f%.apid}.astatus ;; *) st=${f%.pid}.status ;; esac
	test -s "$st" || kill -9 "$(cat "$f")" 2>/dev/null
done
test_done
