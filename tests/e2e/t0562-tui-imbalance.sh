#!/bin/sh
test_description='callprof tui: the imbalance view of a merged profile (--imbalance, key I), as report --imbalance'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

# t0312's eight generated "ranks" (ranks-lib.sh).  The view must list report --imbalance's rows in its order and
# show the selected row's distribution on the line above the status.

trap tui_stop EXIT

. "$TEST_DIRECTORY/ranks-lib.sh"

# paths FILE: the call paths of the rows of a screen (FILE), in order.
screen_paths () {
	tui_body "$1" | sed -n 's/ *$//; s/.*  \(\[unknown\]+0x100\)/\1/p'
}

# distribution NAME: the line above the status line of NAME's screen.
distribution () {
	tail -n 2 "$1.screen" | head -n 1
}

test_expect_success 'setup: eight ranks merged; report --imbalance' '
	for r in 0 1 2 3 4 5 6 7
	do
		rank_profile $r || return 1
	done &&
	callprof merge -q -o all.cprof r0.cprof r1.cprof r2.cprof r3.cprof r4.cprof r5.cprof \
		r6.cprof r7.cprof &&
	callprof report --imbalance --min-percent=0 all.cprof >imb &&
	sed -n "/^ *imbalance /,\$p" imb | sed 1d | sed "s/.*  //" >want.paths &&
	test_line_count = 4 want.paths
'

if ! tui_have_tmux; then
	echo "# SKIP (the rest): no tmux here (tools/install-deps --tests installs it)"
	test_done
fi

test_expect_success '--imbalance: the rows are report --imbalance'"'"'s, the first one'"'"'s distribution below' '
	tui_start ib 160 30 --imbalance all.cprof &&
	tui_wait ib "view: imbalance of self CPU time" &&
	tui_wait ib "over 8 inputs: " &&
	tui_screen ib ib.screen &&
	tui_show ib.screen &&
	sed -n 2p ib.screen | grep -E "^ *imbalance +imb% +mean +max +calls +max-at +call path" &&
	screen_paths ib.screen >got.paths &&
	test_cmp want.paths got.paths &&
	sed -n 3p ib.screen | grep -E "^ +6\.75us +9\.22 +1\.16us +2\.00us +36  input 3 \(r3\.cprof\)  +\[unknown\]\+0x100 > \[unknown\]\+0x200 *$" &&
	distribution ib | grep -E "^over 8 inputs: mean 1\.16us  stddev 320ns  min 1\.00us at input 0 \(r0\.cprof\)  max 2\.00us at input 3 \(r3\.cprof\) *$"
'

test_expect_success 'moving the selection shows that row'"'"'s distribution; Enter goes to its context in the tree' '
	tui_keys ib j &&
	tui_wait ib "max 10ns at input 5 \(r5\.cprof\)" &&
	tui_screen ib ib.screen &&
	distribution ib | grep -E "^over 8 inputs: mean 1ns  stddev 3ns  min 0ns at input 0 \(r0\.cprof\)  max 10ns at input 5 \(r5\.cprof\)" &&
	tui_keys ib Enter &&
	tui_wait ib "view: tree" &&
	tui_keys ib C &&
	tui_wait ib "view: callers of [[]unknown[]]\+0x400 " &&
	tui_keys ib I &&
	tui_wait ib "view: imbalance" &&
	tui_keys ib q &&
	tui_wait_exit ib &&
	test "$(cat ib.status)" = 0 &&
	test_must_be_empty ib.stderr
'

test_expect_success 'key I from the tree; the metric switch keeps the ranking' '
	tui_start ik 160 30 all.cprof &&
	tui_wait ik "view: tree" &&
	tui_keys ik I &&
	tui_wait ik "view: imbalance of self CPU time" &&
	tui_keys ik m &&
	tui_wait ik "metric: " &&
	tui_screen ik ik.screen &&
	screen_paths ik.screen >got.paths &&
	test_cmp want.paths got.paths &&
	tui_keys ik q &&
	tui_wait_exit ik
'

test_expect_success 'one rank alone: I says why and stays; --imbalance refuses with one line' '
	tui_start one 160 30 r1.cprof &&
	tui_wait one "view: tree" &&
	tui_keys one I &&
	tui_wait one "no imbalance view: the profile is no merge of several runs or ranks" &&
	tui_wait one "view: tree" &&
	tui_keys one q &&
	tui_wait_exit one &&
	tui_start bad 160 30 --imbalance r1.cprof &&
	tui_wait_exit bad &&
	test "$(cat bad.status)" = 1 &&
	echo "callprof: error: --imbalance needs a merged profile of several runs or ranks: '"'"'r1.cprof'"'"' is not one (callprof merge makes one)" >expect &&
	test_cmp expect bad.stderr
'

test_expect_success 'counting profiles: the imbalance of calls' '
	counting_ranks &&
	tui_start cnt 160 30 --imbalance c.cprof &&
	tui_wait cnt "view: imbalance of calls" &&
	tui_wait cnt "over 3 inputs: " &&
	tui_screen cnt cnt.screen &&
	sed -n 3p cnt.screen | grep -E "^ +6 +66\.67 +3\.0 +5 +9  input 2 \(c2\.cprof\)  \[unknown\]\+0x100 *$" &&
	distribution cnt | grep -E "^over 3 inputs: mean 3\.0  stddev 1\.6  min 1 at input 0 \(c0\.cprof\)  max 5 at input 2 \(c2\.cprof\)" &&
	tui_keys cnt q &&
	tui_wait_exit cnt
'

test_done
