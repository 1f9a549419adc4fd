# attach-server-lib.sh - drive workloads/s-server.c (t-server) and a
# `callprof attach` of it, for t0510 (hooks) and t0516 (sleds).  Sourced
# after lib.sh.  ON_STAT is what a stats reply shows while the window is
# open (hooks=callprof: the hook slots point at callprof's runtime;
# sleds=call: the sleds are patched), OFF_STAT the KEY VALUE once it has
# closed; hooks builds by default.
ON_STAT=${ON_STAT:-hooks=callprof}
OFF_STAT=${OFF_STAT:-hooks glibc}

# srv_start NAME: start ./t-server (no callprof) on NAME.cmd (a FIFO) and
# NAME.reply, its exit status into NAME.status (renamed into place: never
# seen empty); wait for "ready PID" and put PID in NAME.pid.  NAME.sent
# lists the commands sent, with the reply line each waits for.
srv_start () {
	rm -f "$1.cmd" "$1.reply" "$1.status" "$1.pid" "$1.stdout" "$1.stderr" "$1.sent" &&
	mkfifo "$1.cmd" || return 1
	(
		./t-server "$1.cmd" "$1.reply" >"$1.stdout" 2>"$1.stderr"
		echo $? >"$1.status.tmp" && mv "$1.status.tmp" "$1.status"
	) </dev/null >/dev/null 2>&1 &
	srv_wait_lines "$1" 1 &&
	sed -n '1s/^ready \([0-9][0-9]*\)$/\1/p' "$1.reply" >"$1.pid" &&
	test -s "$1.pid"
}

srv_lines () {
	if test -f "$1.reply"; then
		wc -l <"$1.reply"
	else
		echo 0
	fi
}

# srv_wait_lines NAME N: until NAME.reply has N lines (at most 20 s); says
# why not on stderr (srv_cmd's stdout is often a file).  Its counter is its
# own: the loops of srv_poll and window_open call it.
srv_wait_lines () {
	_wl=0
	while test "$(srv_lines "$1")" -lt "$2"
	do
		# ended: but a reply written just before the end ("bye") counts
		if test -f "$1.status" && test "$(srv_lines "$1")" -lt "$2"; then
			echo "server $1 ended (status $(cat "$1.status")) before reply $2" >&2
			srv_show "$1" >&2
			return 1
		fi
		if test $_wl -ge 1000; then
			echo "server $1: no reply $2 in 20 s" >&2
			srv_show "$1" >&2
			return 1
		fi
		sleep 0.02
		_wl=$((_wl + 1))
	done
}

# srv_show NAME: what tells how a server ended or why it did not answer:
# whether its process is still there, its stdout (the "final" line, with
# fn:dispatch and fn:cmd_quit, comes only from main's own return), stderr,
# the commands sent and the reply file (a "quit" the server obeyed has its
# "bye" there).
srv_show () {
	_ss_pid=$(cat "$1.pid" 2>/dev/null)
	if test -n "$_ss_pid" && test -d "/proc/$_ss_pid"; then
		echo "process $_ss_pid: $(tr '\0' ' ' <"/proc/$_ss_pid/cmdline" 2>/dev/null)" \
			"$(grep '^State:' "/proc/$_ss_pid/status" 2>/dev/null)"
	else
		echo "process ${_ss_pid:-?} is gone"
	fi
	for _ss_f in stdout stderr sent reply
	do
		echo "--- $1.$_ss_f:"
		cat -n "$1.$_ss_f" 2>/dev/null | cut -c1-1000
	done
	echo "---"
}

# srv_cmd NAME COMMAND: send COMMAND, print its reply (the next line).
# Fails on no reply or an "error: " one.
srv_cmd () {
	_n=$(($(srv_lines "$1") + 1)) &&
	echo "$_n: $2" >>"$1.sent" &&
	printf '%s\n' "$2" 1<>"$1.cmd" &&
	srv_wait_lines "$1" $_n &&
	_r=$(sed -n "${_n}p" "$1.reply") &&
	echo "$_r" &&
	case "$_r" in
	error:*) echo "server $1: $2: $_r" >&2; return 1 ;;
	esac
}

# srv_stats NAME FILE: the stats reply into FILE.
srv_stats () {
	srv_cmd "$1" stats >"$2" &&
	grep -q '^stats ' "$2"
}

