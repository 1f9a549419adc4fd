#!/bin/sh
test_description='calls open at attach (format version 7): marked in every view, summed like calls, never in calls'
. "$(dirname "$0")/lib.sh"

# The profiles are crafted (tests/mkprofile) as `callprof attach` writes
# them when it seeds the shadow stacks with the calls already open.  Thread
# main was inside main > a > b when the window began: main and a made no
# call in the window (0 calls, 1 open each); b has two call-site records,
# each with one call of the window and one frame open at attach (2 and 2);
# c ran 6 times, d once.  Thread worker was inside a, which returned and was
# called twice more (2 calls, 1 open).

mkprofile () {
	"$CALLPROF_BUILD/tests/mkprofile" "$@"
}

craft () {
	python3 "$TEST_DIRECTORY/cprof-craft.py" "$@"
}

test_expect_success 'setup: an attached profile, the same without attach, a counting one' '
	build_workload s-nested.c -no-pie &&
	addr () { nm t-nested | awk -v f="$1" "\$3 == f { print \"0x\" \$1 }"; } &&
	main=$(addr main) && a=$(addr a) && b=$(addr b) && c=$(addr c) && d=$(addr d) &&
	test -n "$main" && test -n "$a" && test -n "$b" && test -n "$c" && test -n "$d" &&
	cat >att.txt <<-EOF &&
	meta flags=32 duration=2000000000 pid=4242
	cmd ./t-nested
	module $PWD/t-nested
	thread tid=10 name=main
	node ticks=2000000000
	node parent=0 fn=$main open=1 ticks=2000000000
	node parent=1 fn=$a open=1 ticks=1900000000
	node parent=2 fn=$b site=0x10 calls=1 open=1 ticks=1500000000 min=300000000 max=300000000
	node parent=3 fn=$c calls=6 ticks=600000000 min=100000000 max=100000000
	node parent=2 fn=$b site=0x20 calls=1 open=1 flags=2 ticks=300000000 min=300000000 max=300000000
	node parent=1 fn=$d calls=1 ticks=50000000 min=50000000 max=50000000
	thread tid=11 name=worker
	node ticks=2000000000
	node parent=0 fn=$a calls=2 open=1 ticks=1000000000 min=200000000 max=300000000
	EOF
	mkprofile att.cprof <att.txt &&
	sed -e "s/ open=1//" -e "s/ flags=32//" att.txt >plain.txt &&
	mkprofile plain.cprof <plain.txt &&
	sed -e "s/ open=1//" att.txt >none.txt &&
	mkprofile none.cprof <none.txt &&
	sed -e "s/^meta .*/meta mode=1 clock=0 flags=32 pid=4243/" \
		-e "s/ ticks=[0-9]*//" -e "s/ min=[0-9]*//" -e "s/ max=[0-9]*//" att.txt >count.txt &&
	mkprofile count.cprof <count.txt
'

test_expect_success 'the file: version 7 or later, needs a version 7 reader only with calls open at attach' '
	craft show att.cprof >show &&
	grep "^version $(sed -n "s/^#define CP_VERSION \([0-9][0-9]*\).*/\1/p" "$TOP_DIRECTORY/format/format.h")\$" show &&
	grep "^min_reader 7$" show &&
	grep "^meta_flags 32$" show &&
	grep "^node 3 open 1$" show &&
	test $(grep -c "^node [0-9]* open " show) = 5 &&
	craft show none.cprof >show &&
	grep "^meta_flags 32$" show &&
	! grep "^min_reader 7$" show &&
	! grep "^node " show
'

test_expect_success 'report: the banner says counts are the window'"'"'s, and how many were open' '
	callprof report att.cprof >out &&
	grep "^# attached: counts are the calls made in the window; 5 calls were already open at attach (marked \"open at attach\")$" out &&
	grep "^# pid 4242, .* 2 threads, 11 calls, 6 call paths$" out &&
	callprof report none.cprof >out &&
	grep "^# attached: counts are the calls made in the window$" out &&
	! grep "open at attach" out &&
	callprof report plain.cprof >out &&
	! grep "attach" out
'

test_expect_success 'tree: open contexts marked, calls the window'"'"'s, no per-call figure without a call' '
	callprof report --fields=calls,total,avg,min,max,name att.cprof >out &&
	cat >expect <<-\EOF &&
	       calls       total         avg         min         max  name
	           0      2.000s           -           -           -  main (open at attach)
	           0      1.900s           -           -           -    a (open at attach)
	           2      1.800s    900.00ms    300.00ms    300.00ms      b (2 open at attach)
	           6    600.00ms    100.00ms    100.00ms    100.00ms        c
	           1     50.00ms     50.00ms     50.00ms     50.00ms    d
	           2      1.000s    500.00ms    200.00ms    300.00ms  a (open at attach)
	EOF
	test_cmp expect out &&
	callprof report --threads=each --fields=calls,avg,name att.cprof >out &&
	grep "^           2    500.00ms  a (open at attach)$" out &&
	grep "^           2    900.00ms      b (2 open at attach)$" out &&
	! grep -iw "inf\|nan" out &&
	callprof report --fields=calls,name plain.cprof >out &&
	grep "^           0  main$" out &&
	! grep "attach" out
