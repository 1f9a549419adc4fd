#!/bin/sh
# matrix: cc-opt
test_description='callprof attach while a signal handler runs on a frame stopped before its enter hook or after its exit hook'
. "$(dirname "$0")/lib.sh"

# Hook positions: a sleds build has none (its assembly functions call the
# hooks); t0516 holds a thread stopped inside a sled.
if test "$CP_BUILD_KIND" = sleds; then
	test_skip 'frames a signal interrupted before or after a hook' \
		'a sleds build has no hook calls (t0516: a thread inside a sled)'
	test_done
fi

# The frame under a signal frame was interrupted anywhere: its pc is an
# instruction, not a return address, and it may stand before the function's
# enter hook (not open: the enter is still to come) or after its exit hook
# (not open: the exit ran).  It cannot be single-stepped, as the innermost
# frame is; its code is read forward to the first call, jump or return.
# workloads/s-attach-sigframe.c places the signal (an int3) exactly there,
# in functions written in assembly; its SIGTRAP handler blocks until the
# test lets it go.  Seeded as open, the first would be entered twice
# (worker;before_enter;before_enter), the second would stay open with the
# calls after it below it (worker;after_exit;before_enter).

cleanup_target () {
	test -s "$TRASH_DIRECTORY/storm.pid" && kill "$(cat "$TRASH_DIRECTORY/storm.pid")" 2>/dev/null
	for _f in "$TRASH_DIRECTORY"/*.pid
	do
		case "$_f" in */storm.pid) continue ;; esac
		test -s "$_f" && kill -9 "$(cat "$_f")" 2>/dev/null
	done
	true
}
trap cleanup_target EXIT

# tgt_start NAME PROG: start ./PROG (no callprof) on NAME.cmd (a FIFO) and
# NAME.reply; wait for "ready PID" (both gates blocked), PID in NAME.pid.
tgt_start () {
	rm -f "$1.cmd" "$1.reply" "$1.pid" &&
	mkfifo "$1.cmd" &&
	{ ./"$2" "$1.cmd" "$1.reply" </dev/null >"$1.out" 2>&1 & } &&
	tgt_wait_lines "$1" 1 &&
	sed -n '1s/^ready \([0-9][0-9]*\)$/\1/p' "$1.reply" >"$1.pid" &&
	test -s "$1.pid"
}

tgt_lines () {
	if test -f "$1.reply"; then wc -l <"$1.reply"; else echo 0; fi
}

# tgt_wait_lines NAME N: until NAME.reply has N lines (at most 20 s); a
# target that ended is said at once, with its output and replies.  Its
# counter is its own: the polling loops below call it.
tgt_wait_lines () {
	_wl=0
	while test "$(tgt_lines "$1")" -lt "$2"
	do
		# ended: but a reply written just before the end ("bye") counts
		if test -s "$1.pid" && tgt_gone "$(cat "$1.pid")" &&
			test "$(tgt_lines "$1")" -lt "$2"; then
			echo "$1: the target ended before reply $2"
			tgt_show "$1"
			return 1
		fi
		test $_wl -lt 1000 || { echo "$1: no reply $2 in 20 s"; tgt_show "$1"; return 1; }
		sleep 0.02
		_wl=$((_wl + 1))
	done
}

