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

# spin4 burns four times the CPU time of spin1 (t-spin sizes its work by
# its thread's CPU clock, not by a count of iterations, which runs twice as
# long on one machine as on the next).  Per-call clock timing (--time=clock)
# puts burn()'"'"'s time, which has no hooks, in its caller'"'"'s self time,
# along with the time another process had the CPU: the ratio is of the CPU
# part of the self times (-m cpu: self less the time off the CPU, which the
# context switches measure), which load cannot stretch.  What is left to
# chance (a switch measured late) gets up to five attempts.
test_expect_success 'spin, --time=clock: self(spin4) / self(spin1) is about 4' '
	build_workload s-spin.c &&
	for attempt in 1 2 3 4 5
	do
		callprof record --time=clock -o spin$attempt.cprof -- ./t-spin &&
		check_times spin$attempt.cprof spin$attempt &&
		test_cmp "$EXPECT/spin.calls" spin$attempt.calls &&
		callprof export -f folded -m cpu spin$attempt.cprof >spin$attempt.cpu &&
		s1=$(folded_value "main;run;spin1" <spin$attempt.cpu) &&
		s4=$(folded_value "main;run;spin4" <spin$attempt.cpu) &&
		echo "attempt $attempt: self CPU spin1 $s1, spin4 $s4" || return 1
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
	END { printf "%.0f\n", sum }'
}

# The default, sampled CPU time: burn()'"'"'s samples are a "burn" child of
# spin1 and spin4 (no call counted), so the ratio is of the two subtrees'"'"'
# samples.  spin1 burns 80 ms of CPU time, some 320 samples at the default
# rate (one per 250 us of CPU time), spin4 four times that; the work comes
# in 8 pieces, each followed by a call of tick() whose hooks drain the
# sample ring long before a stretch without hooks (at most 40 ms here)
# could overflow it.  Time the thread was preempted is no CPU time: the
# bounds are tighter than the clock'"'"'s.
test_expect_success 'spin, sampled CPU time: samples(spin4) / samples(spin1) is about 4' '
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
		callprof record -o cspin$attempt.cprof -- ./t-spin 80ms 8 &&
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

# The same in one piece, sampled at 20 kHz: the ring (8 pages, some 800
# samples) then holds some 40 ms of CPU time, and spin1 alone burns 100 ms
# without a hook, so its ring fills and drops samples.  Their CPU time
# must still be the spinning call'"'"'s, taken at its next hook from the
# thread'"'"'s CPU clock: not the next context'"'"'s, whichever order they
# run in.  The overflow is seen in the profile (the report'"'"'s "estimated"
# line), not assumed: a run without it doubles the work and tries again.
test_expect_success 'spin, sampled CPU time, rings overflowing: the dropped samples stay in their call' '
	ms=100 &&
	for attempt in 1 2 3 4
	do
		callprof record --sample=20000 -o fspin$attempt.cprof -- ./t-spin ${ms}ms 2>err &&
		callprof report fspin$attempt.cprof >fspin$attempt.report || return 1
		if ! grep "^# [0-9]* samples were estimated from a thread.s CPU clock" fspin$attempt.report
		then
			echo "attempt $attempt: no ring overflowed in ${ms} ms: twice that"
			ms=$((ms * 2))
			continue
		fi
		callprof export -f folded -m samples fspin$attempt.cprof >fspin$attempt.samples &&
		s1=$(subtree_samples "main;run;spin1" <fspin$attempt.samples) &&
		s4=$(subtree_samples "main;run;spin4" <fspin$attempt.samples) &&
		rest=$(awk "!/^main;run;spin[14]/ { s += \$NF } END { printf \"%.0f\\n\", s }" fspin$attempt.samples) &&
		echo "attempt $attempt: samples spin1 $s1, spin4 $s4, elsewhere $rest" &&
		test "$s1" -ge 150 &&
		test "$rest" -lt "$((s1 / 10))" || return 1
		if ratio_between "$s1" "$s4" 3.2 5
		then
			return 0
		fi
	done &&
	echo "no run in four both overflowed its ring and kept the ratio in [3.2, 5]" &&
	false
'

# The same when the thread's CPU clock cannot be read (a seccomp filter
# fails the call): nothing estimates the dropped samples at the hook that
# finds the ring full, so the gap the next sample shows is all of them.
# It is spin1's, though that sample is taken in run or in spin4.  The
# same holds for the part of the gap the clock misses when it can be
# read (it is the scheduler's, the samples' is perf's task clock): under
# load that was 12% of spin1, and case 7 failed.  spin4's drops, with no
# sample after them and the watcher writing the profile (the filter
# forbids what the dump needs), cannot be placed: spin1 is what is checked.
test_expect_success 'rings overflowing, the thread clock unreadable: the dropped samples stay in their call' '
	callprof record --sample=20000 -o nclock.cprof -- ./t-spin 100ms 1 no-thread-clock 2>err &&
	callprof report nclock.cprof >nclock.report &&
	grep "^# [0-9]* samples were estimated from a thread.s CPU clock" nclock.report &&
	callprof export -f folded -m samples nclock.cprof >nclock.samples &&
	s1=$(subtree_samples "main;run;spin1" <nclock.samples) &&
	rest=$(awk "!/^main;run;spin[14]/ { s += \$NF } END { printf \"%.0f\\n\", s }" nclock.samples) &&
	echo "samples spin1 $s1, elsewhere $rest" &&
	test "$s1" -ge 1000 &&
	test "$rest" -lt "$((s1 / 10))"
'

test_done
