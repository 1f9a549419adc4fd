#!/bin/sh
test_description='callprof tui FILE: the interactive browser, driven in tmux (issue 24)'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

# The acceptance test of `callprof tui` (issue 24, "Acceptance"): the real
# program runs in a real terminal emulator (tmux, on a private server), gets
# keys with send-keys, and every case asserts on the captured screen.  The
# profile is recorded from workloads/s-tui.c, whose tree is known:
#
#   main -> parse_expr -> lex_token -> scan_digits     (the hot path, ~60%)
#                         lex_token -> checksum
#   main -> render_frame -> blit_rows -> checksum
#           render_frame -> fill_rows
#   main -> grüße                                      (a UTF-8 name)
#   helper_main -> compress_block                      (thread "helper")
#
# Each case opens its own session (a failed case leaves no state behind).
# Rows are the screen's lines between the title bar (line 1) and the status
# line (the last): names are looked for there, so that a search prompt or a
# status message naming a function cannot pass for a row.  Nothing waits a
# fixed time: every step polls the screen (at most 10 s).  Nothing is
# skipped while callprof tui is missing: every case fails, saying so.
#
# A demo session's screens are kept in $CALLPROF_BUILD/tui-captures/
# (NN-name.txt), for anyone to look at after `make check`.

trap tui_stop EXIT

CAPTURES=$CALLPROF_BUILD/tui-captures
mkdir -p "$CAPTURES" 2>/dev/null && test -w "$CAPTURES" || CAPTURES=$TRASH_DIRECTORY/tui-captures
mkdir -p "$CAPTURES"

TITLE='callprof tui: p\.cprof'
METRICS='total self cpu wait inactive calls'

# open NAME [COLS ROWS]: callprof tui p.cprof in session NAME (120x40),
# until its title bar, the row of main and the status line are up.
open () {
	tui_start "$1" "${2:-120}" "${3:-40}" p.cprof &&
	tui_wait "$1" "$TITLE" &&
	tui_wait_row "$1" main &&
	wait_status_line "$1"
}

# title NAME: the title bar of NAME's last screen.
title () {
	sed -n 1p "$1.screen"
}

# title_has NAME ERE: the title bar (line 1) matches ERE.
title_has () {
	title "$1" | grep -Eq -e "$2" || {
		echo "title bar of $1 does not match /$2/:"
		tui_show "$1.screen"
		return 1
	}
}

# no_row NAME FN: the last screen of NAME shows no row of FN.
no_row () {
	test "$(tui_rows "$1.screen" "$2")" = 0 || {
		echo "$2 is on the screen of $1 but should not be:"
		tui_show "$1.screen"
		return 1
	}
}

has_row () {
	test "$(tui_rows "$1.screen" "$2")" -gt 0 || {
		echo "$2 is not on the screen of $1:"
		tui_show "$1.screen"
		return 1
	}
}

# mark NAME FN: the expander mark of FN's row on NAME's last screen.
mark () {
	tui_row "$1.screen" "$2" | awk '{ print $3 }'
}

# column NAME FN: where FN's name starts on its row.
column () {
	tui_row "$1.screen" "$2" | awk '{ print $2 }'
}

line () {
	tui_row "$1.screen" "$2" | awk '{ print $1 }'
}

# expect_mark NAME FN MARK
expect_mark () {
	test "$(mark "$1" "$2")" = "$3" || {
		echo "$2: expander mark '$(mark "$1" "$2")', wanted '$3':"
		tui_show "$1.screen"
		return 1
	}
}

# metric NAME: the metric the title bar names.
metric () {
	title "$1" | sed -n 's/.*metric: \([A-Za-z-]*\).*/\1/p'
}

# header_has NAME TEXT: the column header (line 2) holds TEXT.
header_has () {
	sed -n 2p "$1.screen" | grep -qF -e "$2" || {
		echo "the header of $1 does not hold \"$2\":"
		tui_show "$1.screen"
		return 1
	}
}

# percent NAME FN: the percent column of FN's row, a whole number.
percent () {
	tui_body "$1.screen" | awk -v fn="$2" '''
		{ for (i = 1; i <= NF; i++) if ($i == fn) { for (j = 1; j < i; j++)
			if ($j ~ /%$/) { sub(/%$/, "", $j); printf "%d\n", $j; exit } } }'''
}

