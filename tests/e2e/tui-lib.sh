# tui-lib.sh - drive `callprof tui` in a real terminal emulator (tmux), for
# the end-to-end tests and bench/tui.  Sourced after lib.sh (or, by the
# benchmark, on its own: it needs only PATH holding callprof).
#
#   tui_start NAME COLS ROWS ARGS...   run "callprof tui ARGS..." in a new
#                                      detached tmux session NAME of COLS x ROWS
#   tui_keys NAME KEYS...              tmux send-keys (key names: Up, Enter, C-c),
#                                      one key per argument
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
# user's tmux.  The pane runs NAME.run, a script that notes the terminal's
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

# tui_quote_ ARG: ARG single-quoted for sh.
tui_quote_ () {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

tui_start () {
	_tui_name=$1 _tui_cols=$2 _tui_rows=$3 &&
	shift 3 &&
	_tui_cmd="exec callprof tui" &&
	for _tui_a
	do
		_tui_cmd="$_tui_cmd $(tui_quote_ "$_tui_a")"
	done &&
	rm -f "$_tui_name.status" "$_tui_name.stty-before" "$_tui_name.stty-after" "$_tui_name.stderr" \
		"$_tui_name.keys-read" &&
	echo 0 >"$_tui_name.keys-sent" &&
	_tui_dir=$(pwd) &&
	cat >"$_tui_name.run" <<-EOF &&
	cd $(tui_quote_ "$_tui_dir") || exit 1
	PATH=$(tui_quote_ "$PATH")
	TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
	CALLPROF_TEST_TUI_KEYS=$(tui_quote_ "$_tui_dir/$_tui_name.keys-read")
	export PATH TERM LANG LC_ALL CALLPROF_TEST_TUI_KEYS
	unset LANGUAGE
	stty -g >$_tui_name.stty-before
	( $_tui_cmd ) 2>$_tui_name.stderr
	echo \$? >$_tui_name.status.tmp
	stty -g >$_tui_name.stty-after
	mv $_tui_name.status.tmp $_tui_name.status
	echo "tui-exited status=\$(cat $_tui_name.status)"
	exec sleep 3600
	EOF
	tui_tmux new-session -d -x "$_tui_cols" -y "$_tui_rows" -s "$_tui_name" \
		"sh $(tui_quote_ "$_tui_dir/$_tui_name.run")" &&
	# Keep the pane at this size whatever else attaches (nothing should).
	tui_tmux set-option -t "$_tui_name" window-size manual >/dev/null 2>&1
	tui_tmux resize-window -t "$_tui_name" -x "$_tui_cols" -y "$_tui_rows" >/dev/null 2>&1
	return 0
}

# tui_sent_ NAME N: N more keys were sent to NAME.
tui_sent_ () {
	echo $(($(cat "$1.keys-sent") + $2)) >"$1.keys-sent.tmp" &&
	mv "$1.keys-sent.tmp" "$1.keys-sent"
}

tui_keys () {
	_tui_name=$1 &&
	shift &&
	tui_tmux send-keys -t "$_tui_name" "$@" &&
	tui_sent_ "$_tui_name" $#
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
	until test "$(cat "$1.keys-read" 2>/dev/null)" = "$(cat "$1.keys-sent" 2>/dev/null)" ||
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
	return 0
}
