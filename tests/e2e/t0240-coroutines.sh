#!/bin/sh
# matrix: cc-opt
test_description='coroutines (makecontext/swapcontext): one shadow stack per context, the tree intact'
. "$(dirname "$0")/lib.sh"

test_expect_success 'a generator on its own stack: each side stays under its own caller' '
	build_workload s-coro.c &&
	callprof record -o coro.cprof -- ./t-coro >out &&
	echo 9901 >expect.out && test_cmp expect.out out &&
	cat >expect <<-\EOT &&
	gen 1
	gen;produce 100
	gen;produce;leaf 100
	main 1
	main;driver 1
	main;driver;consume 100
	main;driver;consume;leaf 100
	main;driver;done 1
	EOT
	callprof export -f folded -m calls coro.cprof >actual &&
	test_cmp expect actual
'

test_expect_success 'nothing is reconciled or lost, times stay consistent' '
	callprof report coro.cprof >report &&
	! grep -E "abandoned|warning" report &&
	callprof export -f folded -m self coro.cprof >self &&
	callprof export -f folded -m total coro.cprof >total &&
	check_time_relations self total
'

test_expect_success 'counting mode keeps the same tree' '
	callprof record --mode=counting -o coroc.cprof -- ./t-coro >out &&
	callprof export -f folded -m calls coroc.cprof >actual &&
	test_cmp expect actual
'

test_done
