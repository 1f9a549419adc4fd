# tui-lib.sh - drive `callprof tui` in a real terminal emulator (tmux), for
# the end-to-end tests and bench/tui.  Sourced after lib.sh (or, by the
# benchmark, on its own: it needs only PATH holding callprof).
#
#   tui_start NAME COLS ROWS ARGS...   run "callprof tui ARGS..." in a new
#                                      detached tmux session NAME of COLS x ROWS
#   tui_start_all "NAMES" COLS ROWS ARGS...
#                                      tui_start for each of NAMES in one tmux call,
#                                      then until each program waits for a key
#   tui_keys NAME KEYS...              tmux send-keys (key names: Up, Enter, C-c),
#                                      one key per argument
#   tui_keys_all "NAMES" KEYS...       the same keys to each of NAMES, one tmux call
#   tui_type NAME TEXT                 send TEXT literally (send-keys -l)
#   tui_screen NAME FILE               the screen as text into FILE (capture-pane -p),
#                                      once the program has read every key sent
#                                      (at most 10 s)
#   tui_screen_joined NAME FILE        the same with lines the terminal wrapped
#                                      joined again (-J): a line longer than the
#                                      pane is one the program overflowed
#   tui_wait NAME ERE                  until a screen line matches ERE (10 s)
#   tui_wait_gone NAME ERE             until no screen line matches ERE (10 s)
#   tui_wait_row NAME FN               until a row (not the title bar, not the
#                                      status line) shows function FN (10 s)
#   tui_wait_no_row NAME FN            until no row shows FN (10 s)
#   tui_rows FILE FN                   how many rows of a screen show FN
#   tui_row FILE FN                    "LINE COLUMN MARK" of FN's first row
#   tui_show FILE                      print a captured screen, framed
#   tui_wait_exit NAME                 until the program has ended (10 s); its
#                                      exit status is then in NAME.status
#   tui_body FILE                      the screen's rows without the title bar
#                                      (first line) and the status line (last)
#   tui_stop                           end the tmux server and every session
#
# Every session lives on a private tmux server (-L callprof-test-PID, its
# socket in a directory of our own), so that no test ever sees or touches a
# user's tmux.  The pane runs FIRST.run NAME (FIRST: the first session
# started with it, tui_start_all), a script that notes the terminal's
# settings (stty -g) before and after callprof, its exit status and its
# stderr (NAME.stty-before, NAME.stty-after, NAME.status, NAME.stderr), then
# prints "tui-exited status=N" and waits, so the pane stays to be captured.
# The program runs with TERM=xterm-256color and LANG=LC_ALL=C.UTF-8.
#
# A screen is only worth looking at once the program has handled every key
# sent to it: before, it may show the state before a key, or one caught in
# the middle of a redraw (a slow, sanitized program on a loaded machine
# writes a screen in pieces).  So the program runs with
# CALLPROF_TEST_TUI_KEYS=NAME.keys-read, where it writes how many keys it has
# read each time it waits for the next one (after drawing), and every key
# sent is counted in NAME.keys-sent; tui_screen captures once the two agree.
# What is left, tmux not yet having shown all the program wrote, is what
# tui_poll_'s two equal captures in a row are for.
#
# The files go to the current directory (the test's trash directory).

TUI_SOCKET=callprof-test-$$
TUI_WAIT_STEPS=${TUI_WAIT_STEPS:-200}	# x 0.05 s

# tmux with our private server; C.UTF-8 so that capture-pane hands back
# UTF-8 rather than '_' for every non-ASCII character.
tui_tmux () {
	env -u TMUX LC_ALL=C.UTF-8 LANG=C.UTF-8 TMUX_TMPDIR="$TUI_TMPDIR" \
		tmux -u -L "$TUI_SOCKET" "$@"
}

# tui_have_tmux: true if tmux can be run here.
tui_have_tmux () {
	command -v tmux >/dev/null 2>&1
}

# A directory for the server's socket: short (a socket's path has a limit
# of 107 bytes) and ours.
TUI_TMPDIR=${TUI_TMPDIR:-$(mktemp -d "${TMPDIR:-/tmp}/cp-tmux.XXXXXX")} || {
	echo "error: cannot make a directory for tmux's socket" >&2
	exit 1
}

