#!/bin/sh
# matrix: cc-opt
test_description='longjmp and siglongjmp: abandoned frames closed, later calls under their true caller'
. "$(dirname "$0")/lib.sh"

# expect_longjmp: the exact folded counts of s-longjmp.
expect_longjmp () {
	awk 'BEGIN {
		print "main 1"
		print "main;holder 1000"
		p = "main;holder"
		for (i = 0; i <= 20; i++) { p = p ";dive"; print p " 1000" }
		print "main;holder;helper 1000"
		print "main;sholder 100"
		p = "main;sholder"
		for (i = 0; i <= 5; i++) { p = p ";sdive"; print p " 100" }
		print p ";<signal 10> 100"
		print p ";<signal 10>;on_signal 100"
		print "main;sholder;helper 100"
	}' | LC_ALL=C sort
}

test_expect_success 'longjmp from 20 deep: helper lands under holder, counts exact' '
	build_workload s-longjmp.c &&
	callprof record -o lj.cprof -- ./t-longjmp >out &&
	expect_longjmp >expect &&
	callprof export -f folded -m calls lj.cprof >actual &&
	test_cmp expect actual
'

# 21 dive frames x 1000 jumps + (6 sdive + <signal 10> + on_signal) x 100
test_expect_success 'the report says how many frames were closed when abandoned' '
	callprof report lj.cprof >report &&
	grep "^# 21800 frames were abandoned by longjmp or exceptions" report
'

test_expect_success 'times stay consistent across the jumps' '
	callprof export -f folded -m self lj.cprof >self &&
	callprof export -f folded -m total lj.cprof >total &&
	check_time_relations self total
'

# _FORTIFY_SOURCE needs optimisation; at -O0 there is no __longjmp_chk.
if test "$OPT" != -O0
then
	test_expect_success 'a _FORTIFY_SOURCE build (__longjmp_chk) behaves the same' '
		cc_kind "$CP_BUILD_KIND" $CC $OPT -D_FORTIFY_SOURCE=2 -g -o t-longjmp-fortify \
			"$WORKLOADS/s-longjmp.c" &&
		nm -u t-longjmp-fortify | grep -q __longjmp_chk &&
		callprof record -o fortify.cprof -- ./t-longjmp-fortify >out &&
		callprof export -f folded -m calls fortify.cprof >actual &&
		test_cmp expect actual
	'
fi

test_expect_success 'counting mode reconciles the same way' '
	callprof record --mode=counting -o ljc.cprof -- ./t-longjmp >out &&
	callprof export -f folded -m calls ljc.cprof >actual &&
	test_cmp expect actual
'

test_done
