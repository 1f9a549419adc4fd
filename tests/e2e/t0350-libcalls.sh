#!/bin/sh
# matrix: cc-opt
test_description='record --libcalls: calls into uninstrumented libraries become nodes with exact counts'
. "$(dirname "$0")/lib.sh"

workloads_without_asan "ASan's interceptors stand in for the libc calls counted here (qsort, malloc, write, strlen)"

CHECK="python3 $TEST_DIRECTORY/check-libcalls.py"

case "$CC" in
clang*) CXX=clang++ ;;
*) CXX=g++ ;;
esac

test_expect_success 'setup' '
	build_workload s-libcalls.c &&
	build_workload_lib s-libcalls-lib.c libslc.so &&
	cc_kind "$CP_BUILD_KIND" $CC $OPT $CP_TEST_CFLAGS -g -Wall -DWITH_LIB -o t-libcalls-lib \
		"$WORKLOADS/s-libcalls.c" -L. -lslc "-Wl,-rpath,\$ORIGIN" &&
	cc_kind "$CP_BUILD_KIND" $CC $OPT $CP_TEST_CFLAGS -g -Wall -Wl,-z,relro,-z,now -o t-libcalls-now \
		"$WORKLOADS/s-libcalls.c"
'

test_expect_success 'output and exit status are the same with and without --libcalls' '
	./t-libcalls >alone.out 2>alone.err &&
	callprof record --libcalls -o p.cprof -- ./t-libcalls >lc.out 2>lc.err &&
	test_cmp alone.out lc.out &&
	grep "^cmp " alone.err >alone.cmp &&
	grep "^cmp " lc.err >lc.cmp &&
	test_cmp alone.cmp lc.cmp &&
	echo "sorted 1 errno-ok 1 jumps 5" >expect &&
	test_cmp expect lc.out
'

# The program counts its comparator calls itself: the node under qsort
# must say the same.
test_expect_success 'qsort sits between run_sort and the comparator, with exact counts' '
	callprof export -f json p.cprof >p.json &&
	ncmp=$(sed -n "s/^cmp //p" lc.err) &&
	test "$ncmp" -gt 1000 &&
	$CHECK path p.json "main;run_sort;qsort" 1 libc.so &&
	$CHECK path p.json "main;run_sort;qsort;cmp" "$ncmp" t-libcalls
'

# The default, sampled CPU time, has no min and max per call; the clock
# (--time=clock) times every library call, min and max included.
test_expect_success 'write, malloc, free and strlen are counted exactly under their callers' '
	$CHECK path p.json "main;writer;write" 7 libc.so &&
	$CHECK path p.json "main;allocs;malloc" 11 libc.so &&
	$CHECK path p.json "main;allocs;free" 11 libc.so &&
	$CHECK path p.json "main;lengths;strlen" 13 libc.so &&
	$CHECK path p.json "main;failing;open" 1 libc.so &&
	$CHECK times p.json libc.so >times &&
	grep "(sampled CPU time)$" times &&
	callprof record --time=clock --libcalls -o pc.cprof -- ./t-libcalls >pc.out 2>/dev/null &&
	test_cmp alone.out pc.out &&
	callprof export -f json pc.cprof >pc.json &&
	$CHECK path pc.json "main;writer;write" 7 libc.so &&
	$CHECK path pc.json "main;allocs;malloc" 11 libc.so &&
	$CHECK path pc.json "main;allocs;free" 11 libc.so &&
	$CHECK path pc.json "main;lengths;strlen" 13 libc.so &&
	$CHECK path pc.json "main;failing;open" 1 libc.so &&
	$CHECK times pc.json libc.so >times &&
	grep "(clock)$" times
'

test_expect_success 'a library call left by longjmp from its callback is closed there' '
	$CHECK path p.json "main;jumper;qsort" 5 libc.so &&
	$CHECK path p.json "main;jumper;qsort;jcmp" 5 t-libcalls &&
	callprof report p.cprof >report &&
	grep "10 frames were abandoned by longjmp" report
