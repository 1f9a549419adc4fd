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
# Per-call clock timing (--time=clock) puts burn()'"'"'s time, which has no
# hooks, in its caller'"'"'s self time.
test_expect_success 'spin, --time=clock: self(spin4) / self(spin1) is about 4' '
	build_workload s-spin.c &&
	for attempt in 1 2 3 4 5
	do
		callprof record --time=clock -o spin$attempt.cprof -- ./t-spin &&
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

# subtree_samples PATH <folded -m samples: the samples of PATH and below.
subtree_samples () {
	awk -v want="$1" '
	{
		i = match($0, / [0-9]+$/)
		p = substr($0, 1, i - 1)
		if (p == want || index(p, want ";") == 1)
			sum += substr($0, i + 1)
	}
	END { print sum + 0 }'
}

# The default, sampled CPU time: burn()'"'"'s samples are a "burn" child of
# spin1 and spin4 (no call counted), so the ratio is of the two subtrees'"'"'
# samples.  Four times the default work gives spin1 some 300 samples and
# spin4 some 1200 (a count of k is known to about 100/sqrt(k) %); the work
# comes in 8 pieces, each followed by a call of tick() whose hooks drain the
# sample ring before a stretch without hooks overflows it.  Time the thread
# was preempted is no CPU time: the bounds are tighter than the clock'"'"'s.
test_expect_success 'spin, sampled CPU time: samples(spin4) / samples(spin1) is about 4' '
	case "$CC $OPT" in
	clang*-O0*) iters=16000000 ;;
	*) iters=48000000 ;;
	esac &&
	cat >cspin.expect <<-\EOF &&
	main 1
	main;run 1
	main;run;spin1 1
	main;run;spin1;tick 8
	main;run;spin4 1
	main;run;spin4;tick 8
	EOF
	for attempt in 1 2 3
	do
		callprof record -o cspin$attempt.cprof -- ./t-spin $iters 8 &&
		check_times cspin$attempt.cprof cspin$attempt &&
		test_cmp cspin.expect cspin$attempt.calls &&
		callprof export -f folded -m samples cspin$attempt.cprof >cspin$attempt.samples &&
		grep "^main;run;spin1;burn [1-9]" cspin$attempt.samples &&
		grep "^main;run;spin4;burn [1-9]" cspin$attempt.samples &&
		s1=$(subtree_samples "main;run;spin1" <cspin$attempt.samples) &&
		s4=$(subtree_samples "main;run;spin4" <cspin$attempt.samples) &&
		echo "attempt $attempt: samples spin1 $s1, spin4 $s4" &&
		test "$s1" -ge 150 || return 1
		if ratio_between "$s1" "$s4" 3.2 5
		then
			return 0
		fi
	done &&
	echo "the ratio stayed outside [3.2, 5] in three runs" &&
	false
'

# The same in one piece: each spin runs a tenth of a second or more without
# a hook, so its thread's sample ring fills and drops samples.  Their CPU
# time must still be the spinning call's, taken at its next hook from the
# thread's CPU clock: not the next context's, whichever order they run in.
test_expect_success 'spin, sampled CPU time, rings overflowing: the dropped samples stay in their call' '
	case "$CC $OPT" in
	clang*-O0*) iters=16000000 ;;
	*) iters=48000000 ;;
	esac &&
	for attempt in 1 2 3
	do
		callprof record -o fspin$attempt.cprof -- ./t-spin $iters 2>err &&
		callprof report fspin$attempt.cprof >fspin$attempt.report &&
		grep "^# [0-9]* samples were estimated from a thread.s CPU clock" fspin$attempt.report &&
		callprof export -f folded -m samples fspin$attempt.cprof >fspin$attempt.samples &&
		s1=$(subtree_samples "main;run;spin1" <fspin$attempt.samples) &&
		s4=$(subtree_samples "main;run;spin4" <fspin$attempt.samples) &&
		rest=$(awk "!/^main;run;spin[14]/ { s += \$NF } END { print s + 0 }" fspin$attempt.samples) &&
		echo "attempt $attempt: samples spin1 $s1, spin4 $s4, elsewhere $rest" &&
		test "$s1" -ge 150 &&
		test "$rest" -lt "$((s1 / 10))" || return 1
		if ratio_between "$s1" "$s4" 3.2 5
		then
			return 0
		fi
	done &&
	echo "the ratio stayed outside [3.2, 5] in three runs" &&
	false
'

test_done
