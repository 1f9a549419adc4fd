#!/bin/sh
# matrix: cc-opt
test_description='sleds: swapcontext coroutines, exec, and vfork then exec from a sledded function'
. "$(dirname "$0")/lib.sh"

test_expect_success 'swapcontext: each context own calls under its own root, nothing unpaired' '
	build_kind -o t-coro sleds s-coro.c &&
	./t-coro >plain.out &&
	callprof record -o coro.cprof -- ./t-coro >rec.out &&
	test_cmp plain.out rec.out &&
	callprof export -f folded -m calls coro.cprof >folded &&
	grep "^gen;produce 100$" folded &&
	grep "^main;driver;consume 100$" folded &&
	callprof export -f json coro.cprof | grep -o "\"unpaired_exits\":[0-9]*" >u &&
	echo "\"unpaired_exits\":0" >want && test_cmp want u
'

test_expect_success 'exec: the image before and the image after each write their calls' '
	build_kind -o t-exec sleds s-exec.c &&
	callprof record -o ex.cprof -- ./t-exec >rec.out &&
	cat ex.cprof ex.cprof.exec1 >/dev/null &&
	{ callprof export -f folded -m calls ex.cprof; callprof export -f folded -m calls ex.cprof.exec1; } >folded &&
	grep "^main;before 1$" folded && grep "^main;after 1$" folded
'

test_expect_success 'vfork and exec from a sledded function: same output, exact counts' '
	build_kind -o t-vfork sleds s-sleds-vfork.c &&
	./t-vfork >plain.out &&
	callprof record -o vf.cprof -- ./t-vfork >rec.out &&
	test_cmp plain.out rec.out &&
	callprof export -f folded -m calls vf.cprof >folded &&
	grep "^main;spawn 5$" folded && grep "^main;leaf 5$" folded
'

test_done
