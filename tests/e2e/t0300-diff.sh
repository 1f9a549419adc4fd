#!/bin/sh
# matrix: cc-opt
test_description='diff: two profiles compared call path by call path; --fail-if'
. "$(dirname "$0")/lib.sh"

# s-change's argument changes its calls (see the workload).  Counting
# profiles have exact counts and no times, so the whole diff is compared;
# it names no pid and no date, and the files are named as given.  Timed
# profiles are only checked where a 6x change dwarfs the noise, and for
# the ratio only a lower bound: preemption on a busy machine inflates the
# short run (with 1 against 3, a loaded `make check` once saw no growth).

# The stderr lines expected of --fail-if, kept out of the single-quoted
# test bodies.
cat >expect.calls-changed <<\EOF
callprof: fail-if 'calls-changed' holds for 6 call paths; worst: main > work > leaf: calls 3 -> 6 (+3)
callprof: fail-if 'paths-changed' holds for 4 call paths; worst: main > fresh: calls 0 -> 1 (new)
callprof: fail-if 'calls>+2' holds for 1 call path; worst: main > work > leaf: calls 3 -> 6 (+3)
callprof: fail-if 'calls<-50%' holds for 2 call paths; worst: main > old: calls 1 -> 0 (gone)
EOF
cat >expect.bad-cond <<\EOF
callprof: error: --fail-if 'self>10%': a comparison is >+N (grew by more than N) or <-N (fell by more than N) (see 'callprof diff -h')
EOF
cat >expect.bad-unit <<\EOF
callprof: error: --fail-if 'total>+5': times take a percentage or a unit: ns, us, ms or s (see 'callprof diff -h')
EOF
cat >expect.missing <<\EOF
callprof: error: profile 'missing.cprof': cannot open: No such file or directory
EOF
cat >expect.untimed-cond <<\EOF
callprof: error: --fail-if 'self>+10%' compares times, but profile 'b.cprof' has none (recorded with --mode=counting)
EOF
cat >expect.limit <<\EOF
calls-delta  status   path
         +3  changed  main > work > leaf
         +1  new      main > fresh
EOF

# The timed pair is what the --fail-if time tests read, so it must show
# the 6x: busy's wall time in the short run once held a 44 ms preemption
# (58 ms against 83 ms, a quiet machine running two scripts at a time).
# Up to five pairs are recorded; the first in which busy's self time grew
# at least 3x is kept, as t0050 does for its ratio.  t1/t6 are clocked per
# call (--time=clock), u1/u6 the default, sampled CPU time: there busy's
# time is its callee burn's, which has no hooks (main > busy > burn, no
# calls), and CPU time does not grow with a preemption.
test_expect_success 'setup: s-change recorded counting with 1 and 2, timed with 1 and 6' '
	build_workload s-change.c &&
	callprof record --mode=counting -o a.cprof -- ./t-change 1 2>err &&
	callprof record --mode=counting -o b.cprof -- ./t-change 2 2>err &&
	callprof record -o u1.cprof -- ./t-change 1 2>err &&
	callprof record -o u6.cprof -- ./t-change 6 2>err &&
	s1=$(callprof export -f folded -m self u1.cprof | folded_value "main;busy;burn") &&
	s6=$(callprof export -f folded -m self u6.cprof | folded_value "main;busy;burn") &&
	echo "sampled: self of burn $s1 -> $s6 ns" &&
	for attempt in 1 2 3 4 5
	do
		callprof record --time=clock -o t1.cprof -- ./t-change 1 2>err &&
		callprof record --time=clock -o t6.cprof -- ./t-change 6 2>err &&
		s1=$(callprof export -f folded -m self t1.cprof | folded_value "main;busy") &&
		s6=$(callprof export -f folded -m self t6.cprof | folded_value "main;busy") &&
		echo "attempt $attempt: self of busy $s1 -> $s6 ns" || return 1
		if ratio_between "$s1" "$s6" 3
		then
			return 0
		fi
	done &&
	echo "busy did not grow 3x in five pairs of runs" &&
	false
'

# record's summary, report's banner and diff's header count calls and
# call paths one way (cp_report_count_thread): five threads that share
# paths, and a profile with an excluded function, once counted apart.
test_expect_success 'record, report and diff count the same threads, calls and call paths' '
	build_workload s-threads.c &&
	build_workload s-select.c &&
	callprof record -o thr.cprof -- ./t-threads >/dev/null 2>thr.err &&
	callprof record -o sel.cprof --exclude noisy -- ./t-select >/dev/null 2>sel.err &&
	for p in thr sel
	do
		sed -n "s/^callprof: wrote $p.cprof: \(.* call paths\).*$/\1/p" $p.err >$p.record &&
		callprof report $p.cprof | sed -n "s/^# pid .*, ran [^,]*, //p" >$p.report &&
		callprof diff $p.cprof $p.cprof | sed -n "s/^# A: .*), //p" >$p.diff &&
		test_line_count = 1 $p.record &&
		grep "call paths$" $p.record &&
		test_cmp $p.record $p.report &&
		test_cmp $p.record $p.diff || exit 1
	done &&
	grep "^5 threads" thr.record
