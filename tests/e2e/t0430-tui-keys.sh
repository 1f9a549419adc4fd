#!/bin/sh
test_description='callprof tui: every key in every view state, the program stays up (issue 30)'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

# Issue 30 item 15: x (focus), T (a thread whose tree the focus left
# empty), then Enter or h crashed the browser: a row function read row 0 of
# a view that had none.  The rule is that no key may find the browser in a
# state it does not handle, whatever came before; so rather than that one
# sequence, each case here brings the browser into a view state (a prefix
# of keys), then sends one key of KEYS - every key the browser knows and a
# few it does not - in a session of its own, for every key, and checks
# that the program read it and is still up (or, for q and Ctrl-C, ended
# with status 0).  After that key, the rest of KEYS follows (but q and
# Ctrl-C) as a walk onwards from there, and the program must still be up.
#
# The sessions of one state run side by side on one private tmux server
# (tui-lib.sh); the profile is t0520's s-tui (main -> parse_expr -> lex_token
# -> scan_digits, render_frame -> blit_rows/fill_rows, checksum under both,
# and a thread "helper" with helper_main -> compress_block).

trap tui_stop EXIT
# Killed (a timeout), the sessions' programs must not outlive the test.
trap 'tui_stop; exit 143' TERM
trap 'tui_stop; exit 130' INT

KEYS='Up Down PPage NPage k j g G Right l + Left h - Enter * e c t F f s C E / n N x X u m T L I ? Space BSpace Tab z q C-c Escape'

# keys_of TEXT: TEXT's characters as key arguments.
keys_of () {
	printf '%s' "$1" | sed 's/./& /g'
}

# explore STATE COLS ROWS FILES -- PREFIX...: for each key K of KEYS, a
# session STATE-K of COLSxROWS running "callprof tui FILES" gets the PREFIX
# keys, then K; one more session, STATE-walk, gets PREFIX then every key
# of KEYS but q and Ctrl-C, twice.  Fails naming the state and the key
# after which callprof tui died or stopped reading keys.  A few tmux
# calls per state, not per session: a call costs much on a loaded machine.
explore () {
	set -f # KEYS holds * and ?
	_st=$1 _cols=$2 _rows=$3 &&
	shift 3 &&
	_files= &&
	while test "$1" != --
	do
		_files="$_files $1" && shift
	done &&
	shift &&
	_names= &&
	_n=0 &&
	for _k in $KEYS walk
	do
		_n=$((_n + 1)) &&
		_names="$_names $_st-$_n"
	done &&
	tui_start_all "$_names" "$_cols" "$_rows" $_files &&
	if test $# -gt 0; then
		tui_keys_all "$_names" "$@"
	fi &&
	_n=0 &&
	for _k in $KEYS
	do
		_n=$((_n + 1)) &&
		alive "$_st-$_n" "$_st: prefix '$*'" || return 1
	done &&
	_walk=$(echo " $KEYS " | sed -e 's/ q / /' -e 's/ C-c / /') &&
	_argv= &&
	_n=0 &&
	for _k in $KEYS
	do
		_n=$((_n + 1)) &&
		tui_q_ "$_k" &&
		_argv="$_argv send-keys -t $_st-$_n $_tui_quoted \;" &&
		tui_sent_ "$_st-$_n" 1 || return 1
	done &&
	_argv="$_argv send-keys -t $_st-$((_n + 1))" &&
	for _k in $_walk $_walk
	do
		tui_q_ "$_k" &&
		_argv="$_argv $_tui_quoted" &&
		tui_sent_ "$_st-$((_n + 1))" 1 || return 1
	done &&
	eval "tui_tmux $_argv" &&
	_n=0 &&
	for _k in $KEYS walk
	do
		_n=$((_n + 1)) &&
		tui_settle_ "$_st-$_n" >/dev/null &&
		if test -f "$_st-$_n.status"; then
			# q and Ctrl-C quit, with status 0; they type themselves
			# into an open search prompt or only leave help or a page
			case "$_k:$(cat "$_st-$_n.status")" in
			q:0|C-c:0|C-c:130) ;;
			*) alive "$_st-$_n" "$_st: prefix '$*', key $_k" || return 1 ;;
			esac
		else
			alive "$_st-$_n" "$_st: prefix '$*', key $_k" || return 1
		fi
	done &&
	quit_all "$_names"
}

# quit_all "NAMES": end each session's program with Escape (out of a
# prompt, help or a page) and Ctrl-C while its terminal is there, then the
# sessions.  A program that ends because its terminal went away may not
# get through LeakSanitizer's exit in the sanitized build: the hangup's
# SIGCONT can cancel the SIGSTOP of LSan's tracer, which then waits for
# ever while the program spins.
quit_all () {
	_argv= &&
	for _s in $1
	do
		test -f "$_s.status" || _argv="$_argv send-keys -t $_s Escape C-c \;"
	done &&
	if test -n "$_argv"; then
		eval "tui_tmux $_argv"
	fi &&
	for _s in $1
	do
		_i=0
		while ! test -f "$_s.status" && test $_i -lt "$TUI_WAIT_STEPS"
		do
			sleep 0.05 && _i=$((_i + 1))
		done
		test -f "$_s.status" || { echo "$_s: Escape, Ctrl-C did not end callprof tui"; return 1; }
	done &&
	_argv= &&
	for _s in $1
	do
		_argv="$_argv kill-session -t $_s \;"
	done &&
	eval "tui_tmux $_argv"
}

