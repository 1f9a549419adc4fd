#!/bin/sh
# matrix: cc-opt
test_description='runtime edge cases: wide nodes, deep recursion, errno, constructors'
. "$(dirname "$0")/lib.sh"

test_expect_success 'a node with 2000 distinct children keeps exact counts' '
	build_workload s-wide.c &&
	callprof record -o wide.cprof -- ./t-wide >out &&
	callprof export -f folded -m calls wide.cprof >actual &&
	{
		echo "main 1" &&
		awk "BEGIN { for (i = 1000; i < 3000; i++) printf \"main;f%d %d\\n\", i, (i % 3) + 1 }"
	} | LC_ALL=C sort >expect &&
	test_cmp expect actual
'

test_expect_success 'recursion 20000 deep: one context per level, none lost' '
	build_workload s-deep.c &&
	callprof record -o deep.cprof -- ./t-deep 20000 >out 2>err &&
	echo 20000 >expect && test_cmp expect out &&
	grep "^callprof: wrote deep.cprof: 2 threads, 20003 calls, 20003 call paths, CPU time from [0-9]* samples at 3989 Hz" err &&
	callprof report --flat --fields=calls,name --sort=name deep.cprof >flat &&
	grep -E "^ +20001  down$" flat &&
	grep -E "^ +1  run$" flat &&
	callprof report deep.cprof >tree &&
	! grep -q "warning" tree
'

test_expect_success 'errno is preserved across hooks, set-up and new paths' '
	build_workload s-errno.c &&
	callprof record -o errno.cprof -- ./t-errno >out &&
	echo "errno preserved" >expect &&
	test_cmp expect out
'

test_expect_success 'paths start at constructors, main and destructors' '
	build_workload s-ctor.c &&
	callprof record -o ctor.cprof -- ./t-ctor >out &&
	callprof export -f folded -m calls ctor.cprof >actual &&
	cat >expect <<-\EOT &&
	main 1
	main;helper 1
	setup 1
	setup;helper 1
	teardown 1
	teardown;helper 1
	EOT
	test_cmp expect actual
'

test_expect_success 'the same with the runtime linked statically' '
	cc_kind "$CP_BUILD_KIND" $CC $OPT -g -o t-ctor-static "$WORKLOADS/s-ctor.c" \
		$CP_RUNTIME_A -lpthread &&
	CALLPROF_OUT=ctor-static.cprof ./t-ctor-static >out &&
	callprof export -f folded -m calls ctor-static.cprof >actual &&
	test_cmp expect actual
'

test_expect_success 'runtime linked in and preloaded too: the linked one writes' '
	callprof record -o twice.cprof -- ./t-ctor-static >out &&
	callprof export -f folded -m calls twice.cprof >actual &&
	test_cmp expect actual
'

test_expect_success 'a fork child writes PATH.PID; processes with no calls write nothing' '
	build_workload s-fork.c &&
	callprof record -o fork.cprof -- ./t-fork 2>err &&
	ls fork.cprof* >files &&
	test_line_count = 2 files &&
	child=$(grep "^fork.cprof\.[0-9][0-9]*$" files) &&
	grep "^callprof: other processes of the run wrote 1 profile: $child (pid ${child#fork.cprof.} ./t-fork)$" err &&
	callprof export -f folded -m calls fork.cprof >parent &&
	cat >expect-parent <<-\EOT &&
	main 1
	main;work 1
	EOT
	test_cmp expect-parent parent &&
	callprof export -f folded -m calls "$child" >child &&
	cat >expect-child <<-\EOT &&
	main 0
	main;child_only 1
	main;child_only;work 1
	main;work 0
	EOT
	test_cmp expect-child child
'

test_expect_success 'threads still running at exit: consistent profile, every time' '
	build_workload s-live.c &&
	for i in 1 2 3 4 5 6
	do
		callprof record -o live.cprof -- ./t-live >out 2>err &&
		grep "^callprof: wrote live.cprof: 3 threads" err &&
		callprof report --threads=each --flat --fields=calls,name live.cprof >flat &&
		test $(grep -c " spin$" flat) = 2 || return 1
	done &&
	callprof export -f folded -m total --threads=each live.cprof >total &&
	callprof export -f folded -m self --threads=each live.cprof >self &&
	check_time_relations self total
'

test_expect_success 'record --clock=tsc-fast gives the same counts' '
	callprof record --time=clock --clock=tsc-fast -o fast.cprof -- ./t-ctor >out &&
	callprof export -f folded -m calls fast.cprof >actual &&
	test_cmp expect actual &&
	callprof report fast.cprof >report &&
	grep "^# clock: tsc-fast (unordered reads)" report
'

test_expect_success 'CALLPROF_CLOCK=monotonic gives the same counts' '
	CALLPROF_CLOCK=monotonic callprof record --time=clock -o mono.cprof -- ./t-ctor >out &&
	callprof export -f folded -m calls mono.cprof >actual &&
	test_cmp expect actual &&
	callprof report mono.cprof >report &&
	grep "^# clock: monotonic" report
'

# clone() without CLONE_VM makes a process that runs none of the fork
# handlers and inherits the parent's thread states by address (shared
# arena, perf rings it does not have): it must run as without callprof,
# and the parent's profile must be whole.
expect_clone_parent () {
	cat <<-\EOT
	main 1
	main;reap 2
	main;work 40
	EOT
}

test_expect_success 'clone() children run as without callprof; the parent loses nothing' '
	build_workload s-clone.c &&
	./t-clone >plain &&
	expect_clone_parent >expect-clone &&
	for how in "" --no-offcpu --mode=counting
	do
		rm -f clone.cprof* &&
		callprof record $how -o clone.cprof -- ./t-clone >out 2>err &&
		test_cmp plain out &&
		callprof export -f folded -m calls clone.cprof >actual &&
		test_cmp expect-clone actual &&
		callprof report clone.cprof >report &&
		! grep -i "dropped\|lost\|incomplete" report err &&
		ls clone.cprof* >files &&
		test_line_count = 1 files || return 1
	done
'

test_expect_success 'the same with the runtime linked statically and no watcher' '
	build_workload s-clone.c $CP_RUNTIME_A &&
	rm -f clone.cprof* &&
	CALLPROF_OUT=clone.cprof CALLPROF_WATCH=0 ./t-clone >out &&
	test_cmp plain out &&
	callprof export -f folded -m calls clone.cprof >actual &&
	test_cmp expect-clone actual
'

test_done
