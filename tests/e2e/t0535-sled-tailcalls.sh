#!/bin/sh
# matrix: cc-opt
test_description='sleds: tail calls between sledded functions, mutual recursion by tail calls, recursion a million deep'
. "$(dirname "$0")/lib.sh"

# A tail call jumps to the next function's sled with the first one's
# return address still in place (already the runtime's stub, under sleds):
# the second entry has no return slot of its own, and both frames end at
# one return.  The tree keeps the source's nesting, as the hooks build has
# it (where the exit hook after the call prevents the jump).
#
# The million-deep recursion runs in a thread with a 1 GB stack
# (s-sled-tail.c), so no ulimit -s is needed; its tree is checked through
# the flat counts (a folded export of it would be 10^12 bytes).  A
# sanitized suite runs it 100,000 deep (scale, lib.sh).
DEEP=$(scale 1000000 100000)

test_expect_success 'setup: the program in each kind' '
	for kind in $SLED_KINDS
	do
		build_kind $kind s-sled-tail.c || return 1
	done
'

# Only the sleds build can have tail calls: -finstrument-functions calls
# the exit hook after each call.
test_expect_success 'sleds build: the tail calls are jumps at -O2, calls at -O0' '
	objdump -d --no-show-raw-insn t-sled-tail.sleds >dis &&
	awk "/^[0-9a-f]+ <[a-z_]+>:/ { f = \$2 } /^\$/ { f = \"\" }
		f ~ /^<(tail_a|tail_b|is_even|is_odd)>:\$/ && /(jmp|call) .*<(tail_b|leaf_c|is_odd|is_even)>/ {
			sub(/:\$/, \"\", f); print f, \$2, \$NF }" dis | LC_ALL=C sort >actual &&
	cat actual &&
	case "$OPT" in
	-O0) op=call ;;
	*) op=jmp ;;
	esac &&
	cat >expect <<-EOT &&
	<is_even> $op <is_odd>
	<is_odd> $op <is_even>
	<tail_a> $op <tail_b>
	<tail_b> $op <leaf_c>
	EOT
	test_cmp expect actual
'

for kind in $SLED_KINDS
do
	test_expect_success "$kind: output, status and counts as alone ($DEEP deep, twice)" '
		run_both_ways t-sled-tail.$kind 50 $DEEP &&
		grep "^deep($DEEP) = $DEEP$" t-sled-tail.$kind.rec.out &&
		grep "^is_even($DEEP) = 1$" t-sled-tail.$kind.rec.out &&
		grep "^count	deep	$((DEEP + 1))$" t-sled-tail.$kind.rec.out &&
		sled_check_counts t-sled-tail.$kind.rec.out t-sled-tail.$kind.cprof
	'

	test_expect_success "$kind: a function reached by a tail call is under the one that made it" '
		run_both_ways t-sled-tail.$kind 50 3 &&
		callprof export -f folded -m calls t-sled-tail.$kind.cprof >folded &&
		grep "^main;chain" folded >actual &&
		printf "%s 50\n" "main;chain" "main;chain;tail_a" "main;chain;tail_a;tail_b" \
			"main;chain;tail_a;tail_b;leaf_c" >expect &&
		test_cmp expect actual &&
		awk "BEGIN {
			p = \"main\"
			for (k = 0; k <= 50; k++) {
				p = p (k % 2 ? \";is_odd\" : \";is_even\")
				print p, 1
			}
		}" >expect &&
		grep "^main;is_" folded >actual &&
		test_cmp expect actual &&
		grep -x "big_stack_thread;deep;deep;deep;deep 1" folded &&
		grep -x "big_stack_thread;is_even;is_odd;is_even;is_odd 1" folded
	'

	# The fast paths (the default mode, and counting) push a tail call's
	# frame and pop a tail chain at its one return themselves; timing
	# (--time=clock) always takes the full paths.  The trees must agree.
	# (A hooks build has no tail calls and no sled paths.)
	test "$kind" = sleds || continue
	test_expect_success "$kind: tail calls through the fast paths give the full paths' tree" '
		for t in cpu none clock
		do
			callprof record --time=$t -o tail-$t.cprof -- ./t-sled-tail.$kind 40 3000 \
				>tail-$t.out 2>tail-$t.err &&
			callprof export -f folded -m calls tail-$t.cprof | LC_ALL=C sort >tail-$t.folded ||
			return 1
		done &&
		test_cmp tail-clock.out tail-cpu.out &&
		test_cmp tail-clock.folded tail-cpu.folded &&
		test_cmp tail-clock.folded tail-none.folded &&
		grep -x "main;chain;tail_a;tail_b;leaf_c 40" tail-cpu.folded
	'
done

test_done
