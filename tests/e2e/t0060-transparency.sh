#!/bin/sh
# matrix: cc-opt
test_description='record is transparent: same stdout, stderr and exit status'
. "$(dirname "$0")/lib.sh"

# run_both NAME [ARGS...]: run ./t-exit3 ARGS plainly and under record
# (profile NAME.cprof); both must exit 3.  Leaves NAME.out.plain,
# NAME.err.plain, NAME.out.rec, NAME.err.rec (without the callprof: lines)
# and NAME.summary (the callprof: lines).
run_both () {
	_name=$1
	shift
	test_expect_code 3 ./t-exit3 "$@" >"$_name.out.plain" 2>"$_name.err.plain" &&
	test_expect_code 3 callprof record -o "$_name.cprof" -- ./t-exit3 "$@" \
		>"$_name.out.rec" 2>"$_name.err.raw" &&
	sed -n "/^callprof:/p" "$_name.err.raw" >"$_name.summary" &&
	sed "/^callprof:/d" "$_name.err.raw" >"$_name.err.rec"
}

test_expect_success 'build s-exit3' '
	build_workload s-exit3.c
'

test_expect_success 'return 3 from main: same output and status' '
	run_both ret &&
	test_line_count = 3 ret.out.plain &&
	test_line_count = 1 ret.err.plain &&
	test_cmp ret.out.plain ret.out.rec &&
	test_cmp ret.err.plain ret.err.rec
'

test_expect_success 'record prints one summary line on stderr' '
	test_line_count = 1 ret.summary &&
	grep "^callprof: " ret.summary
'

test_expect_success 'return 3 from main: the profile is complete' '
	callprof export -f folded -m calls ret.cprof >actual &&
	test_cmp "$EXPECT/exit3.calls" actual
'

test_expect_success 'exit(3) two frames down: same output and status' '
	run_both exit exit &&
	test_line_count = 4 exit.out.plain &&
	test_line_count = 1 exit.err.plain &&
	test_cmp exit.out.plain exit.out.rec &&
	test_cmp exit.err.plain exit.err.rec &&
	test_line_count = 1 exit.summary
'

test_expect_success 'exit(3): the functions on the stack at exit are in the profile' '
	callprof export -f folded -m calls exit.cprof >actual &&
	test_cmp "$EXPECT/exit3-exit.calls" actual &&
	export_times exit.cprof exit &&
	check_time_relations exit.self exit.total
'

test_expect_success 'output through a pipe is the same too' '
	./t-exit3 2>/dev/null | cat >pipe.plain &&
	callprof record -o pipe.cprof -- ./t-exit3 2>/dev/null | cat >pipe.rec &&
	test_cmp ret.out.plain pipe.plain &&
	test_cmp pipe.plain pipe.rec
'

test_done
