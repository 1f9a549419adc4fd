#!/bin/sh
# matrix: cc-opt
test_description='signal handlers: <signal N> nodes, a 10 kHz timer, the program sees its own handlers'
. "$(dirname "$0")/lib.sh"

test_expect_success 'handlers nest under <signal N> below the interrupted call' '
	build_workload s-signal.c &&
	callprof record -o sync.cprof -- ./t-signal >out 2>err &&
	grep "^callprof: wrote sync.cprof: 1 thread, 302 calls, 8 call paths, CPU time from [0-9]* samples at 3989 Hz" err &&
	cat >expect <<-\EOT &&
	main 1
	main;sigmain 1
	main;sigmain;<signal 10> 100
	main;sigmain;<signal 10>;on_usr1 100
	main;sigmain;<signal 10>;on_usr1;leaf 100
	main;sigmain;<signal 12> 50
	main;sigmain;<signal 12>;on_usr2 50
	main;sigmain;<signal 12>;on_usr2;leaf 50
	EOT
	callprof export -f folded -m calls sync.cprof >actual &&
	test_cmp expect actual
'

test_expect_success 'the tree view shows the signal nodes' '
	callprof report --min-percent=0 sync.cprof >report &&
	grep -q "^ *100 .*  <signal 10>$" report &&
	grep -q "^ *50 .*  <signal 12>$" report
'

test_expect_success 'counting mode records the same signal nodes' '
	callprof record --mode=counting -o syncc.cprof -- ./t-signal >out &&
	callprof export -f folded -m calls syncc.cprof >actual &&
	test_cmp expect actual
'

# sum_calls REGEX <folded: the calls of every path matching REGEX (the
# path is everything before the last space: names may contain spaces).
sum_calls () {
	awk -v re="$1" '{ n = $NF; p = $0; sub(/ [0-9]+$/, "", p); if (p ~ re) s += n }
		END { printf "%.0f\n", s }'
}

# A 10 kHz SIGALRM timer until its handler has run 10,000 times (about a
# second on a quiet machine, as long as it takes on a loaded one) while the
# main thread makes millions of calls: signals land everywhere, inside the
# hooks too.
test_expect_success '10 kHz timer: the run completes and its output is unchanged' '
	callprof record -o timer.cprof -- ./t-signal timer 10000 >out &&
	test "$(sed -n "s/^handled //p" out)" -ge 10000 &&
	test "$(sed -n "s/^work //p" out)" -gt 0 &&
	callprof export -f folded -m calls timer.cprof >folded &&
	callprof report timer.cprof >report
'

test_expect_success '10 kHz timer: every handler run recorded under <signal 14>, none lost' '
	handled=$(sed -n "s/^handled //p" out) &&
	lost=$(sed -n "s/^# warning: \([0-9]*\) signal handler runs were not recorded.*/\1/p" report) &&
	recorded=$(sum_calls ";<signal 14>\$" <folded) &&
	echo "handled $handled, recorded $recorded, lost ${lost:-0}" &&
	test $((recorded + ${lost:-0})) -eq "$handled" &&
	test "$recorded" -gt 0 &&
	# A signal landing inside a hook goes to the side tree, under the
	# context it interrupted; SIGALRM does not nest, so none is lost.
	test -z "$lost" &&
	test "$(sum_calls ";<signal 14>;on_alarm;tick;tock\$" <folded)" -eq "$recorded"
'

test_expect_success '10 kHz timer: the interrupted work is counted exactly' '
	work=$(sed -n "s/^work //p" out) &&
	test "$(sum_calls ";work\$" <folded)" -eq "$work" &&
	test "$(sum_calls ";leafw\$" <folded)" -eq $((2 * work))
'

# Every path is one the program can make: handlers only under <signal 14>,
# the work only under timed, nothing under a leaf but a signal.
test_expect_success '10 kHz timer: the tree is not corrupted' '
	awk "{ sub(/ [0-9]+\$/, \"\"); print }" folded >paths &&
	awk "!/^main(;timed(;(now|work(;leafw)?))?)?(;<signal 14>(;on_alarm(;tick(;tock)?)?)?)?\$/" \
		paths >bad &&
	test_must_be_empty bad
'

test_expect_success '10 kHz timer: times stay consistent' '
	callprof export -f folded -m self timer.cprof >self &&
	callprof export -f folded -m total timer.cprof >total &&
	check_time_relations self total
'

# A 20 kHz timer whose handler siglongjmps out of what it interrupted,
# hooks included, while deep recursion keeps growing the shadow stacks
# and node tables of 60 threads in turn: abandoned at any instruction, a
# hook must leave a state the unwinding and the dump can go on from.
test_expect_success 'siglongjmp out of interrupted hooks: every thread and count intact' '
	build_workload s-sigjump.c &&
	for i in 1 2 3
	do
		callprof record -o jump.cprof -- ./t-sigjump 60 20 >jump.out 2>jump.err &&
		grep "^callprof: wrote jump.cprof: 61 threads," jump.err &&
		test "$(sed -n "s/^attempts //p" jump.out)" -eq 1200 &&
		test "$(sed -n "s/^bailed //p" jump.out)" -eq 1200 &&
		callprof export -f folded -m calls jump.cprof >jump.folded &&
		callprof report jump.cprof >jump.report &&
		handled=$(sed -n "s/^handled //p" jump.out) &&
		lost=$(sed -n "s/^# warning: \([0-9]*\) signal handler runs were not recorded.*/\1/p" jump.report) &&
		recorded=$(sum_calls ";<signal 14>\$" <jump.folded) &&
		echo "handled $handled, recorded $recorded, lost ${lost:-0}" &&
		test $((recorded + ${lost:-0})) -eq "$handled" &&
		test "$(sum_calls "^main;attempt\$" <jump.folded)" -eq 0 &&
		test "$(sum_calls ";attempt\$" <jump.folded)" -eq 1200 &&
		test "$(sum_calls ";<signal 14>;on_alarm;bail\$" <jump.folded)" -eq 1200 &&
		test "$(sum_calls ";<signal 14>;on_alarm;tick\$" <jump.folded)" -eq "$recorded" &&
		test "$(sum_calls ";<signal 14>;on_alarm;inner\$" <jump.folded)" -eq "$recorded" &&
		test "$(sum_calls ";<signal 14>;on_alarm;inner;hop\$" <jump.folded)" -eq "$recorded" &&
		test "$(sum_calls ";<signal 14>;on_alarm;inner;tick\$" <jump.folded)" -eq "$recorded" || return 1
	done
'

test_expect_success 'siglongjmp storm: the tree holds only paths the program makes' '
	awk "{ sub(/ [0-9]+\$/, \"\"); print }" jump.folded >jump.paths &&
	awk "!/^(main(;atoi)?|worker(;attempt(;down[01])*)?(;<signal 14>(;on_alarm(;tick|;bail|;inner(;hop|;tick)?)?)?)?)\$/" \
		jump.paths >bad &&
	test_must_be_empty bad
'

test_done
