#!/bin/sh
# matrix: cc-opt
test_description='C++ exceptions: frames unwound by a throw are closed, the catch block lands under its function'
. "$(dirname "$0")/lib.sh"

case "$CC" in
clang*) CXX=clang++ ;;
*) CXX=g++ ;;
esac

# thrower(5) .. thrower(0): six frames unwound per throw.
test_expect_success 'thrown through 5 levels 1000 times: counts exact, handler under catcher' '
	cc_kind "$CP_BUILD_KIND" $CXX $OPT -g -o t-throw "$WORKLOADS/s-throw.cc" &&
	callprof record -o throw.cprof -- ./t-throw >out &&
	awk "BEGIN {
		print \"main 1\"
		print \"main;catcher() 1000\"
		print \"main;catcher();handler(int) 1000\"
		p = \"main;catcher()\"
		for (i = 0; i <= 5; i++) { p = p \";thrower(int)\"; print p \" 1000\" }
		print \"main;outer() 10\"
		print \"main;outer();handler(int) 10\"
		print \"main;outer();middle() 10\"
		p = \"main;outer();middle()\"
		for (i = 0; i <= 2; i++) { p = p \";thrower(int)\"; print p \" 10\" }
	}" | LC_ALL=C sort >expect &&
	callprof export -f folded -m calls throw.cprof >actual &&
	test_cmp expect actual
'

test_expect_success 'times stay consistent across the throws' '
	callprof export -f folded -m self throw.cprof >self &&
	callprof export -f folded -m total throw.cprof >total &&
	check_time_relations self total
'

test_expect_success 'counting mode reconciles the same way' '
	callprof record --mode=counting -o throwc.cprof -- ./t-throw >out &&
	callprof export -f folded -m calls throwc.cprof >actual &&
	test_cmp expect actual
'

test_done
