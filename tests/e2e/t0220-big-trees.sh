#!/bin/sh
test_description='a million nested calls and a million distinct call paths: recorded and reported'
. "$(dirname "$0")/lib.sh"

# A sanitized suite runs a tenth of each (scale, lib.sh): 100,000 nested
# calls, 111,110 paths (fan-out 10, depth 5).
DEEP=$(scale 1000000 100000)
DEPTH=$(scale 6 5)
# f0..f9 are each called (10^DEPTH - 1) / 9 times, once per path through
# them; the paths through an f are 10 + 100 + ... + 10^DEPTH.
FCALLS=$(awk -v d=$DEPTH 'BEGIN { printf "%d", (10 ^ d - 1) / 9 }')
PATHS=$(awk -v d=$DEPTH 'BEGIN { printf "%d", (10 ^ (d + 1) - 10) / 9 }')

# s-deep runs its recursion in a thread with a 256 MB stack.
test_expect_success "$DEEP nested calls: recorded exactly" '
	build_workload s-deep.c &&
	callprof record -o deep.cprof -- ./t-deep $DEEP >out &&
	echo $DEEP >expect && test_cmp expect out &&
	callprof report --flat --fields=calls,name deep.cprof >flat &&
	grep -q "^ *$((DEEP + 1))  down$" flat
'

# The tree is printed without recursion, its indentation capped.  Rows of
# sampled code without a call counted ("-": [kernel], a libc function) may
# follow the deepest call: the counted rows are checked.
test_expect_success "$DEEP nested calls: the tree view prints every level" '
	callprof report --min-percent=0 deep.cprof >deeptree &&
	grep -E "^ *[0-9]+  .* down$" deeptree >downs &&
	tail -n 1 downs | grep -q "\[depth $((DEEP + 2))\] down$" &&
	test $(wc -l <downs) -eq $((DEEP + 1)) &&
	! grep -E "^ *-  .* down$" deeptree &&
	rm deeptree downs
'

test_expect_success "$PATHS distinct call paths: every one counted once" '
	build_workload s-manypaths.c &&
	callprof record -o paths.cprof -- ./t-manypaths $DEPTH >out 2>err &&
	callprof report --flat --fields=calls,name paths.cprof >flat &&
	for k in 0 1 2 3 4 5 6 7 8 9
	do
		grep -q "^ *$FCALLS  f$k$" flat || return 1
	done &&
	callprof export -f folded -m calls paths.cprof >folded &&
	test $(grep -c "f[0-9] 1$" folded) -eq $PATHS
'

test_expect_success "$PATHS distinct call paths: every view of the report works" '
	callprof report --min-percent=0 paths.cprof >tree &&
	test $(grep -c " f[0-9]$" tree) -eq $PATHS &&
	callprof report --callers f3 paths.cprof >callers &&
	callprof report --callees f3 paths.cprof >callees &&
	grep -q "^ *$FCALLS .*  -> fan$" callees
'

# The tree outgrows the arena's first pieces (runtime/arena.c): each new
# piece gets a watcher that sees it, and the last one writes the profile
# of the killed program.
test_expect_success "$PATHS paths, then SIGKILL: the watcher writes every one" '
	test_expect_code 137 command callprof record -o killed.cprof -- ./t-manypaths $DEPTH kill 2>err &&
	grep "^callprof: wrote killed.cprof: 1 thread, $((2 * PATHS + 3)) calls, $((2 * PATHS + 3)) call paths, CPU time from [0-9]* samples at 3989 Hz" err &&
	callprof export -f folded -m calls killed.cprof >folded &&
	test $(grep -c "f[0-9] 1$" folded) -eq $PATHS &&
	grep -x "main;doomed 1" folded &&
	callprof report killed.cprof >report &&
	grep "^# the process was killed" report &&
	grep "^# time: CPU time sampled at 3989 Hz .*: [1-9][0-9]* samples" report
'

test_done
