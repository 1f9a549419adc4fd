#!/bin/sh
# matrix: cc-opt
test_description='report: the call tree with deterministic columns'
. "$(dirname "$0")/lib.sh"

# The expectations hold the column-title line and a calls column of width 5;
# test_cmp_report compares without the title line and independently of the
# width, and checks that the calls column is right-aligned.

test_expect_success 'tree of s-nested, sorted by name' '
	build_workload s-nested.c &&
	callprof record -o nested.cprof -- ./t-nested &&
	callprof report --fields=calls,name --min-percent=0 --sort=name nested.cprof >actual &&
	test_cmp_report "$EXPECT/nested.tree" actual
'

test_expect_success 'tree of s-paths: leaf under each of its callers' '
	build_workload s-paths.c &&
	callprof record -o paths.cprof -- ./t-paths &&
	callprof report --fields=calls,name --min-percent=0 --sort=name paths.cprof >actual &&
	test_cmp_report "$EXPECT/paths.tree" actual
'

test_expect_success 'the report reads ./callprof.out by default' '
	callprof record -- ./t-nested &&
	callprof report --fields=calls,name --min-percent=0 --sort=name >actual &&
	test_cmp_report "$EXPECT/nested.tree" actual
'

test_done
