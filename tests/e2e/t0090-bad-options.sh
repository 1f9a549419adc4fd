#!/bin/sh
test_description='usage errors and a missing program'
. "$(dirname "$0")/lib.sh"

test_expect_success 'report --min-percent=abc is a usage error (129), one line' '
	build_workload s-nested.c &&
	callprof record -o p.cprof -- ./t-nested &&
	test_expect_code 129 callprof report --min-percent=abc p.cprof >out 2>err &&
	test_line_count = 1 err
'

test_expect_success 'record of a nonexistent program exits 127, one line' '
	test_expect_code 127 callprof record -o p2.cprof -- ./no-such-program >out 2>err &&
	test_line_count = 1 err &&
	grep -F no-such-program err
'

test_done
