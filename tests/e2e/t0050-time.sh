#!/bin/sh
# matrix: cc-opt
test_description='time: relations between self and total times (never values)'
. "$(dirname "$0")/lib.sh"

# check_times PROFILE NAME [export options]
check_times () {
	_prof=$1
	_name=$2
	shift 2
	export_times "$_prof" "$_name" "$@" &&
	check_time_relations "$_name.self" "$_name.total"
}

test_expect_success 'nested: self <= total, children within parents' '
	build_workload s-nested.c &&
	callprof record -o nested.cprof -- ./t-nested &&
	check_times nested.cprof nested
'

test_expect_success 'deep recursion (fib): the same relations' '
	build_workload s-fib.c &&
	callprof record -o fib.cprof -- ./t-fib &&
	check_times fib.cprof fib
'

test_expect_success 'threads, merged and per thread' '
	build_workload s-threads.c &&
	callprof record -o th.cprof -- ./t-threads &&
	check_times th.cprof th-merged &&
	check_times th.cprof th-each --threads=each
'

test_expect_success 'shared library: the same relations' '
	build_workload_lib s-lib.c libslib.so &&
	build_workload s-lib-main.c -L. -lslib "-Wl,-rpath,\$ORIGIN" &&
	callprof record -o lib.cprof -- ./t-lib-main &&
	check_times lib.cprof lib
'

# spin4 does four times the work of spin1.  The ratio is of wall-clock
# times on a shared 2-core machine, where another process can take the CPU
# for part of a run: up to five attempts, the first inside the bounds passes.
test_expect_success 'spin: self(spin4) / self(spin1) is about 4' '
	build_workload s-spin.c &&
	for attempt in 1 2 3 4 5
	do
		callprof record -o spin$attempt.cprof -- ./t-spin &&
		check_times spin$attempt.cprof spin$attempt &&
		test_cmp "$EXPECT/spin.calls" spin$attempt.calls &&
		s1=$(folded_value "main;run;spin1" <spin$attempt.self) &&
		s4=$(folded_value "main;run;spin4" <spin$attempt.self) &&
		echo "attempt $attempt: self spin1 $s1, spin4 $s4" || return 1
		if ratio_between "$s1" "$s4" 2.5 6
		then
			return 0
		fi
	done &&
	echo "the ratio stayed outside [2.5, 6] in five runs" &&
	false
'

test_done