# stat_of FILE KEY: the value of KEY=VALUE in a stats or final line.
stat_of () {
	tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"
}

# expect_stat FILE KEY VALUE
expect_stat () {
	_v=$(stat_of "$1" "$2")
	test "$_v" = "$3" && return 0
	echo "$1: $2=$_v, want $3"
	return 1
}

# srv_poll NAME FILE KEY VALUE: stats into FILE until KEY is VALUE (at
# most 5 s): for what another thread counts after a reply.
srv_poll () {
	_sp=0
	while srv_stats "$1" "$2" && test "$(stat_of "$2" "$3")" != "$4"
	do
		test $_sp -lt 250 || { expect_stat "$2" "$3" "$4"; return 1; }
		sleep 0.02
		_sp=$((_sp + 1))
	done
	expect_stat "$2" "$3" "$4"
}

# calm FILE: no blocking call failed with EINTR, no 200 ms sleep was short,
# nothing unexpected
calm () {
	expect_stat "$1" eintr 0 &&
	expect_stat "$1" short_sleeps 0 &&
	expect_stat "$1" anomalies 0
}

# srv_usr1 NAME FILE: send SIGUSR1, wait until the handler ran (usr1
# advanced by one from the stats in FILE).
srv_usr1 () {
	_want=$(($(stat_of "$2" usr1) + 1)) &&
	kill -USR1 "$(cat "$1.pid")" &&
	srv_poll "$1" "$1.usr1" usr1 $_want
}

# srv_wait_status NAME: until the server has ended (at most 10 s).
srv_wait_status () {
	_i=0
	while ! test -s "$1.status"
	do
		test $_i -lt 500 || { echo "$1 still running after 10 s"; return 1; }
		sleep 0.02
		_i=$((_i + 1))
	done
}

# srv_quit NAME: quit, wait for the exit, which must be 0; stdout holds
# only the server's own two lines, stderr nothing.
srv_quit () {
	srv_cmd "$1" quit >"$1.bye" &&
	echo bye >"$1.bye.expect" &&
	test_cmp "$1.bye.expect" "$1.bye" &&
	srv_wait_status "$1" &&
	expect_status "$1.status" 0 &&
	test_line_count = 2 "$1.stdout" &&
	test "$(sed -n 1p "$1.stdout")" = "server ready" &&
	sed -n 2p "$1.stdout" >"$1.final" &&
	grep -q '^final ' "$1.final" &&
	test_must_be_empty "$1.stderr"
}

expect_status () {
	test "$(cat "$1")" = "$2" && return 0
	echo "$1: exit status $(cat "$1"), want $2"
	return 1
}

# attach_bg NAME ATTACH-ARGS...: `callprof attach ARGS` in the background,
# with SIGINT at its default (a background job of a script ignores it);
# its pid in NAME.apid, stdout and stderr in NAME.aout and NAME.aerr, its
# exit status in NAME.astatus when it ends.
attach_bg () {
	_a=$1
	shift
	rm -f "$_a.apid" "$_a.astatus" "$_a.aout" "$_a.aerr"
	(
		env --default-signal=INT callprof attach "$@" >"$_a.aout" 2>"$_a.aerr" &
		echo $! >"$_a.apid"
		wait $!
		echo $? >"$_a.astatus"
	) </dev/null >/dev/null 2>&1 &
	_i=0
	while ! test -s "$_a.apid" && test $_i -lt 250
	do
		sleep 0.02
		_i=$((_i + 1))
	done
	test -s "$_a.apid"
}

# attach_failed NAME: attach ended before its window opened: say why.
attach_failed () {
	echo "callprof attach ended (status $(cat "$1.astatus")) before its window opened; stderr:"
	cat "$1.aerr"
	if grep -q 'not yet' "$1.aerr"; then
		echo "callprof attach is not implemented yet (the attaching engine of issue 23):"
		echo "this acceptance test fails until it is"
	fi
	return 1
}

