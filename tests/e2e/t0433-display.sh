#!/bin/sh
test_description='what matters stays on the screen: long C++ names, the diff table, counts of code without hooks (issue 30)'
. "$(dirname "$0")/lib.sh"

# Issue 30 item 24, its display parts:
# - --lines with a long inlined C++ name pushed the source text to column
#   200, and the tui's L page showed no source at 160 columns;
# - diff's path column started near column 170, the changed function (the
#   path's last) at the far right;
# - the tui showed calls 0 where report shows "-" (code without hooks has
#   no count);
# - the SVG's legend was cut, and long C++ names were cut from the right,
#   hiding the method.
# s-display.cc inlines a method of some 150 characters into crunch, and
# spends time in memset (libc: no hooks).

case "$CC" in clang*) CXX=clang++ ;; *) CXX=g++ ;; esac

# source_col FILE PATTERN: the column (from 1) where PATTERN starts on the
# first line of FILE holding it; 0 if none does.
source_col () {
	awk -v p="$2" '{ i = index($0, p); if (i) { print i; found = 1; exit } } END { if (!found) print 0 }' "$1"
}

test_expect_success 'setup: a long inlined C++ method, and time in code without hooks' '
	cc_kind "$CP_BUILD_KIND" $CXX $OPT $CP_TEST_CFLAGS -g -o t-display "$WORKLOADS/s-display.cc" &&
	callprof record -o d.cprof -- ./t-display 300 >out 2>err &&
	callprof record -o d2.cprof -- ./t-display 150 >out 2>err &&
	callprof record --time=clock -o k.cprof -- ./t-display 100 >out 2>err &&
	callprof record --time=clock -o k2.cprof -- ./t-display 50 >out 2>err
'

test_expect_success '--lines: the source starts before column 100; the inlined method is named whole' '
	callprof report --lines crunch d.cprof >lines &&
	grep -q "(inlined .*add_every_value_of_the_buffer_in_place" lines &&
	awk "/ACCUMULATE|for \\(unsigned k/ { n++ }
		/^ *[0-9]+ +[0-9.]+ +[0-9.]+[mun]?s +s-display/ && length(\$0) > 0 {
			i = index(\$0, \"  for (unsigned\"); j = index(\$0, \"  h = (h\");
			c = i ? i : j; if (c && c > 100) { print \"source at column \" c \": \" \$0; bad = 1 } }
		END { exit bad || !n }" lines
'

test_expect_success 'report and tui: code without hooks has no count, "-" in both' '
	callprof report --flat --min-percent=0 --fields=calls,name d.cprof >flat &&
	grep -q "^ *-  *__memset\\|^ *-  *memset" flat &&
	! grep -q "^ *0  *__memset\\|^ *0  *memset" flat &&
	if ! command -v tmux >/dev/null 2>&1; then
		echo "# no tmux: the tui side is not checked here"; exit 0
	fi &&
	. "$TEST_DIRECTORY/tui-lib.sh" &&
	trap tui_stop EXIT &&
	tui_start fl 160 40 d.cprof &&
	tui_wait fl "callprof tui" &&
	tui_keys fl f &&
	tui_wait fl "view: flat" &&
	tui_wait fl "memset" &&
	tui_screen fl screen &&
	tui_body screen | grep "memset" >rows &&
	test -s rows &&
	awk "\$1 != \"-\" { print \"calls not -: \" \$0; bad = 1 } END { exit bad }" rows &&
	tui_body screen | grep " crunch$" | awk "{ exit \$1 != 300 }" &&
	tui_keys fl q && tui_wait_exit fl
'

test_expect_success 'tui L at 160 columns: the source lines are on the screen' '
	if ! command -v tmux >/dev/null 2>&1; then
		echo "# no tmux"; exit 0
	fi &&
	. "$TEST_DIRECTORY/tui-lib.sh" &&
	trap tui_stop EXIT &&
	tui_start ln 160 40 d.cprof &&
	tui_wait ln "callprof tui" &&
	tui_keys ln / c r u n c h Enter &&
	tui_wait ln "match 1/" &&
	tui_keys ln L &&
	tui_wait ln "^crunch: [0-9]* samples" &&
	tui_wait ln "for \\(unsigned k" &&
	tui_screen ln screen &&
	test "$(source_col screen "for (unsigned k")" -le 100 &&
	tui_keys ln q q && tui_wait_exit ln
'

test_expect_success 'diff: the path starts before column 100, the weight'"'"'s change first' '
	callprof diff d.cprof d2.cprof >cpu.diff &&
	callprof diff k.cprof k2.cprof >clock.diff &&
	for f in cpu.diff clock.diff
	do
		title=$(grep -m1 "  path$" $f) &&
		test ${#title} -le 100 || { echo "$f: path at column ${#title}: $title"; return 1; }
		case "$title" in
		*self-cpu-delta*self-cpu-ratio*|*self-delta*self-ratio*) ;;
		*) echo "$f: the change does not come first: $title"; return 1 ;;
		esac
	done &&
	grep -q " main > crunch$" cpu.diff &&
	grep -q " main > crunch$" clock.diff
'

test_expect_success 'svg: long C++ labels keep their method; the legend lies inside the picture' '
	callprof export -f svg -m cpu -o d.svg d.cprof &&
	xmllint --noout d.svg &&
	if ! test -x /usr/bin/chromium || ! npm_install; then
		echo "# no chromium or node modules"; exit 0
	fi &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-svg.js" --svg d.svg >layout &&
	cat layout &&
	grep -q "^ok - the title and the footer lie inside the picture" layout
'

test_done