# Where the sessions' programs run (tui_script_): the trash directory.
TUI_HERE=$(pwd -P)

# tui_q_ ARG: _tui_quoted is ARG single-quoted for sh (no process forked:
# on a loaded machine each fork costs much, and a test starts many sessions).
tui_q_ () {
	_tui_in=$1 _tui_quoted=
	while :
	do
		case $_tui_in in
		*\'*)
			_tui_quoted="$_tui_quoted${_tui_in%%\'*}'\\''"
			_tui_in=${_tui_in#*\'}
			;;
		*)
			_tui_quoted="'$_tui_quoted$_tui_in'"
			return 0
			;;
		esac
	done
}

# tui_quote_ ARG: ARG single-quoted for sh.
tui_quote_ () {
	tui_q_ "$1" && printf '%s' "$_tui_quoted"
}

# tui_script_ RUNNER ARGS...: RUNNER, the script a pane runs (see above)
# for "callprof tui ARGS...", given the session's NAME as its argument;
# TUI_ENV, if set, holds VAR=VALUE words it exports first.
tui_script_ () {
	_tui_run=$1 &&
	shift &&
	_tui_cmd="exec callprof tui" &&
	for _tui_a
	do
		tui_q_ "$_tui_a" &&
		_tui_cmd="$_tui_cmd $_tui_quoted"
	done &&
	_tui_dir=$(pwd) &&
	tui_q_ "$_tui_dir" &&
	_tui_qdir=$_tui_quoted &&
	tui_q_ "$PATH" &&
	cat >"$_tui_run" <<-EOF
	cd $_tui_qdir || exit 1
	PATH=$_tui_quoted
	${TUI_ENV:+export $TUI_ENV}
	TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
	CALLPROF_TEST_TUI_KEYS=$_tui_qdir/\$1.keys-read
	export PATH TERM LANG LC_ALL CALLPROF_TEST_TUI_KEYS
	unset LANGUAGE
	stty -g >\$1.stty-before
	( $_tui_cmd ) 2>\$1.stderr
	echo \$? >\$1.status.tmp
	stty -g >\$1.stty-after
	mv \$1.status.tmp \$1.status
	echo "tui-exited status=\$(cat \$1.status)"
	exec sleep 3600
	EOF
}

tui_start () {
	tui_start_all "$@" || return 1
}

# tui_start_all "NAMES" COLS ROWS ARGS...: tui_start for each of NAMES
# (separated by blanks; letters, digits, '-' and '_') in one tmux call;
# each program is then up and waiting for its first key, or 10 s have
# passed (the program did not come up: the caller's next wait fails).
tui_start_all () {
	_tui_names=$1 _tui_c=$2 _tui_r=$3 &&
	shift 3 &&
	for _tui_s in $_tui_names
	do
		break
	done &&
	set -- "$(pwd)/$_tui_s.run" "$@" &&
	tui_script_ "$@" &&
	tui_q_ "$1" &&
	_tui_argv= &&
	for _tui_s in $_tui_names
	do
		rm -f "$_tui_s.status" "$_tui_s.stty-before" "$_tui_s.stty-after" "$_tui_s.stderr" \
			"$_tui_s.keys-read" &&
		echo 0 >"$_tui_s.keys-sent" &&
		# The pane keeps this size whatever else attaches (nothing should).
		_tui_argv="$_tui_argv new-session -d -x $_tui_c -y $_tui_r -s $_tui_s \"sh $_tui_quoted $_tui_s\" \\;"
		_tui_argv="$_tui_argv set-option -t $_tui_s window-size manual \\;"
		_tui_argv="$_tui_argv resize-window -t $_tui_s -x $_tui_c -y $_tui_r \\;"
	done &&
	eval "tui_tmux $_tui_argv" >/dev/null &&
	for _tui_s in $_tui_names
	do
		_tui_i=0
		until test -f "$_tui_s.keys-read" || test -f "$_tui_s.status" ||
			test $_tui_i -ge "$TUI_WAIT_STEPS"
		do
			sleep 0.05
			_tui_i=$((_tui_i + 1))
		done
	done
}

