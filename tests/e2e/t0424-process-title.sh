#!/bin/sh
# matrix: cc-opt
test_description='the profile names the command line the program was started with'
. "$(dirname "$0")/lib.sh"

# A program that writes its process title over argv (as servers do) is
# recorded with its arguments, not its title: the runtime takes the command
# line at start-up.

test_expect_success 'setup' '
	build_workload s-title.c
'

test_expect_success 'the program runs as without callprof' '
	test_expect_code 3 ./t-title one "two words" >plain &&
	test_expect_code 3 callprof record -o p.cprof -- ./t-title one "two words" >rec 2>err &&
	cat err &&
	test_cmp plain rec &&
	grep "^t-title 127.0.0.1:16379$" rec
'

test_expect_success 'its profile names its arguments, not its title' '
	callprof report p.cprof >rep &&
	grep "^# command: ./t-title one '"'"'two words'"'"'\$" rep &&
	! grep "16379" rep
'

test_expect_success 'a fork child made after the retitle: the same command line' '
	test_expect_code 3 callprof record -o f.cprof -- ./t-title one fork >rec 2>err &&
	cat err &&
	ls f.cprof.* >children &&
	test_line_count = 1 children &&
	callprof report "$(cat children)" >rep &&
	grep "^# command: ./t-title one fork$" rep
'

test_done