# tgt_gone PID: the target ended (a zombie not yet reaped by this shell too)
tgt_gone () {
	! kill -0 "$1" 2>/dev/null || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# tgt_show NAME: the target's output and its replies
tgt_show () {
	echo "--- $1.out:"
	cat "$1.out" 2>/dev/null
	echo "--- $1.reply:"
	cat -n "$1.reply" 2>/dev/null | cut -c1-1000
	echo "---"
}

# tgt_cmd NAME COMMAND: send COMMAND, print its reply
tgt_cmd () {
	_n=$(($(tgt_lines "$1") + 1)) &&
	printf '%s\n' "$2" 1<>"$1.cmd" &&
	tgt_wait_lines "$1" $_n &&
	sed -n "${_n}p" "$1.reply"
}

# stat_of FILE KEY: the value of KEY=VALUE in a stats line
stat_of () {
	tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"
}

# tgt_stats NAME FILE: the stats into FILE
tgt_stats () {
	tgt_cmd "$1" stats >"$2" &&
	grep -q "^stats " "$2"
}

# tgt_until NAME FILE TRAPPED DONE: stats into FILE until the handler is
# blocked (TRAPPED 1) or not (0) and DONE calls have returned (at most 20 s)
tgt_until () {
	_pl=0
	while tgt_stats "$1" "$2" &&
		! { test "$(stat_of "$2" trapped)" = "$3" && test "$(stat_of "$2" done)" = "$4"; }
	do
		test $_pl -lt 1000 || { echo "not trapped=$3 done=$4:"; cat "$2"; return 1; }
		sleep 0.02
		_pl=$((_pl + 1))
	done
}

# attach_bg NAME PID ARGS...: callprof attach in the background, ended by
# SIGINT (attach_end); its pid in NAME.apid
attach_bg () {
	_a=$1 _p=$2
	shift 2
	{ env --default-signal=INT callprof attach "$@" -o "$_a.cprof" "$_p" >"$_a.aout" 2>"$_a.aerr" & } &&
	echo $! >"$_a.apid"
}

# window_open NAME TGT FILE: until the target's hooks are callprof's; that
# stats reply (the first inside the window) into FILE
window_open () {
	_pl=0
	while tgt_stats "$2" "$3" && test "$(stat_of "$3" hooks)" != callprof
	do
		kill -0 "$(cat "$1.apid")" 2>/dev/null || { echo "attach ended:"; cat "$1.aerr"; return 1; }
		test $_pl -lt 1000 || { echo "the hooks never became callprof's"; cat "$1.aerr"; return 1; }
		sleep 0.02
		_pl=$((_pl + 1))
	done
}

# attach_end NAME: SIGINT, and its exit status must be 0
attach_end () {
	kill -INT "$(cat "$1.apid")" &&
	wait "$(cat "$1.apid")" &&
	rm "$1.apid"
}

# paths_ok FOLDED: only paths the program makes
paths_ok () {
	awk "{ print \$1 }" "$1" | sort -u >paths &&
	! grep -v -x -e main -e worker -e "worker;before_enter" -e "worker;before_enter;leaf" \
		-e "worker;after_exit" -e "worker;after_exit;leaf" -e "worker;on_trap" \
		-e "worker;on_trap;trap_wait" paths
}

# unpaired REPORT: the report's count of unpaired exits (0 if it has none)
unpaired () {
	sed -n "s/^# warning: incomplete: .* \([0-9][0-9]*\) unpaired exits.*/\1/p" "$1" | grep . || echo 0
}

# calls_of FOLDED PATH
calls_of () {
	awk -v p="$2" "\$1 == p { n += \$2 } END { print n + 0 }" "$1"
}

test_expect_success 'setup' '
	build_workload s-attach-sigframe.c -ldl &&
	tgt_start t t-attach-sigframe
'

test_expect_success 'stopped before the enter hook: not open, entered once in the window' '
	tgt_cmd t "call before" >/dev/null &&
	tgt_until t b.P 1 0 &&
	attach_bg b "$(cat t.pid)" --time=none &&
	window_open b t b.A &&
	tgt_cmd t release >/dev/null &&
	tgt_until t b.B 0 1 &&
	attach_end b &&
	callprof report b.cprof >b.rep &&
	test "$(unpaired b.rep)" = 0 &&
	callprof export -f folded -m calls b.cprof >b.f &&
	paths_ok b.f &&
	test "$(calls_of b.f "worker;before_enter")" = 1 &&
	test "$(calls_of b.f "worker;before_enter;leaf")" = 1
'

test_expect_success 'stopped after the exit hook: not open, nothing called later below it' '
	tgt_cmd t "call after" >/dev/null &&
	tgt_until t a.P 1 1 &&
	attach_bg a "$(cat t.pid)" --time=none &&
	window_open a t a.A &&
	tgt_cmd t release >/dev/null &&
	tgt_until t a.B 0 2 &&
	tgt_cmd t "call before" >/dev/null &&
	tgt_until t a.C 1 2 &&
	tgt_cmd t release >/dev/null &&
	tgt_until t a.D 0 3 &&
	attach_end a &&
	callprof report a.cprof >a.rep &&
	test "$(unpaired a.rep)" = 0 &&
	callprof export -f folded -m calls a.cprof >a.f &&
	paths_ok a.f &&
	! grep "^worker;after_exit" a.f &&
	test "$(calls_of a.f "worker;before_enter")" = 1 &&
	test "$(calls_of a.f "worker;on_trap;trap_wait")" = 1
'

test_expect_success 'quit: status 0' '
	tgt_cmd t quit >t.bye &&
	grep -q "^bye$" t.bye &&
	rm t.pid
'

test_done