'

test_expect_success 'without --libcalls no library function appears' '
	callprof record -o plain.cprof -- ./t-libcalls >plain.out 2>/dev/null &&
	test_cmp alone.out plain.out &&
	callprof export -f json plain.cprof >plain.json &&
	$CHECK nomodule plain.json libc.so &&
	ncmp=$(sed -n "s/^cmp //p" lc.err) &&
	$CHECK path plain.json "main;run_sort;cmp" "$ncmp" t-libcalls
'


test_expect_success 'the counting mode records the same counts' '
	callprof record --libcalls --mode=counting -o c.cprof -- ./t-libcalls >c.out 2>/dev/null &&
	test_cmp alone.out c.out &&
	callprof export -f json c.cprof >c.json &&
	$CHECK path c.json "main;writer;write" 7 libc.so &&
	$CHECK path c.json "main;allocs;malloc" 11 libc.so
'

test_expect_success 'a full-RELRO program (-z now) has its read-only GOT redirected too' '
	callprof record --libcalls -o now.cprof -- ./t-libcalls-now >now.out 2>/dev/null &&
	test_cmp alone.out now.out &&
	callprof export -f json now.cprof >now.json &&
	$CHECK path now.json "main;writer;write" 7 libc.so &&
	$CHECK path now.json "main;lengths;strlen" 13 libc.so
'

test_expect_success 'an instrumented shared library gets its library calls too' '
	callprof record --libcalls -o lib.cprof -- ./t-libcalls-lib >lib.out 2>/dev/null &&
	callprof export -f json lib.cprof >lib.json &&
	$CHECK path lib.json "main;lc_lib_len" 1 libslc.so &&
	$CHECK path lib.json "main;lc_lib_len;strlen" 3 libc.so &&
	$CHECK path lib.json "main;lengths;strlen" 13 libc.so
'

test_expect_success 'CALLPROF_LIBCALLS=1 without LD_BIND_NOW: lazy slots are left alone' '
	CALLPROF_LIBCALLS=1 LD_PRELOAD="$CALLPROF_BUILD/libcallprof.so" CALLPROF_OUT=lazy.cprof \
		./t-libcalls >lazy.out 2>/dev/null &&
	test_cmp alone.out lazy.out
'

test_expect_success 'C++: an exception thrown from libstdc++ (not redirected) is caught as before' '
	cc_kind "$CP_BUILD_KIND" $CXX $OPT -g -o t-throw "$WORKLOADS/s-throw.cc" &&
	callprof record -o throw.cprof -- ./t-throw >throw.out &&
	callprof record --libcalls -o throwlc.cprof -- ./t-throw >throwlc.out &&
	test_cmp throw.out throwlc.out &&
	callprof export -f folded -m calls throw.cprof | grep -e thrower -e handler >expect &&
	callprof export -f folded -m calls throwlc.cprof | grep -e thrower -e handler >actual &&
	test_cmp expect actual &&
	grep "^main;catcher();handler(int) 1000$" actual
'

test_expect_success 'C++: an exception thrown through a redirected libc frame (qsort) is caught' '
	cc_kind "$CP_BUILD_KIND" $CXX $OPT -g -o t-libcalls-throw "$WORKLOADS/s-libcalls-throw.cc" &&
	./t-libcalls-throw >alone-throw.out &&
	callprof record --libcalls -o lthrow.cprof -- ./t-libcalls-throw >lthrow.out &&
	test_cmp alone-throw.out lthrow.out &&
	callprof export -f json lthrow.cprof >lthrow.json &&
	$CHECK path lthrow.json "main;sorter();qsort" 3 libc.so &&
	$CHECK path lthrow.json "main;sorter();qsort;cmp(void const*, void const*)" 15 &&
	$CHECK path lthrow.json "main;lengths();strlen" 4 libc.so
'

test_done
