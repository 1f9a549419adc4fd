#!/bin/sh
test_description='messages: only the true cause, the right words, no stray files'
. "$(dirname "$0")/lib.sh"

test_expect_success 'a profile write that fails: one line, the true cause, status kept' '
	build_workload s-rmout.c &&
	mkdir gone &&
	callprof record -o gone/p.cprof -- ./t-rmout gone 2>err &&
	cat err &&
	test_line_count = 1 err &&
	grep "cannot write profile .*gone/p.cprof.*No such file or directory" err
'

test_expect_success 'a killed program whose watcher cannot write: one line, from record' '
	build_workload s-kill.c &&
	mkdir gone2 &&
	test_expect_code 137 command callprof record -o gone2/p.cprof -- sh -c "rmdir gone2; exec ./t-kill self" 2>err &&
	cat err &&
	grep "no profile written to .gone2/p.cprof.: the program was killed and its watcher could not write it: No such file or directory" err &&
	! grep "did not load the runtime" err
'

test_expect_success 'dump with a bad process id names dump, not an option' '
	test_expect_code 129 callprof dump abc 2>err &&
	echo "callprof: error: dump wants a process id, not '"'"'abc'"'"' (see '"'"'callprof dump -h'"'"')" >expect &&
	test_cmp expect err
'

test_expect_success 'outside record, a process that ran no instrumented code writes no profile' '
	echo keep >old.cprof &&
	LD_PRELOAD="$CALLPROF_BUILD/libcallprof.so" CALLPROF_OUT=old.cprof /bin/true &&
	echo keep >expect &&
	test_cmp expect old.cprof &&
	LD_PRELOAD="$CALLPROF_BUILD/libcallprof.so" CALLPROF_OUT=new.cprof /bin/true &&
	test_path_is_missing new.cprof
'

test_done