# window_open SRV NAME FILE: wait until attach NAME has loaded its runtime
# into SRV (a callprof mapping in /proc/PID/maps) and the server reports
# its hook slots pointing at it (hooks=callprof); that stats reply, the
# first inside the window, goes to FILE.
window_open () {
	_pid=$(cat "$1.pid") &&
	_i=0 &&
	while ! grep -q callprof "/proc/$_pid/maps"
	do
		test -f "$2.astatus" && { attach_failed "$2"; return 1; }
		test $_i -lt 500 || { echo "no callprof mapping in process $_pid after 10 s"; return 1; }
		sleep 0.02
		_i=$((_i + 1))
	done &&
	_wo=0 &&
	while srv_stats "$1" "$3" && ! grep -q " $ON_STAT " "$3"
	do
		test -f "$2.astatus" && { attach_failed "$2"; return 1; }
		test $_wo -lt 500 || {
			echo "the server never reported $ON_STAT in 10 s:"
			cat "$3"
			return 1
		}
		sleep 0.02
		_wo=$((_wo + 1))
	done
}

# attach_wait NAME SECS: until attach NAME ends (at most SECS s; then it is
# killed and this fails); it must not have died by a signal.
attach_wait () {
	_i=0
	while ! test -s "$1.astatus"
	do
		if test $_i -ge $(($2 * 50)); then
			echo "callprof attach still running after $2 s: killed"
			kill -9 "$(cat "$1.apid")"
			return 1
		fi
		sleep 0.02
		_i=$((_i + 1))
	done
	_s=$(cat "$1.astatus")
	if test "$_s" -gt 128; then
		echo "callprof attach died by signal $((_s - 128)); stderr:"
		cat "$1.aerr"
		return 1
	fi
}

# window_core SRV NAME N: inside the open window (after window_open's
# NAME.A): with RELEASE set, the release of the slow request open since
# before the attach; N requests, a spin, a ping of the blocked threads and
# a SIGUSR1, then NAME.B, which must still be inside the window.
window_core () {
	if test -n "${RELEASE:-}"; then
		srv_cmd "$1" release >"$2.release" || return 1
	fi &&
	srv_cmd "$1" "work $3" >"$2.work" &&
	grep -q "^done $3 " "$2.work" &&
	srv_cmd "$1" "spin 20" >"$2.spin" &&
	srv_cmd "$1" ping >"$2.ping" &&
	srv_usr1 "$1" "$2.A" &&
	srv_stats "$1" "$2.B" &&
	if ! grep -q " $ON_STAT " "$2.B"; then
		echo "the window closed before stats B: the commands took longer than the window"
		cat "$2.B"
		return 1
	fi
}

# window_end SRV NAME SECS: the end of attach NAME's window (at most SECS
# s), which must be a success; NAME.C after it, with the slots back where
# the window found them (OFF_STAT), and the profile NAME.cprof exported to
# NAME.json.
window_end () {
	attach_wait "$2" "$3" &&
	expect_status "$2.astatus" 0 &&
	srv_stats "$1" "$2.C" &&
	expect_stat "$2.C" $OFF_STAT &&
	callprof export -f json "$2.cprof" >"$2.json"
}

# attach_window SRV NAME N ATTACH-ARGS...: a whole window (its variables
# are its own: sh has no locals, and the helpers it calls set _s and _n):
# NAME.P before the attach, NAME.A and NAME.B inside (window_core), then the attach's
# end, which must be a success, NAME.C after it with the slots back on
# glibc's hooks, and the profile NAME.cprof exported to NAME.json.  With
# END_BY_INT set, the window has no --duration: a Ctrl-C (SIGINT) ends it
# after NAME.B, so that no load can close it before the commands are done
# (beside two busy loops, a 1 s window closed before them: "the window
# closed before stats B").
attach_window () {
	_aw_s=$1 &&
	_aw_w=$2 &&
	_aw_n=$3 &&
	shift 3 &&
	srv_stats "$_aw_s" "$_aw_w.P" &&
	attach_bg "$_aw_w" -o "$_aw_w.cprof" "$@" "$(cat "$_aw_s.pid")" &&
	window_open "$_aw_s" "$_aw_w" "$_aw_w.A" &&
	window_core "$_aw_s" "$_aw_w" "$_aw_n" &&
	if test -n "${END_BY_INT:-}"; then
		kill -INT "$(cat "$_aw_w.apid")"
	fi &&
	window_end "$_aw_s" "$_aw_w" 30
}

# exact NAME: the window's requests, spins, pings and signal handlers in
# the profile are exactly the server's (B - A), and no function has more
# calls in the profile than the server made from P to C.
