#!/bin/sh
# matrix: cc-opt
test_description='record is transparent: same stdout, stderr and exit status'
. "$(dirname "$0")/lib.sh"

# run_both NAME [ARGS...]: run ./t-exit3 ARGS plainly and under record
# (profile NAME.cprof); both must exit 3.  Leaves NAME.out.plain,
# NAME.err.plain, NAME.out.rec, NAME.err.rec (without the callprof: lines)
# and NAME.summary (the callprof: lines).  A run this short has too few
# CPU-time samples to time, which record says in a second line; check_summary
# NAME checks that the summary is that, and only that.
run_both () {
	_name=$1
	shift
	test_expect_code 3 ./t-exit3 "$@" >"$_name.out.plain" 2>"$_name.err.plain" &&
	test_expect_code 3 callprof record -o "$_name.cprof" -- ./t-exit3 "$@" \
		>"$_name.out.rec" 2>"$_name.err.raw" &&
	sed -n "/^callprof:/p" "$_name.err.raw" >"$_name.summary" &&
	sed "/^callprof:/d" "$_name.err.raw" >"$_name.err.rec"
}

check_summary () {
	grep "^callprof: wrote $1.cprof: 1 thread, [0-9]* calls, [0-9]* call paths, CPU time from [0-9]* samples at 3989 Hz" "$1.summary" &&
	sed 1d "$1.summary" >"$1.rest" &&
	echo "callprof: warning: CPU times rest on only N samples: run longer or raise --sample" >"$1.expect-rest" &&
	sed "s/only [0-9]* samples\{0,1\}:/only N samples:/" "$1.rest" >"$1.rest-n" &&
	test_cmp "$1.expect-rest" "$1.rest-n"
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

test_expect_success 'record prints one summary line on stderr, and the short run warning' '
	check_summary ret
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
	check_summary exit
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
