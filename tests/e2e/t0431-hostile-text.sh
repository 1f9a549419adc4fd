#!/bin/sh
test_description='names from a hostile binary: every text view shows them escaped, one line each (issue 30)'
. "$(dirname "$0")/lib.sh"

# Issue 30 item 13: symbol names come from the profiled binary, which may
# be hostile.  report and diff printed OSC 0 (window title), OSC 52
# (clipboard write), ESC[2J and C1 bytes as they were, a newline in a name
# forged report lines, and the "# command:" line printed argv raw.  The
# rule: every text view escapes what it did not write, in one visible form
# (util/text.h): valid UTF-8 kept; \n, \r, \t, \xNN for the other controls
# and for bytes that are not UTF-8, \uXXXX for C1, the line separators and
# the bidirectional controls, \\ for a backslash.
#
# t-hostile's functions carry twelve such names (lib.sh, build_hostile);
# it runs with an argument and a thread name holding escapes too.  Every
# output below must be inert (check-inert.py: UTF-8, no control character
# but the newline, nothing a terminal acts on), hold each name in its
# visible form, and forge no line.

inert () {
	python3 "$TEST_DIRECTORY/check-inert.py" "$@"
}

# has_all FILE: every name of HOSTILE_VISIBLE is in FILE, on one line.
has_all () {
	printf '%s\n' "$HOSTILE_VISIBLE" | while IFS= read -r name
	do
		grep -qF -e "$name" "$1" || { echo "$1 lacks $name"; return 1; }
	done
}

# no_forged FILE: no line of FILE starts with what a name's newline would
# have begun a line with.
no_forged () {
	! grep -E "^(  999999  forged_row|calls=1 1|0 99999 tab)" "$1"
}

ARG=$(printf 'arg\033]0;ARGV-TITLE\007')
TNAME=$(printf 'th\033[2J\233x')

test_expect_success 'setup: a program whose functions have hostile names, recorded' '
	build_hostile &&
	nm t-hostile | grep -c "PWNED-TITLE" >n && test "$(cat n)" = 1 &&
	OUT=$(printf "h\033]0;OUT\007.cprof") &&
	callprof record -o "$OUT" -- ./t-hostile "$TNAME" "$ARG" >out 2>record.err &&
	inert record.err &&
	grep -qF "wrote h\\x1b]0;OUT\\x07.cprof:" record.err &&
	mv "$OUT" h.cprof &&
	callprof record -o h2.cprof -- ./t-hostile "$TNAME" "$ARG" >out 2>record2.err &&
	inert record2.err
'

test_expect_success 'report: the tree, flat, callers, callees, threads, call sites, plist' '
	callprof report --min-percent=0 h.cprof >tree &&
	callprof report --min-percent=0 --flat h.cprof >flat &&
	callprof report --callees main h.cprof >callees &&
	callprof report --callers "$(printf "\342\200\256rtl-override")" h.cprof >callers &&
	callprof report --threads=each --min-percent=0 h.cprof >each &&
	callprof report --srcline --min-percent=0 h.cprof >srcline &&
	callprof report --plist h.cprof >plist &&
	inert tree flat callees callers each srcline plist &&
	has_all tree && has_all flat && has_all srcline && has_all plist &&
	for f in tree flat callees callers each srcline plist
	do
		no_forged $f || return 1
	done &&
	grep -qF "# command: ./t-hostile '"'"'th\\x1b[2J\\x9bx'"'"' '"'"'arg\\x1b]0;ARGV-TITLE\\x07'"'"'" tree &&
	grep -qF "== th\\x1b[2J\\x9bx (1 thread" each &&
	grep -qF "<- main" callers &&
	# One row per context: twelve hostile functions, main, the thread main.
	callprof report --min-percent=0 --fields=calls,name h.cprof >rows &&
	test "$(grep -c "^ *[0-9][0-9]*  " rows)" = 14 &&
	grep -qF -e "  6    nl\\n  999999  forged_row" rows
'

test_expect_success '--lines of a function named with escapes and bytes that are not UTF-8' '
	callprof report --lines "$(printf "bad\377\376utf8")" h.cprof >lines &&
	inert lines &&
	grep -Eq "^bad\\\\xff\\\\xfeutf8: ([0-9]* samples|no samples)" lines
'

test_expect_success 'diff and its --fail-if message' '
	callprof diff --all h.cprof h2.cprof >diff 2>diff.err &&
	inert diff diff.err && has_all diff && no_forged diff &&
	grep -qF "main > \\x1b]0;PWNED-TITLE\\x07 > \\x1b]52;c;ZXZpbA==\\x07" diff &&
	test_might_fail callprof diff --fail-if "calls>+0%" --fail-if "$(printf "self>+0%%\033")" \
		h.cprof h2.cprof >diff2 2>diff2.err &&
	inert diff2 diff2.err
'

test_expect_success 'merge: its messages and the merged profile report' '
	callprof merge -o m.cprof h.cprof h2.cprof >merge.out 2>merge.err &&
	inert merge.out merge.err &&
	callprof report --min-percent=0 m.cprof >merged &&
	inert merged && has_all merged && no_forged merged
'

test_expect_success 'error messages quote names and paths escaped, on one line' '
	test_expect_code 1 callprof report --callers "$(printf "no\033]0;x\007such")" h.cprof \
		>out 2>err &&
	inert out err &&
	grep -qxF "callprof: error: no function named '"'"'no\\x1b]0;x\\x07such'"'"' in profile '"'"'h.cprof'"'"'" err &&
	test_expect_code 1 callprof report "$(printf "miss\033[2J\nforged.cprof")" >out 2>err &&
	inert err && test_line_count = 1 err &&
	grep -qF "miss\\x1b[2J\\nforged.cprof" err &&
	test_expect_code 129 callprof report --sort "$(printf "x\033]52;c;AA==\007")" h.cprof \
		>out 2>err &&
	inert err && test_line_count = 1 err
'

test_expect_success 'record: a program named with escapes, that ran no instrumented code' '
	cp /bin/true "$(printf "t\033]0;T\007rue")" &&
	test_might_fail callprof record -o e.cprof -- "./$(printf "t\033]0;T\007rue")" \
		>out 2>err &&
	test -s err && inert out err &&
	test_expect_code 127 callprof record -o e.cprof -- "./$(printf "no\033]0;T\007such")" \
		>out 2>err &&
	inert out err && grep -qF "no\x1b]0;T\x07such" err
'

test_expect_success 'the tui shows the names escaped, and the terminal title stays' '
	if ! command -v tmux >/dev/null 2>&1; then
		echo "# no tmux: the tui case is t0520'"'"'s"; exit 0
	fi &&
	. "$TEST_DIRECTORY/tui-lib.sh" &&
	trap tui_stop EXIT &&
	tui_start ht 200 40 h.cprof &&
	tui_wait ht "callprof tui" &&
	tui_keys ht g "*" &&
	tui_wait ht "PWNED-TITLE" &&
	tui_screen ht screen &&
	grep -qF "\\x1b]0;PWNED-TITLE\\x07" screen &&
	grep -qF "nl\\n  999999  forged_row" screen &&
	grep -qF "bad\\xff\\xfeutf8" screen &&
	! grep -q "^  999999  forged_row" screen &&
	title=$(tui_tmux display-message -p -t ht "#{pane_title}") &&
	case "$title" in *PWNED*) echo "the pane title became $title"; false ;; esac &&
	tui_keys ht q && tui_wait_exit ht
'

test_done