# capture NAME NN-what: keep NAME's current screen for people to look at.
capture () {
	tui_screen "$1" "$CAPTURES/$2.txt"
}

# order NAME: the known function names in the order of NAME's rows.
order () {
	tui_body "$1.screen" |
	grep -Eo 'main|parse_expr|lex_token|scan_digits|checksum|render_frame|blit_rows|fill_rows|compress_block|helper_main' |
	tr '\n' ' '
}

# retry TRIES CHECK ARGS...: run CHECK until it succeeds, TRIES times at
# most, 50 ms apart; quietly but for the last try, whose output says why.
retry () {
	_r_n=$1 &&
	shift &&
	_r_i=1 &&
	while test $_r_i -lt "$_r_n"
	do
		"$@" >/dev/null && return 0
		sleep 0.05
		_r_i=$((_r_i + 1))
	done &&
	"$@"
}

# count_is NAME FN N: exactly N rows of NAME's screen show FN.
count_is () {
	tui_screen "$1" "$1.screen" &&
	test "$(tui_rows "$1.screen" "$2")" = "$3" || {
		echo "$1: $(tui_rows "$1.screen" "$2") rows show $2, wanted $3:"
		tui_show "$1.screen"
		return 1
	}
}

# wait_count NAME FN N: until exactly N rows show FN (10 s).
wait_count () {
	retry 201 count_is "$@"
}

# title_is_not NAME OLD: NAME's title bar is no longer OLD.
title_is_not () {
	tui_screen "$1" "$1.screen" &&
	test "$(title "$1")" != "$2" || {
		echo "$1: the title bar stays $2"
		return 1
	}
}

# press NAME KEY: send KEY, until the title bar changes (10 s).
press () {
	tui_screen "$1" "$1.screen" &&
	_old=$(title "$1") &&
	tui_keys "$1" "$2" &&
	retry 201 title_is_not "$1" "$_old" &&
	tui_wait "$1" "$TITLE"
}

# order_is_not NAME BEFORE: the order of NAME's rows is not BEFORE.
order_is_not () {
	tui_screen "$1" "$1.screen" &&
	test "$(order "$1")" != "$2"
}

# order_changes NAME BEFORE: true once the order of the rows is not BEFORE,
# false if it stays so for 1 s (a key that need not change it).
order_changes () {
	retry 21 order_is_not "$@"
}

# status_line NAME: the last line of NAME's screen has something.
status_line () {
	tui_screen "$1" "$1.screen" &&
	test -n "$(tail -n 1 "$1.screen" | tr -d " ")" || {
		echo "$1: no status line on the last line:"
		tui_show "$1.screen"
		return 1
	}
}

# wait_status_line NAME: until the last line of the screen has something.
wait_status_line () {
	retry 201 status_line "$1"
}

# wait_fits NAME COLS ROWS: until the screen fits (redrawn after a resize).
wait_fits () {
	retry 201 fits "$@"
}

# fits NAME COLS ROWS: the screen is ROWS lines, none wider than COLS once
# the lines the terminal wrapped are joined again, title bar on line 1.
fits () {
	tui_screen_joined "$1" "$1.joined" &&
	_lines=$(wc -l <"$1.joined") &&
	_width=$(LC_ALL=C.UTF-8 wc -L <"$1.joined") &&
	if test "$_lines" != "$3" || test "$_width" -gt "$2"; then
		echo "$1: $_lines lines (want $3), widest $_width (at most $2):"
		tui_show "$1.joined"
		return 1
	fi &&
	sed -n 1p "$1.joined" | grep -Eq -e "$TITLE" || {
		echo "$1: the title bar is not on line 1:"
		tui_show "$1.joined"
		return 1
	}
}

# The refusal needs no terminal emulator: it runs even without tmux, so
# that the test fails while callprof tui is missing wherever it runs.
test_expect_success 'setup: a profile with a known tree' '
	build_workload s-tui.c &&
	callprof record -o p.cprof -- ./t-tui 2>record.err &&
	callprof report --min-percent=0 p.cprof >report &&
	grep -q "grüße" report &&
	grep -q compress_block report
'