'

test_expect_success 'changed counts, new and gone paths, most changed first' '
	callprof diff a.cprof b.cprof >actual 2>err &&
	test_cmp "$EXPECT/change.diff" actual &&
	test_must_be_empty err
'

test_expect_success '--all also lists the paths that stayed the same' '
	callprof diff --all a.cprof b.cprof >actual &&
	test_cmp "$EXPECT/change.diff-all" actual
'

test_expect_success '--fields drops the header; --limit keeps the first rows' '
	callprof diff --fields=calls-delta,status --limit 2 a.cprof b.cprof >actual &&
	test_cmp expect.limit actual
'

test_expect_success 'a profile against itself: no change, no condition holds, exit 0' '
	callprof diff --fail-if calls-changed --fail-if paths-changed --fail-if "calls>+0%" \
		a.cprof a.cprof >actual 2>err &&
	test_cmp "$EXPECT/change.same" actual &&
	test_must_be_empty err
'

test_expect_success '--fail-if: exit 3, one line per condition that holds, the diff as usual' '
	test_expect_code 3 callprof diff --fail-if calls-changed --fail-if paths-changed \
		--fail-if "calls>+2" --fail-if "calls>+3" --fail-if "calls<-50%" \
		a.cprof b.cprof >actual 2>err &&
	test_cmp "$EXPECT/change.diff" actual &&
	test_cmp expect.calls-changed err
'

# A preemption in main's own code can lift its few microseconds of self
# time over a 1% floor, and then by more than busy's ratio: the worst path
# by percent would be main.  A 20% floor leaves busy alone to compare.
test_expect_success 'timed: self>+10% holds for the path doing 6x the work, total>+5ms too' '
	test_expect_code 3 callprof diff --min-percent=20 --fail-if "self>+10%" \
		--fail-if "total>+5ms" t1.cprof t6.cprof >actual 2>err &&
	cat err &&
	test_line_count = 2 err &&
	grep "^callprof: fail-if '"'"'self>+10%'"'"' holds for [0-9]* call paths*; worst: main > busy: self [0-9.]*[mu]*s -> [0-9.]*m*s (+[0-9.]*m*s, [0-9.]*x)$" err &&
	grep "^callprof: fail-if '"'"'total>+5ms'"'"' holds for [0-9]* call paths*; worst: main" err &&
	ratio=$(sed -n "1s/.*, \([0-9.]*\)x)$/\1/p" err) &&
	awk -v r="$ratio" "BEGIN { exit !(r > 1.5) }" &&
	grep "^# total: .* all threads" actual &&
	grep "^ .*  changed  main > busy$" actual
'

