#!/bin/sh
# matrix: cc-opt
test_description='exact call counts per calling context (folded calls)'
. "$(dirname "$0")/lib.sh"

# record_calls NAME [ARGS...]: profile ./t-NAME into NAME.cprof and export
# its folded call counts into NAME.actual.
record_calls () {
	_name=$1
	shift
	callprof record -o "$_name.cprof" -- "./t-$_name" "$@" &&
	callprof export -f folded -m calls "$_name.cprof" >"$_name.actual"
}

test_expect_success 'nested calls: a -> b (x2) -> c (x3 each), d' '
	build_workload s-nested.c &&
	record_calls nested &&
	test_cmp "$EXPECT/nested.calls" nested.actual
'

test_expect_success 'recursion: fib(20), one context per depth' '
	build_workload s-fib.c &&
	record_calls fib &&
	test_cmp "$EXPECT/fib.calls" fib.actual
'

test_expect_success 'mutual recursion: is_even/is_odd' '
	build_workload s-mutual.c &&
	record_calls mutual &&
	test_cmp "$EXPECT/mutual.calls" mutual.actual
'

test_expect_success 'calls through function pointers' '
	build_workload s-fnptr.c &&
	record_calls fnptr &&
	test_cmp "$EXPECT/fnptr.calls" fnptr.actual
'

test_expect_success 'one function on three call paths' '
	build_workload s-paths.c &&
	record_calls paths &&
	test_cmp "$EXPECT/paths.calls" paths.actual
'

test_expect_success 'instrumented shared library, calls both ways' '
	build_workload_lib s-lib.c libslib.so &&
	build_workload s-lib-main.c -L. -lslib "-Wl,-rpath,\$ORIGIN" &&
	mv t-lib-main t-lib &&
	record_calls lib &&
	test_cmp "$EXPECT/lib.calls" lib.actual
'

test_expect_success 'the counts are the same in every run' '
	record_calls nested &&
	test_cmp "$EXPECT/nested.calls" nested.actual &&
	record_calls fib &&
	test_cmp "$EXPECT/fib.calls" fib.actual
'

test_done