test_expect_success 'refuses with one line when stdout is not a terminal' '
	echo "callprof: error: tui: standard output is not a terminal (use callprof report)" >expect &&
	test_expect_code 1 callprof tui p.cprof >out 2>err </dev/null &&
	test_cmp expect err &&
	test_must_be_empty out
'

if ! tui_have_tmux; then
	echo "# SKIP (the rest): no tmux here (tools/install-deps --tests installs it)"
	test_done
fi

test_expect_success 'open: title bar, status line, the hot path expanded' '
	open o &&
	capture o 01-open &&
	title_has o "$TITLE" &&
	title_has o "view: tree" &&
	title_has o "metric: [a-z-]+" &&
	title_has o "thread: all \(2\)" &&
	test -n "$(tail -n 1 o.screen | tr -d " ")" &&
	expect_mark o main - &&
	expect_mark o parse_expr - &&
	expect_mark o lex_token - &&
	has_row o scan_digits &&
	test "$(line o main)" -lt "$(line o parse_expr)" &&
	test "$(line o parse_expr)" -lt "$(line o lex_token)" &&
	test "$(line o lex_token)" -lt "$(line o scan_digits)" &&
	test "$(column o main)" -lt "$(column o parse_expr)" &&
	test "$(column o parse_expr)" -lt "$(column o lex_token)" &&
	test "$(column o lex_token)" -lt "$(column o scan_digits)" &&
	expect_mark o render_frame + &&
	test "$(column o render_frame)" = "$(column o parse_expr)" &&
	no_row o blit_rows &&
	no_row o fill_rows
'

# render_frame is selected by a search; the moves around it are checked by
# what the next expand or collapse changes: a move that did not happen
# would expand or collapse another row.  checksum is on one row while
# blit_rows is collapsed, on two once it is expanded.
# Every screen the cases look at is captured once the program has read all
# the keys sent (tui-lib.sh): the count it keeps must be the keys, each
# named key (an escape sequence) one, each byte typed one.
test_expect_success 'the keys read are counted for the screen captures' '
	open kc &&
	test "$(cat kc.keys-read)" = 0 &&
	tui_keys kc j k NPage Up && tui_settle_ kc &&
	test "$(cat kc.keys-read)" = 4 &&
	tui_keys kc / && tui_type kc "grüße" && tui_settle_ kc &&
	test "$(cat kc.keys-read)" = 12 &&
	tui_keys kc Enter && tui_wait kc "match 1/1" &&
	test "$(cat kc.keys-read)" = 13 &&
	tui_keys kc q && tui_wait_exit kc &&
	test "$(cat kc.status)" = 0
'

test_expect_success 'expand and collapse: arrows, vi keys, +/-, Enter' '
	open ec &&
	tui_keys ec / && tui_type ec render_frame && tui_keys ec Enter && tui_wait ec "match 1/1" &&
	tui_keys ec Right && tui_wait_row ec blit_rows && has_row ec fill_rows &&
	expect_mark ec render_frame - &&
	expect_mark ec blit_rows + &&
	tui_keys ec Down Right && tui_wait_row ec checksum &&
	wait_count ec checksum 2 &&
	expect_mark ec blit_rows - &&
	tui_keys ec Up Left && tui_wait_no_row ec blit_rows && no_row ec fill_rows &&
	expect_mark ec render_frame + &&
	tui_keys ec + && tui_wait_row ec blit_rows &&
	n=$(tui_rows ec.screen checksum) &&
	tui_keys ec j Enter &&
	wait_count ec checksum $((3 - n)) &&
	has_row ec blit_rows &&
	tui_keys ec k Enter && tui_wait_no_row ec blit_rows &&
	tui_keys ec l && tui_wait_row ec fill_rows &&
	tui_keys ec h && tui_wait_no_row ec fill_rows &&
	tui_keys ec Enter && tui_wait_row ec fill_rows &&
	tui_keys ec - && tui_wait_no_row ec fill_rows &&
	has_row ec scan_digits
'

