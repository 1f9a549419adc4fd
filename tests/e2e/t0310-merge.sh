#!/bin/sh
# matrix: cc-opt
test_description='merge: many profiles into one, with each call path'"'"'s spread across them'
. "$(dirname "$0")/lib.sh"

# s-ranks plays the ranks of a job: rank R calls compute R + 1 times, only
# rank 0 calls root_only.  Counting mode makes every number exact.
SPREAD=calls,calls-min,calls-max,calls-mean,name

test_expect_success 'setup: three ranks, counted and timed' '
	build_workload s-ranks.c &&
	for r in 0 1 2
	do
		callprof record --mode=counting -o c$r.cprof -- ./t-ranks $r 2>/dev/null &&
		callprof record --time=clock -o t$r.cprof -- ./t-ranks $r 2>/dev/null || return 1
	done
'

test_expect_success 'three counted ranks: sums, per-rank minimum, maximum and mean' '
	callprof merge -o c.cprof c0.cprof c1.cprof c2.cprof 2>err &&
	echo "callprof: wrote c.cprof: 3 profiles from 1 host, 20 calls, 6 call paths" >expect &&
	test_cmp expect err &&
	callprof report --fields=$SPREAD --min-percent=0 --sort=name c.cprof >actual &&
	test_cmp "$EXPECT/ranks.merged" actual
'

test_expect_success 'the tree of a merged profile shows the spread by default' '
	callprof report c.cprof >actual &&
	grep "^# 3 profiles merged by callprof merge (1 host)" actual &&
	grep "^ *calls  *calls-min  *calls-max  name$" actual &&
	grep "^ *1  *0  *1      reduce$" actual
'

test_expect_success 'merging a merged profile again is exact (per-machine, then all)' '
	callprof merge -q -o c01.cprof c0.cprof c1.cprof &&
	callprof merge -q -o c012.cprof c01.cprof c2.cprof &&
	callprof report --fields=$SPREAD --min-percent=0 --sort=name c012.cprof >actual &&
	test_cmp "$EXPECT/ranks.merged" actual &&
	callprof export -f json c012.cprof >j &&
	python3 -c "import json,sys; d = json.load(open(\"j\")); assert len(d[\"inputs\"]) == 3, d[\"inputs\"]"
'

test_expect_success 'timed: every path and its self time are the sums report adds up' '
	callprof merge -q -o t.cprof t0.cprof t1.cprof t2.cprof &&
	callprof export -f folded -m calls t.cprof >merged.calls &&
	callprof export -f folded -m calls t0.cprof t1.cprof t2.cprof >sum.calls &&
	test_cmp sum.calls merged.calls &&
	callprof export -f folded -m self t.cprof >merged.self &&
	callprof export -f folded -m self t0.cprof t1.cprof t2.cprof >sum.self &&
	test_cmp sum.self merged.self &&
	callprof report t.cprof >report &&
	grep "^# clock: each input.s own; times were compensated in each input before merging: " report
'

test_expect_success 'timed: min <= mean <= max and min <= max for every context' '
	callprof export -f json -o t.json t.cprof &&
	python3 - t.json <<-\EOT
	import json, sys
	d = json.load(open(sys.argv[1]))
	n = len(d["inputs"])
	assert n == 3
	seen = 0
	for node in d["trees"][0]["nodes"][1:]:
	    s = node["spread"]
	    assert 1 <= s["inputs"] <= n
	    assert s["calls_min"] * n <= node["calls"] <= s["calls_max"] * n, node
	    assert s["total_min_ns"] * n <= node["total_ns"] <= s["total_max_ns"] * n, node
	    assert s["self_min_ns"] <= s["self_max_ns"], node
	    seen += 1
	assert seen == 6, seen
	EOT
'

test_expect_success 'a merged profile reads without its binary: names and lines travel along' '
	callprof report --srcline --fields=calls,site,name --min-percent=0 --sort=name t.cprof >before &&
	mv t-ranks t-ranks.away &&
	callprof report --srcline --fields=calls,site,name --min-percent=0 --sort=name t.cprof >after 2>err &&
	mv t-ranks.away t-ranks &&
	test_cmp before after &&
	test_must_be_empty err &&
	grep "s-ranks.c:[0-9]*  *exchange" after
'

test_expect_success 'two builds of one program (other addresses) merge by name' '
	cp t-ranks t-ranks-a &&
	cc_kind "$CP_BUILD_KIND" $CC $OPT -g -DOTHER_BUILD -fno-inline -o t-ranks-b "$WORKLOADS/s-ranks.c" &&
	callprof record --mode=counting -o a.cprof -- ./t-ranks-a 1 2>/dev/null &&
	callprof record --mode=counting -o b.cprof -- ./t-ranks-b 2 2>/dev/null &&
	callprof merge -q -o ab.cprof a.cprof b.cprof &&
	callprof report --fields=calls,calls-min,calls-max,name --min-percent=0 --sort=name ab.cprof >actual &&
	grep "^ *5  *2  *3    compute$" actual &&
	grep "^ *5  *2  *3      exchange$" actual
'

test_expect_success 'a progress bar on a terminal, none in a pipe' '
	command -v script >/dev/null &&
	script -qec "callprof merge -o tty.cprof c0.cprof c1.cprof c2.cprof" /dev/null >tty.out &&
	grep "merging \[" tty.out &&
	callprof merge -o pipe.cprof c0.cprof c1.cprof c2.cprof 2>pipe.err &&
	! grep "merging" pipe.err
'

test_expect_success 'profiles of other modes do not merge; nothing is written' '
	test_expect_code 1 callprof merge -o bad.cprof c0.cprof t1.cprof 2>err &&
	echo "callprof: error: profile '"'"'t1.cprof'"'"' was recorded in another mode than '"'"'c0.cprof'"'"': they cannot be merged" >expect &&
	test_cmp expect err &&
	test_path_is_missing bad.cprof &&
	! ls bad.cprof.tmp* 2>/dev/null
'

test_expect_success 'a missing input: its error, nothing written' '
	test_expect_code 1 callprof merge -o bad.cprof c0.cprof nothere.cprof 2>err &&
	echo "callprof: error: profile '"'"'nothere.cprof'"'"': cannot open: No such file or directory" >expect &&
	test_cmp expect err &&
	test_path_is_missing bad.cprof
'

test_expect_success 'usage errors' '
	test_expect_code 129 callprof merge c0.cprof 2>err &&
	grep "^callprof: error: give the merged profile.s name with -o OUT (see .callprof merge -h.)$" err &&
	test_expect_code 129 callprof merge -o x.cprof 2>err &&
	grep "^callprof: error: give the profiles to merge (see .callprof merge -h.)$" err &&
	test_path_is_missing x.cprof
'

test_done