# alive NAME WHAT: the program in NAME read every key sent and is still up.
alive () {
	tui_settle_ "$1" >/dev/null &&
	if test -f "$1.status"; then
		echo "$2: callprof tui ended with status $(cat "$1.status")"
		cat "$1.stderr"
		tui_screen "$1" "$1.screen" && tui_show "$1.screen"
		return 1
	fi &&
	test "$(cat "$1.keys-read" 2>/dev/null)" = "$(cat "$1.keys-sent")" || {
		echo "$2: callprof tui read $(cat "$1.keys-read" 2>/dev/null) of $(cat "$1.keys-sent") keys"
		return 1
	}
}

test_expect_success 'setup: two profiles with a known tree' '
	build_workload s-tui.c &&
	callprof record -o p.cprof -- ./t-tui 2>record.err &&
	callprof record -o p2.cprof -- ./t-tui 2>record2.err &&
	callprof report --threads=each --min-percent=0 p.cprof >report &&
	grep -q "^== .*helper" report
'

# The tmux server outlives every case's sessions (a new server started
# while the last one exits fails): this session keeps it.
tui_have_tmux && tui_tmux new-session -d -s keeper "exec sleep 3600"

if ! tui_have_tmux; then
	echo "# SKIP (the rest): no tmux here (tools/install-deps --tests installs it)"
	test_done
fi

test_expect_success 'a terminal that goes away ends the browser, in the tree and in a prompt' '
	ln -s p.cprof hangup-$$.cprof &&
	# no leak check at this exit: see quit_all
	TUI_ENV="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" &&
	tui_start_all "hup-1 hup-2" 80 24 hangup-$$.cprof &&
	TUI_ENV= &&
	tui_keys hup-2 / a &&
	tui_settle_ hup-2 &&
	test "$(cat hup-1.keys-read)" = 0 &&
	test "$(cat hup-2.keys-read)" = 2 &&
	test "$(pgrep -f hangup-$$.cprof | wc -l)" = 2 &&
	tui_tmux kill-session -t hup-1 \; kill-session -t hup-2 &&
	i=0 &&
	while pgrep -f hangup-$$.cprof >/dev/null && test $i -lt 200
	do
		sleep 0.05 && i=$((i + 1))
	done &&
	if pgrep -f hangup-$$.cprof; then
		echo "callprof tui still runs after its terminal went away"
		kill $(pgrep -f hangup-$$.cprof)
		false
	fi
'

test_expect_success 'the tree: as opened, collapsed, all expanded, last row' '
	explore open 120 30 p.cprof -- &&
	explore collapsed 120 30 p.cprof -- c &&
	explore expanded 120 30 p.cprof -- g "*" &&
	explore last 120 30 p.cprof -- G
'

test_expect_success 'the flat list, by each sort' '
	explore flat 120 30 p.cprof -- f &&
	explore flat-name 120 30 p.cprof -- f s s s
'

test_expect_success 'callers and callees, with rows and with none' '
	explore callers 120 30 p.cprof -- / $(keys_of checksum) Enter C &&
	explore no-callers 120 30 p.cprof -- g C &&
	explore callees 120 30 p.cprof -- g E &&
	explore no-callees 120 30 p.cprof -- / $(keys_of scan_digits) Enter E
'

test_expect_success 'a search with matches, without, and its prompt open' '
	explore search 120 30 p.cprof -- / $(keys_of rows) Enter &&
	explore no-match 120 30 p.cprof -- / $(keys_of nope) Enter &&
	explore prompt 120 30 p.cprof -- / $(keys_of ch)
'

test_expect_success 'threads, focus and hide: the crash of issue 30 (x, T, Enter)' '
	explore thread 120 30 p.cprof -- T &&
	explore thread-2 120 30 p.cprof -- T T &&
	explore focus 120 30 p.cprof -- / $(keys_of render_frame) Enter x &&
	explore hide 120 30 p.cprof -- g X &&
	explore empty-thread 120 30 p.cprof -- / $(keys_of helper_main) Enter x T &&
	explore empty-thread-2 120 30 p.cprof -- / $(keys_of helper_main) Enter x T T &&
	explore focus-flat 120 30 p.cprof -- / $(keys_of helper_main) Enter x T f
'

test_expect_success 'source lines page, help, another metric' '
	explore page 120 30 p.cprof -- / $(keys_of scan_digits) Enter L &&
	explore help 120 30 p.cprof -- "?" &&
	explore metric 120 30 p.cprof -- m m
'

test_expect_success 'diff mode: tree, flat, callers, focus' '
	explore diff 120 30 p.cprof p2.cprof -- &&
	explore diff-flat 120 30 p.cprof p2.cprof -- f &&
	explore diff-callers 120 30 p.cprof p2.cprof -- g C &&
	explore diff-focus 120 30 p.cprof p2.cprof -- / $(keys_of helper_main) Enter x
'

test_expect_success 'a terminal too small for the rows' '
	explore tiny 12 3 p.cprof --
'

test_done