test_expect_success 'expand all below (*, e) and collapse all (c)' '
	open ea &&
	tui_keys ea c && tui_wait_no_row ea parse_expr &&
	has_row ea main && has_row ea helper_main &&
	expect_mark ea main + &&
	tui_keys ea g "*" && tui_wait_row ea blit_rows &&
	capture ea 02-expanded &&
	has_row ea fill_rows && has_row ea scan_digits && has_row ea "grüße" &&
	test "$(tui_rows ea.screen checksum)" = 2 &&
	no_row ea compress_block &&
	tui_keys ea c && tui_wait_no_row ea blit_rows && no_row ea parse_expr &&
	# helper_main by name: a sample at a thread'"'"'s end can add a top-level row after it
	tui_keys ea / && tui_type ea helper_main && tui_keys ea Enter && tui_wait ea "match 1/1" &&
	tui_keys ea + && tui_wait_row ea compress_block &&
	no_row ea parse_expr &&
	tui_keys ea g e && tui_wait_row ea fill_rows && has_row ea compress_block
'

test_expect_success 'paging in a short terminal: PgDn, PgUp, G, g' '
	open pg 80 10 &&
	tui_keys pg g "*" && tui_wait_row pg lex_token &&
	no_row pg helper_main &&
	tui_keys pg NPage NPage NPage && tui_wait_row pg helper_main &&
	no_row pg main &&
	tui_keys pg PPage PPage PPage && tui_wait_row pg main &&
	no_row pg helper_main &&
	tui_keys pg G && tui_wait_row pg helper_main &&
	tui_keys pg g && tui_wait_row pg main
'

test_expect_success 'search: /, Enter, n, N and the match counter' '
	open se &&
	tui_keys se c && tui_wait_no_row se parse_expr &&
	tui_keys se / && tui_type se rows && tui_keys se Enter &&
	tui_wait se "match 1/2" && tui_wait_row se blit_rows &&
	capture se 04-search &&
	tail -n 1 se.screen | grep -q "match 1/2" &&
	tui_keys se n && tui_wait se "match 2/2" && tui_wait_row se fill_rows &&
	tail -n 1 se.screen | grep -q "match 2/2" &&
	tui_keys se N && tui_wait se "match 1/2" &&
	tui_keys se / && tui_type se no_such_function && tui_keys se Enter &&
	tui_wait_gone se "match 1/2"
'

test_expect_success 'flat view (f, F), sort column (s), back to the tree (t)' '
	open fl &&
	tui_keys fl f && tui_wait fl "view: flat" &&
	capture fl 03-flat &&
	title_has fl "view: flat" &&
	has_row fl scan_digits && has_row fl compress_block && has_row fl fill_rows &&
	test "$(tui_rows fl.screen checksum)" = 1 &&
	before=$(order fl) &&
	changed= &&
	for i in 1 2 3 4 5 6 7 8
	do
		tui_keys fl s &&
		if order_changes fl "$before"; then
			changed=t && break
		fi || exit 1
	done &&
	{ test -n "$changed" || { echo "s never changed the order of the rows: $before"; false; }; } &&
	tui_keys fl t && tui_wait fl "view: tree" && has_row fl parse_expr &&
	# Sorted by inclusive, then by self: the first row and what the
	# percent column is a share of follow the sort (which the list keeps
	# while the tree shows).
	tui_keys fl f && tui_wait fl "view: flat" &&
	for i in 1 2 3 4
	do
		title_has fl "sort: inclusive\)" >/dev/null && break
		tui_keys fl s && tui_wait fl "view: flat" || exit 1
	done &&
	tui_wait fl "view: flat \(sort: inclusive\)" &&
	header_has fl " percent " &&
	test "$(order fl | cut -d" " -f1)" = main &&
	tui_keys fl s && tui_wait fl "view: flat \(sort: self\)" &&
	header_has fl " self % " &&
	test "$(order fl | cut -d" " -f1)" = scan_digits &&
	test "$(percent fl scan_digits)" -ge 30 &&
	test "$(percent fl main)" -le 5 &&
	tui_keys fl F && tui_wait fl "view: flat" &&
	tui_keys fl t && tui_wait fl "view: tree"
'

test_expect_success 'Enter in the flat view jumps to the function in the tree' '
	open fj &&
	tui_keys fj c && tui_wait_no_row fj render_frame &&
	tui_keys fj f && tui_wait fj "view: flat" &&
	tui_keys fj / && tui_type fj fill_rows && tui_keys fj Enter &&
	tui_wait fj "match 1/1" &&
	tui_keys fj Enter && tui_wait fj "view: tree" &&
	tui_wait_row fj fill_rows && has_row fj render_frame