# tui_sent_ NAME N: N more keys were sent to NAME (only the tests read and
# write NAME.keys-sent: no rename needed).
tui_sent_ () {
	read -r _tui_sent <"$1.keys-sent" &&
	echo $((_tui_sent + $2)) >"$1.keys-sent"
}

tui_keys () {
	_tui_name=$1 &&
	shift &&
	tui_tmux send-keys -t "$_tui_name" "$@" &&
	tui_sent_ "$_tui_name" $#
}

# tui_keys_all "NAMES" KEYS...: tui_keys for each of NAMES, in one tmux call.
tui_keys_all () {
	_tui_names=$1 &&
	shift &&
	_tui_argv= &&
	_tui_ks= &&
	for _tui_a
	do
		tui_q_ "$_tui_a" &&
		_tui_ks="$_tui_ks $_tui_quoted"
	done &&
	for _tui_s in $_tui_names
	do
		_tui_argv="$_tui_argv send-keys -t $_tui_s $_tui_ks \\;"
	done &&
	eval "tui_tmux $_tui_argv" &&
	for _tui_s in $_tui_names
	do
		tui_sent_ "$_tui_s" $# || return 1
	done
}

# Each byte of TEXT is a key to the program (curses' getch).
tui_type () {
	tui_tmux send-keys -t "$1" -l "$2" &&
	tui_sent_ "$1" "$(printf '%s' "$2" | LC_ALL=C wc -c)"
}

# tui_settle_ NAME: until the program in NAME has read every key sent to it
# and waits for the next, or has ended (10 s; then on regardless, and the
# caller's check fails on what the screen shows).
tui_settle_ () {
	_tui_j=0
	read -r _tui_sent <"$1.keys-sent"
	until { _tui_read=; read -r _tui_read <"$1.keys-read"; } 2>/dev/null
		test "$_tui_read" = "$_tui_sent" ||
		test -f "$1.status" || test $_tui_j -ge $((TUI_WAIT_STEPS * 5))
	do
		sleep 0.01
		_tui_j=$((_tui_j + 1))
	done
	test $_tui_j -lt $((TUI_WAIT_STEPS * 5)) ||
		echo "tui: callprof tui in $1 read $(cat "$1.keys-read" 2>/dev/null || echo no) of the $(cat "$1.keys-sent") keys sent in 10 s"
	return 0
}

tui_screen () {
	tui_settle_ "$1" &&
	tui_tmux capture-pane -p -t "$1" >"$2"
}

tui_screen_joined () {
	tui_settle_ "$1" &&
	tui_tmux capture-pane -p -J -t "$1" >"$2"
}

tui_body () {
	sed -e '1d' -e '$d' "$1"
}

# tui_poll_ NAME WANT SCOPE ERE: until a line of the screen (SCOPE all) or
# of its rows (SCOPE body: no title bar, no status line) matches ERE (WANT
# 1) or none does (WANT 0), on two captures 50 ms apart that are the same
# (the screen is still); on failure says why and shows the last screen.
tui_poll_ () {
	_tui_i=0
	rm -f "$1.prev"
	while :
	do
		tui_screen "$1" "$1.screen" || {
			echo "tui: no tmux session $1"
			return 1
		}
		if test "$3" = body; then
			tui_body "$1.screen" >"$1.scope"
		else
			cp "$1.screen" "$1.scope"
		fi
		# Met on two captures in a row, the same: a screen caught in the
		# middle of a redraw does not count.
		_tui_met=
		if grep -Eq -e "$4" "$1.scope"; then
			test "$2" = 1 && _tui_met=t
		else
			test "$2" = 0 && _tui_met=t
		fi
		if test -n "$_tui_met"; then
			cmp -s "$1.screen" "$1.prev" && return 0
			cp "$1.screen" "$1.prev"
		else
			rm -f "$1.prev"
		fi
		# The program ended: waiting longer will not change the screen.
		if test -f "$1.status" && test $_tui_i -gt 2; then
			echo "tui: callprof tui ended with status $(cat "$1.status") while waiting"
			break
		fi
		test $_tui_i -ge "$TUI_WAIT_STEPS" && break
		sleep 0.05
		_tui_i=$((_tui_i + 1))
	done
	_tui_what=line
	test "$3" = body && _tui_what=row
	if test "$2" = 1; then
		echo "tui: no $_tui_what matching /$4/ on the screen of $1; the last screen:"
	else
		echo "tui: a $_tui_what still matches /$4/ on the screen of $1; the last screen:"
	fi
	tui_show "$1.screen"
	if test -s "$1.stderr"; then
		echo "tui: its stderr:"
		cat "$1.stderr"
	fi
	return 1
}