# Sampled: the 6x is in burn, no call path but the code busy ran, where the
# samples fell; each side rests on far more than 10 samples.  The off-CPU
# time of a preemption during burn is busy's (the innermost call), so on a
# loaded machine busy's self time may grow more, and lift the 20% floor
# (of totals holding that time) over burn's change: burn is checked in the
# table with no floor, where its time is its samples alone.
# Its self time is CPU time (self-cpu): a plain "self" holds blocked time
# too, and on a loaded machine main was once blocked 72 ms (page faults
# waiting for a busy disk) against its few microseconds of work.
test_expect_success 'sampled: self-cpu>+10% holds for the sampled code doing 6x the work, total>+5ms too' '
	test_expect_code 3 callprof diff --min-percent=20 --fail-if "self-cpu>+10%" \
		--fail-if "total>+5ms" u1.cprof u6.cprof >actual 2>err &&
	cat err &&
	test_line_count = 2 err &&
	grep "^callprof: fail-if '"'"'self-cpu>+10%'"'"' holds for [0-9]* call paths*; worst: main > busy.*; samples [0-9]* -> [0-9]*)$" err &&
	grep "^callprof: fail-if '"'"'total>+5ms'"'"' holds for [0-9]* call paths*; worst: main" err &&
	callprof diff --min-percent=0 u1.cprof u6.cprof >actual &&
	grep "^# sampled code without hooks (no calls, no call paths): [1-9][0-9]* changed" actual &&
	grep "  changed  main > busy > burn$" actual &&
	# code without hooks has no count: "-", as report shows it
	callprof diff --min-percent=0 --fields=calls-a,calls-b,calls-delta,status u1.cprof u6.cprof \
		>calls &&
	grep "^ *- *- *-  changed  main > busy > burn$" calls &&
	callprof diff --min-percent=0 --fields=self-samples-a,self-samples-b,self-ratio,status,path \
		u1.cprof u6.cprof >burn &&
	awk "/ main > busy > burn\$/ { n++; r = \$3; sub(/x\$/, \"\", r)
		if (\$1 < 10 || \$2 < 3 * \$1 || r < 3 || \$4 != \"changed\") bad = 1 }
		END { exit bad || n != 1 }" burn
'

test_expect_success 'sampled: contexts without calls are no call paths that change' '
	test_expect_code 3 callprof diff --fail-if paths-changed --fail-if calls-changed \
		u1.cprof u6.cprof >actual 2>err &&
	test_expect_code 3 callprof diff --fail-if paths-changed --fail-if calls-changed \
		a.cprof b.cprof >actual 2>expect &&
	sed -n "/paths-changed/p;/calls-changed/s/ 3 -> 6 (+3)$//p" expect >expect.paths &&
	sed -n "/paths-changed/p;/calls-changed/s/ 3 -> 18 (+15)$//p" err >err.paths &&
	test_cmp expect.paths err.paths
'

test_expect_success 'timed: a profile against itself holds no time condition' '
	for p in t1 u1
	do
		callprof diff --fail-if "self>+10%" --fail-if "total>+1ns" --fail-if "self<-10%" \
			--fail-if paths-changed $p.cprof $p.cprof >actual 2>err &&
		test_must_be_empty err &&
		grep "^# call paths: 8, all the same: no change$" actual || return 1
	done &&
	grep "^# sampled code without hooks: [1-9][0-9]* contexts*, all the same$" actual
'

# Sampled code without hooks (u1'"'"'s burn) has no calls to compare: left out.
test_expect_success 'timed against counting: calls compared only, and said so' '
	sed -n "/^   calls-a/,\$p" "$EXPECT/change.diff" >expect &&
	for p in t1 u1
	do
		callprof diff $p.cprof b.cprof >actual &&
		grep "^# B has no times (recorded with --mode=counting): only calls are compared$" actual &&
		sed -n "/^   calls-a/,\$p" actual >table &&
		test_cmp expect table &&
		test_expect_code 1 callprof diff --fail-if "self>+10%" $p.cprof b.cprof >out 2>err &&
		test_cmp expect.untimed-cond err || return 1
	done &&
	callprof diff --all --fail-if paths-changed u1.cprof a.cprof >actual &&
	grep "^# call paths: 8, all the same: no change$" actual
'

test_expect_success 'bad --fail-if: usage error 129 with one line, before loading anything' '
	test_expect_code 129 callprof diff --fail-if "self>10%" missing.cprof b.cprof >out 2>err &&
	test_cmp expect.bad-cond err &&
	test_expect_code 129 callprof diff --fail-if "total>+5" a.cprof b.cprof >out 2>err &&
	test_cmp expect.bad-unit err &&
	for cond in "" calls self "calls>" "calls>+" "calls>+x" "calls>+5ms" "size>+1" \
		"self<-100%" "calls-changed2"
	do
		test_expect_code 129 callprof diff --fail-if "$cond" a.cprof b.cprof 2>err &&
		test_line_count = 1 err || return 1
	done
'

test_expect_success 'a missing profile: exit 1, one line naming it' '
	test_expect_code 1 callprof diff a.cprof missing.cprof >out 2>err &&
	test_cmp expect.missing err &&
	test_must_be_empty out &&
	test_expect_code 129 callprof diff a.cprof 2>err &&
	test_line_count = 1 err
'

test_expect_success 'a coverage profile has no paths to compare: exit 1, one line' '
	callprof record --mode=coverage -o cov.cprof -- ./t-change 1 2>err &&
	test_expect_code 1 callprof diff a.cprof cov.cprof >out 2>err &&
	test_line_count = 1 err &&
	grep "cov.cprof.*coverage" err
'

# Other compiler, other optimisation, other addresses: the names match.
test_expect_success 'two builds (gcc -O0, clang -O2) compare by function name' '
	mkdir -p gcc clang &&
	gcc -O0 -g -finstrument-functions -o gcc/t-change "$WORKLOADS/s-change.c" &&
	clang -O2 -g -finstrument-functions -o clang/t-change "$WORKLOADS/s-change.c" &&
	(cd gcc && callprof record --mode=counting -o a.cprof -- ./t-change 1 2>err) &&
	(cd clang && callprof record --mode=counting -o b.cprof -- ./t-change 2 2>err) &&
	(cd clang && callprof record --mode=counting -o a2.cprof -- ./t-change 1 2>err) &&
	callprof report --flat --addresses --fields=name --sort=name gcc/a.cprof >gcc.names &&
	callprof report --flat --addresses --fields=name --sort=name clang/a2.cprof >clang.names &&
	! test_cmp gcc.names clang.names &&
	cp gcc/a.cprof clang/a.cprof &&
	(cd clang && callprof diff a.cprof b.cprof) >actual &&
	test_cmp "$EXPECT/change.diff" actual &&
	callprof diff --fail-if calls-changed gcc/a.cprof clang/a2.cprof >actual 2>err &&
	test_must_be_empty err &&
	grep "^# call paths: 8, all the same: no change$" actual
'

test_done