'

test_expect_success 'callers (C), callees (E), Enter jumps to the tree' '
	open cc &&
	tui_keys cc / && tui_type cc checksum && tui_keys cc Enter && tui_wait cc "match 1/" &&
	tui_keys cc C && tui_wait cc "view: callers" &&
	capture cc 06-callers &&
	tui_wait_row cc lex_token && has_row cc blit_rows &&
	no_row cc scan_digits && no_row cc fill_rows &&
	tui_keys cc Enter && tui_wait cc "view: tree" &&
	tui_keys cc / && tui_type cc render_frame && tui_keys cc Enter && tui_wait cc "match 1/1" &&
	tui_keys cc E && tui_wait cc "view: callees" &&
	tui_wait_row cc blit_rows && has_row cc fill_rows &&
	no_row cc scan_digits && no_row cc lex_token &&
	tui_keys cc Enter && tui_wait cc "view: tree" && has_row cc render_frame
'

test_expect_success 'metric switch (m) names the metric in the title bar, and cycles' '
	open me &&
	m0=$(metric me) &&
	case " $METRICS " in *" $m0 "*) ;; *) echo "unknown first metric: $m0"; false ;; esac &&
	tui_keys me m && tui_wait_gone me "metric: $m0( |$)" &&
	m1=$(metric me) &&
	case " $METRICS " in *" $m1 "*) ;; *) echo "unknown metric after m: $m1"; false ;; esac &&
	seen=" $m0 $m1 " &&
	for i in 1 2 3 4 5 6
	do
		test "$(metric me)" = "$m0" && break
		press me m &&
		seen="$seen$(metric me) " || exit 1
	done &&
	test "$(metric me)" = "$m0" &&
	echo "metrics seen: $seen" &&
	for m in $METRICS
	do
		case "$seen" in *" $m "*) ;; *) echo "m never showed metric $m"; exit 1 ;; esac
	done
'

test_expect_success 'thread switch (T): one thread, its own tree, back to all' '
	open th &&
	found= &&
	for i in 1 2 3
	do
		press th T &&
		if title th | grep -q "thread: helper"; then
			found=t && break
		fi || exit 1
	done &&
	{ test -n "$found" || { echo "T never showed thread helper"; tui_show th.screen; false; }; } &&
	tui_wait_row th compress_block &&
	no_row th scan_digits && no_row th parse_expr &&
	for i in 1 2 3
	do
		title th | grep -q "thread: all (2)" && break
		press th T || exit 1
	done &&
	tui_wait th "thread: all \(2\)" && tui_wait_row th parse_expr
'

test_expect_success 'focus (x), hide (X), undo (u)' '
	open fo &&
	tui_keys fo / && tui_type fo render_frame && tui_keys fo Enter && tui_wait fo "match 1/1" &&
	tui_keys fo x && tui_wait_no_row fo parse_expr &&
	has_row fo render_frame && no_row fo scan_digits &&
	tui_keys fo u && tui_wait_row fo parse_expr && has_row fo render_frame &&
	tui_keys fo / && tui_type fo lex_token && tui_keys fo Enter && tui_wait fo "match 1/1" &&
	tui_keys fo X && tui_wait_no_row fo lex_token &&
	has_row fo parse_expr && has_row fo scan_digits &&
	test "$(column fo scan_digits)" -gt "$(column fo parse_expr)" &&
	tui_keys fo u && tui_wait_row fo lex_token
'

test_expect_success 'help screen (?) lists the keys, any key leaves it' '
	open he &&
	tui_keys he "?" && tui_wait_no_row he parse_expr &&
	capture he 05-help &&
	for w in quit search next previous expand collapse flat tree callers callees focus hide undo metric thread
	do
		grep -qi "$w" he.screen || { echo "help does not mention: $w"; tui_show he.screen; exit 1; }
	done &&
	tui_keys he Space && tui_wait_row he parse_expr &&
	title_has he "view: tree"
'

