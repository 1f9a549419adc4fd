#!/bin/sh
# matrix: cc-opt
test_description='sleds: a program built with -fpatchable-function-entry, patched by callprof record: exact counts, same output, through longjmp, signals on sigaltstack, deep recursion, threads, fork and tail calls'
. "$(dirname "$0")/lib.sh"

# sled_counts PROFILE OUTPUT: the profile's calls per function are the
# program's own counters (the "name count" lines of OUTPUT).
sled_counts () {
	callprof report --flat --fields=calls "$1" >flat &&
	grep -v "^result\|^retaddr" "$2" | LC_ALL=C sort >want &&
	awk "NR == FNR { want[\$1] = 1; next } (\$2 in want) { print \$2, \$1 }" want flat |
		LC_ALL=C sort >got &&
	test_cmp want got
}

# record_same CASE: the recorded run prints what the plain one prints and
# exits as it does (3), with a profile.
record_same () {
	{ ./t-sleds-core "$1" >plain.out; echo "exit $?" >>plain.out; } &&
	{ callprof record -o "$1.cprof" -- ./t-sleds-core "$1" >rec.out; echo "exit $?" >>rec.out; } &&
	test_cmp plain.out rec.out &&
	grep -q "^exit 3" rec.out &&
	sed "/^exit/d" rec.out >"$1.out"
}

test_expect_success 'the sleds are patched, all of them' '
	build_kind -o t-sleds-core sleds s-sleds-core.c &&
	{ CALLPROF_SLEDS_VERBOSE=1 callprof record -o v.cprof -- ./t-sleds-core >out 2>err; test $? = 3; } &&
	grep "sleds: (main program): [1-9][0-9]* patched, 0 skipped" err
'

for c in longjmp signal tail threads fork
do
	test_expect_success "$c: output, exit status and counts the program's own" "
		record_same $c &&
		sled_counts $c.cprof $c.out
	"
done

test_expect_success 'deep: recursion 1,000,000 deep on a thread, counts exact' '
	record_same deep &&
	sled_counts deep.cprof deep.out &&
	grep "^deep 1000001$" deep.out
'

test_expect_success 'longjmp: the calls after the jumps nest under main, not under the abandoned frames' '
	callprof export -f folded -m calls longjmp.cprof >folded &&
	grep "^main;leaf 110$" folded &&
	grep "^main;jumper;jumper;jumper;jumper;jumper 20$" folded &&
	! grep "jumper;leaf" folded
'

test_expect_success 'signal: the handler on sigaltstack records its calls under the signal' '
	callprof export -f folded -m calls signal.cprof >folded &&
	grep "^main;<signal 10>;handler;on_signal;leaf 50$" folded
'

test_expect_success 'fork: the child profile counts the child calls' '
	for p in fork.cprof.*; do callprof report --flat --fields=calls "$p"; done >child &&
	grep " in_child$" child
'

# lost: each a count in the profile's json export ("name":N).
lost_count () {
	callprof export -f json "$1" | grep -o "\"$2\":[0-9]*" | cut -d: -f2
}

test_expect_success 'every return seen through its stub: nothing unpaired or lost, only longjmp reconciled' '
	for c in longjmp signal tail threads; do
		test "$(lost_count $c.cprof unpaired_exits)" = 0 &&
		test "$(lost_count $c.cprof events)" = 0 || return 1
	done &&
	for c in signal tail threads; do
		test "$(lost_count $c.cprof reconciled_frames)" = 0 || return 1
	done &&
	test "$(lost_count longjmp.cprof reconciled_frames)" = 300
'

test_expect_success '__builtin_return_address(0) of a recorded call is its stub, not its caller (docs/limitations.md)' '
	{ ./t-sleds-core retaddr >plain.out; test $? = 3; } &&
	grep "^retaddr in main$" plain.out &&
	{ callprof record -o r.cprof -- ./t-sleds-core retaddr >rec.out; test $? = 3; } &&
	grep "^retaddr elsewhere$" rec.out &&
	grep "^peek 1$" rec.out
'

test_expect_success 'unprofiled, the sledded build runs as the plain build' '
	{ ./t-sleds-core threads >a.out; echo "exit $?" >>a.out; } &&
	grep "^worker 4$" a.out && grep "^exit 3$" a.out
'

# The program's stack need not be 16-byte aligned where a sled runs: gcc
# -O2 calls burn from mid without aligning it (mid is "call burn; ret",
# -fipa-stack-alignment: burn needs no alignment).  burn's return drains
# a full sample ring in the full exit path, whose C uses movaps: on the
# program's alignment that was a SIGSEGV in every run.
test_expect_success 'a call the compiler made on an unaligned stack: the full paths align their own' '
	cc_kind sleds $CC $OPT $CP_TEST_CFLAGS -g -fno-optimize-sibling-calls -I"$WORKLOADS" \
		-o t-sled-align "$WORKLOADS/s-sled-align.c" &&
	callprof record -o al.cprof -- ./t-sled-align >al.out 2>al.err &&
	echo done >al.expect &&
	test_cmp al.expect al.out &&
	callprof export -f folded -m calls al.cprof >al.calls &&
	grep -x "main;top;mid;burn 3" al.calls &&
	callprof record --time=clock -o alc.cprof -- ./t-sled-align >al.out 2>al.err &&
	test_cmp al.expect al.out
'

test_done