# tui_show FILE: a captured screen, framed, without its trailing blank lines.
tui_show () {
	awk '{ l[NR] = $0; if ($0 != "") n = NR } END { for (i = 1; i <= n; i++) print "| " l[i]; print "+-- (" NR " lines)" }' "$1"
}

tui_wait () {
	tui_poll_ "$1" 1 all "$2"
}

tui_wait_gone () {
	tui_poll_ "$1" 0 all "$2"
}

# tui_fn_ere FN: an ERE matching FN as a whole name.
tui_fn_ere () {
	printf '(^|[^[:alnum:]_])%s([^[:alnum:]_]|$)' "$1"
}

# tui_wait_row NAME FN / tui_wait_no_row NAME FN: until a row shows function
# FN (a whole name), or until none does.
tui_wait_row () {
	tui_poll_ "$1" 1 body "$(tui_fn_ere "$2")"
}

tui_wait_no_row () {
	tui_poll_ "$1" 0 body "$(tui_fn_ere "$2")"
}

# tui_rows FILE FN: how many rows of screen FILE show FN.
tui_rows () {
	tui_body "$1" | grep -Ec -e "$(tui_fn_ere "$2")"
}

# tui_row FILE FN: "LINE COLUMN MARK" of the first row of screen FILE that
# shows FN: its line on the screen (the title bar is 1), the column the name
# starts at (in characters, from 0) and the mark before it ("+", "-", or "."
# for none).  Nothing when no row shows it.
tui_row () {
	python3 - "$1" "$2" <<-'EOF'
	import re, sys
	lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
	if lines and lines[-1] == "":
	    lines.pop()
	pat = re.compile(r"(?:^|(?<=[^\w]))" + re.escape(sys.argv[2]) + r"(?=[^\w]|$)")
	for i in range(1, len(lines) - 1):
	    m = pat.search(lines[i])
	    if m:
	        pre = lines[i][:m.start()].rstrip()
	        mark = pre[-1] if pre and pre[-1] in "+-" else "."
	        print(i + 1, m.start(), mark)
	        break
	EOF
}

tui_wait_exit () {
	_tui_i=0
	while ! test -f "$1.status"
	do
		if test $_tui_i -ge "$TUI_WAIT_STEPS"; then
			echo "tui: callprof tui in $1 did not end; the last screen:"
			tui_screen "$1" "$1.screen" && tui_show "$1.screen"
			return 1
		fi
		sleep 0.05
		_tui_i=$((_tui_i + 1))
	done
}

tui_stop () {
	tui_tmux kill-server >/dev/null 2>&1
	rm -rf "$TUI_TMPDIR"
	tui_reap_
	return 0
}

# tui_reap_: the callprof tui programs this test started (their working
# directory is TUI_HERE, the trash directory, which may be gone by now)
# that the server's end has not ended within 2 s are killed.  A program
# that loses its terminal ends by itself (t0430 checks that); but a
# sanitized one can then hang for ever in LeakSanitizer's exit check,
# spinning, and a whole suite's worth of them starves every later test on
# a small machine.
tui_reap_ () {
	_tui_i=0 &&
	while :
	do
		_tui_left= &&
		for _tui_p in /proc/[0-9]*
		do
			case $(readlink "$_tui_p/cwd" 2>/dev/null) in
			"$TUI_HERE" | "$TUI_HERE (deleted)") ;;
			*) continue ;;
			esac
			tr '\0' ' ' <"$_tui_p/cmdline" 2>/dev/null | grep -q '^callprof tui ' &&
			_tui_left="$_tui_left ${_tui_p#/proc/}"
		done
		test -z "$_tui_left" && return 0
		if test $_tui_i -ge 40; then
			# shellcheck disable=SC2086
			kill -9 $_tui_left 2>/dev/null
			return 0
		fi
		sleep 0.05
		_tui_i=$((_tui_i + 1))
	done
}