test_expect_success 'source lines (L) of the selected function, and back' '
	open ln &&
	tui_keys ln / s c a n _ d i g i t s Enter &&
	tui_wait ln "match 1/1" &&
	tui_keys ln L &&
	tui_wait ln "^scan_digits: [0-9]* samples" &&
	capture ln 07-lines &&
	tui_keys ln q &&
	tui_wait_row ln parse_expr &&
	title_has ln "view: tree"
'

test_expect_success 'diff mode: two files browse the diff with the same keys' '
	callprof record -o p2.cprof -- ./t-tui 2>record2.err &&
	tui_start df 120 40 p.cprof p2.cprof &&
	tui_wait df "callprof tui: diff p\.cprof -> p2\.cprof" &&
	tui_wait_row df main && tui_wait_row df helper_main &&
	capture df 08-diff &&
	title_has df "view: tree, largest change first" &&
	tui_keys df / r o w s Enter &&
	tui_wait df "match 1/2" &&
	tui_keys df f &&
	tui_wait df "view: flat \(sort: inclusive change\)" &&
	tui_keys df s &&
	tui_wait df "view: flat \(sort: self change\)" &&
	tui_keys df t &&
	tui_wait df "view: tree, largest change first" &&
	tui_keys df q &&
	tui_wait_exit df &&
	test "$(cat df.status)" = 0
'

# One thread, a busy machine or not: CPU time is the metric to start with,
# alone and in diff mode, as report's weight and diff's (issue 30, item
# 18: `tui A B` of two identical runs said -22% everywhere by elapsed
# time).
test_expect_success 'a single thread starts with cpu, alone and in diff mode' '
	build_workload s-hot.c &&
	callprof record -o h1.cprof -- ./t-hot 3000000 2>h1.err &&
	callprof record -o h2.cprof -- ./t-hot 3000000 2>h2.err &&
	tui_start h1 120 40 h1.cprof &&
	tui_wait_row h1 main &&
	title_has h1 "metric: cpu" &&
	tui_keys h1 q && tui_wait_exit h1 &&
	tui_start hd 120 40 h1.cprof h2.cprof &&
	tui_wait hd "callprof tui: diff h1\.cprof -> h2\.cprof" &&
	tui_wait_row hd main &&
	title_has hd "metric: cpu" &&
	tui_keys hd q && tui_wait_exit hd
'

test_expect_success 'UTF-8 function name drawn whole and aligned' '
	open ut &&
	tui_keys ut g "*" && tui_wait_row ut "grüße" &&
	test "$(column ut "grüße")" = "$(column ut parse_expr)" &&
	fits ut 120 40
'

test_expect_success '80x24 and 300x50 draw without wrapping' '
	open small 80 24 &&
	fits small 80 24 &&
	tui_keys small g "*" && tui_wait_row small blit_rows &&
	fits small 80 24 &&
	open wide 300 50 &&
	fits wide 300 50 &&
	tui_keys wide g "*" && tui_wait_row wide blit_rows &&
	fits wide 300 50 &&
	has_row wide "grüße"
'

test_expect_success 'resize redraws at the new size' '
	open rs 120 40 &&
	tui_tmux resize-window -t rs -x 70 -y 20 &&
	wait_fits rs 70 20 &&
	wait_status_line rs && tui_wait_row rs main &&
	tui_tmux resize-window -t rs -x 200 -y 45 &&
	wait_fits rs 200 45 &&
	tui_wait rs "scan_digits" &&
	tui_wait rs "^.{71}" &&
	wait_status_line rs
'

test_expect_success 'q quits: status 0, terminal restored, nothing on stderr' '
	open qq &&
	tui_keys qq q &&
	tui_wait_exit qq &&
	test "$(cat qq.status)" = 0 &&
	test_cmp qq.stty-before qq.stty-after &&
	tui_wait qq "^tui-exited status=0" &&
	! grep -Eq "$TITLE" qq.screen &&
	test_must_be_empty qq.stderr
'

test_expect_success 'Ctrl-C quits with the terminal restored' '
	open ctl &&
	tui_keys ctl C-c &&
	tui_wait_exit ctl &&
	case $(cat ctl.status) in 0|130) ;; *) echo "status $(cat ctl.status)"; false ;; esac &&
	test_cmp ctl.stty-before ctl.stty-after &&
	tui_wait ctl "^tui-exited" &&
	! grep -Eq "$TITLE" ctl.screen
'

test_done
