#!/bin/sh
# matrix: cc-opt
test_description='sleds: swapcontext coroutines yielding from sledded frames, one finished, one left suspended'
. "$(dirname "$0")/lib.sh"

# Each context has its own machine stack, and the runtime its own record of
# the return addresses it replaced there: a switch must not mix them.

test_expect_success 'setup: the program in each kind' '
	for kind in $SLED_KINDS
	do
		build_kind $kind s-sled-coro.c || return 1
	done
'

for kind in $SLED_KINDS
do
	test_expect_success "$kind: output, status and counts as alone" '
		run_both_ways t-sled-coro.$kind 200 &&
		sled_check_counts t-sled-coro.$kind.rec.out t-sled-coro.$kind.cprof
	'

	test_expect_success "$kind: each side stays under its own caller" '
		cat >expect <<-\EOT &&
		gen_a 1
		gen_a;produce 200
		gen_a;produce;nest 200
		gen_a;produce;nest;nest 200
		gen_a;produce;nest;nest;nest 200
		gen_b 1
		gen_b;produce 200
		gen_b;produce;nest 200
		gen_b;produce;nest;nest 200
		gen_b;produce;nest;nest;nest 200
		main 1
		main;driver 1
		main;driver;consume 401
		main;driver;done 1
		EOT
		callprof export -f folded -m calls t-sled-coro.$kind.cprof >folded &&
		without_asan_ctors <folded >actual &&
		test_cmp expect actual
	'
done

test_done
