#!/bin/sh
# matrix: cc-opt
test_description='report: flat profile, callers and callees of a function'
. "$(dirname "$0")/lib.sh"

# Same normalization as t0030: title line dropped, calls right-aligned.
# --callers/--callees list the function's edges, as gprof does: the
# function, then one line per direct caller ("<- name") or callee
# ("-> name") with the calls along that edge; callees stand under a
# heading per call-site line of the function ("at FILE:LINE").

test_expect_success 'setup: profile s-nested and s-paths' '
	build_workload s-nested.c &&
	build_workload s-paths.c &&
	callprof record -o nested.cprof -- ./t-nested &&
	callprof record -o paths.cprof -- ./t-paths
'

test_expect_success 'flat profile of s-nested: calls per function' '
	callprof report --flat --fields=calls,name --min-percent=0 --sort=name nested.cprof >actual &&
	test_cmp_report "$EXPECT/nested.flat" actual
'

test_expect_success 'flat profile of s-paths sums leaf over its three paths' '
	callprof report --flat --fields=calls,name --min-percent=0 --sort=name paths.cprof >actual &&
	test_cmp_report "$EXPECT/paths.flat" actual
'

test_expect_success 'callers of leaf: calls from each direct caller' '
	callprof report --callers leaf --fields=calls,name --min-percent=0 --sort=name paths.cprof >actual &&
	test_cmp_report "$EXPECT/paths.callers-leaf" actual
'

test_expect_success 'callees of a: calls to each direct callee, by call-site line' '
	callprof report --callees a --fields=calls,name --min-percent=0 --sort=name nested.cprof >actual &&
	test_cmp_report "$EXPECT/nested.callees-a" actual
'

test_done