'

test_expect_success 'flat, callers, callees: function rows marked, callers leave it to the function' '
	callprof report --flat --fields=calls,total,avg,name att.cprof >out &&
	cat >expect <<-\EOF &&
	       calls       total         avg  name
	           2      1.800s    900.00ms  b (2 open at attach)
	           2      2.900s      1.450s  a (2 open at attach)
	           6    600.00ms    100.00ms  c
	           1     50.00ms     50.00ms  d
	           0      2.000s           -  main (open at attach)
	EOF
	test_cmp expect out &&
	callprof report --callees main --fields=calls,avg,name att.cprof >out &&
	grep "^           0           -  main (open at attach)$" out &&
	grep "^           0           -    -> a (open at attach)$" out &&
	grep "^           1     50.00ms    -> d$" out &&
	callprof report --callers b --fields=calls,name att.cprof >out &&
	grep "^           2  b (2 open at attach)$" out &&
	grep "^           2    <- a$" out
'

test_expect_success 'counting profile: a function with no call in the window still shows, marked' '
	callprof report --flat count.cprof >out &&
	grep "^# attached: counts are the calls made in the window; 5 calls" out &&
	grep "^ *0  main (open at attach)$" out &&
	grep "^ *2  b (2 open at attach)$" out &&
	callprof report --callers main count.cprof >out &&
	grep "^ *0  main (open at attach)$" out
'

test_expect_success 'json: open_at_attach where not 0, attached in the process' '
	callprof export -f json -o att.json att.cprof &&
	python3 - att.json <<-\EOF &&
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["processes"][0]["attached"] is True, d["processes"][0]
	names = d["functions"]
	got = []
	for t in d["trees"]:
	    for n in t["nodes"]:
	        if n["function"] is None:
	            assert "open_at_attach" not in n
	            continue
	        got.append((names[n["function"]]["name"], n["calls"], n.get("open_at_attach")))
	assert sorted(got) == sorted([("main", 0, 1), ("a", 0, 1), ("b", 2, 2), ("c", 6, None),
	                              ("d", 1, None), ("a", 2, 1)]), got
	EOF
	callprof export -f json -o plain.json plain.cprof &&
	! grep -q open_at_attach plain.json &&
	grep -q "\"attached\": *false" plain.json
'

test_expect_success 'other exports: calls as counted, no division by a call count of 0' '
	for f in folded pprof callgrind speedscope plist svg html
	do
		callprof export -f $f -o att.$f att.cprof || return 1
	done &&
	grep -q "^main;a;b;c 600000000$" att.folded &&
	grep -q "\"open\":\[" att.html &&
	! grep -qiw "nan\|inf\|infinity" att.folded att.speedscope att.callgrind att.svg
'

test_expect_success 'merge and load of several: open at attach summed like calls' '
	callprof merge -o m.cprof att.cprof att.cprof 2>err &&
	craft show m.cprof >show &&
	grep "^min_reader 7$" show &&
	callprof report --fields=calls,name m.cprof >out &&
	grep "^           0  main (2 open at attach)$" out &&
	grep "^           4      b (4 open at attach)$" out &&
	grep "^           4  a (2 open at attach)$" out &&
	callprof report m.cprof >out &&
	grep "^# attached: counts are the calls made in the window; 10 calls were already open at attach" out &&
	callprof report --fields=calls,name att.cprof plain.cprof >out &&
	grep "^           0  main (open at attach)$" out &&
	grep "^           4      b (2 open at attach)$" out &&
	callprof merge -o p.cprof plain.cprof plain.cprof 2>err &&
	craft show p.cprof >show &&
	! grep "^min_reader 7$" show
'

test_expect_success 'diff: open at attach per side after the path' '
	callprof diff att.cprof m.cprof >out &&
	grep "^# A: attached: counts are the calls made in the window; 5 calls were already open at attach$" out &&
	grep "  main > a > b (open at attach: A 2, B 4)$" out &&
	grep "  main > a > b > c$" out &&
	callprof diff plain.cprof m.cprof >out &&
	grep "  main (open at attach: A 0, B 2)$" out &&
	! grep "^# A: attached" out
'

test_done
