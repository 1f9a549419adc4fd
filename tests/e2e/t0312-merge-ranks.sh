#!/bin/sh
test_description='merge keeps the per-input distribution (holders of min and max, sums of squares), merges in a tree exactly, and report --imbalance ranks call paths by the time lost waiting for the slowest input'
. "$(dirname "$0")/lib.sh"

# Profiles made by hand: eight "ranks" of one job with exact figures
# (ranks-lib.sh says which).
. "$TEST_DIRECTORY/ranks-lib.sh"

test_expect_success 'setup: eight ranks' '
	for r in 0 1 2 3 4 5 6 7
	do
		rank_profile $r || return 1
	done
'

test_expect_success 'merge in a tree (two halves, then both) is the merge of all, byte for byte' '
	callprof merge -q -o all.cprof r0.cprof r1.cprof r2.cprof r3.cprof r4.cprof r5.cprof r6.cprof r7.cprof &&
	callprof merge -q -o lo.cprof r0.cprof r1.cprof r2.cprof r3.cprof &&
	callprof merge -q -o hi.cprof r4.cprof r5.cprof r6.cprof r7.cprof &&
	callprof merge -q -o tree.cprof lo.cprof hi.cprof &&
	cmp all.cprof tree.cprof &&
	callprof merge -q -o a01.cprof r0.cprof r1.cprof &&
	callprof merge -q -o a012.cprof a01.cprof r2.cprof &&
	callprof merge -q -o a34.cprof r3.cprof r4.cprof &&
	callprof merge -q -o a0_4.cprof a012.cprof a34.cprof &&
	callprof merge -q -o a5_7.cprof r5.cprof r6.cprof r7.cprof &&
	callprof merge -q -o uneven.cprof a0_4.cprof a5_7.cprof &&
	cmp all.cprof uneven.cprof &&
	callprof export -f json all.cprof >all.json &&
	callprof export -f json uneven.cprof >uneven.json &&
	sed "s/uneven.cprof/all.cprof/g" uneven.json >uneven.renamed &&
	test_cmp all.json uneven.renamed
'

test_expect_success 'json: each context names the inputs holding its extremes, exact sums of squares' '
	python3 - all.json <<-\EOT
	import json, sys
	d = json.load(open(sys.argv[1]))
	ins = d["inputs"]
	assert [i["path"] for i in ins] == ["r%d.cprof" % r for r in range(8)], ins
	assert all(i["rank"] is None for i in ins), ins
	fns = d["functions"]
	nodes = {fns[n["function"]]["name"].split("+")[-1]: n for n in d["trees"][0]["nodes"][1:]}
	solve = [1000 + 10 * r for r in range(8)]
	solve[3] = 2000
	s = nodes["0x200"]["spread"]
	assert s["self_cpu_max_ns"] == 2000 and s["self_cpu_max_input"] == 3, s
	assert s["self_cpu_min_ns"] == 1000 and s["self_cpu_min_input"] == 0, s
	assert s["self_cpu_sum_ns"] == sum(solve), s
	assert s["self_cpu_sum_squares"] == str(sum(v * v for v in solve)), s
	assert s["calls_sum_squares"] == str(sum((r + 1) ** 2 for r in range(8))), s
	assert s["calls_max_input"] == 7 and s["calls_min_input"] == 0, s
	assert s["absent_input"] is None, s
	im = s["imbalance"]
	assert im["value"] == 8 * 2000 - sum(solve) and im["max_input"] == 3, im
	# exchange: rank 6 blocked 5000 ns there; self time holds it, self CPU not.
	x = nodes["0x300"]["spread"]
	assert x["self_max_ns"] == 6000 and x["self_max_input"] == 6, x
	assert x["self_cpu_max_ns"] == 1000 and x["self_cpu_max_input"] == 0, x
	assert x["imbalance"]["value"] == 0, x
	# log: only rank 5; the absent inputs count 0, the lowest holds the minimum.
	l = nodes["0x400"]["spread"]
	assert l["inputs"] == 1 and l["absent_input"] == 0, l
	assert l["self_cpu_min_ns"] == 0 and l["self_cpu_min_input"] == 0, l
	assert l["self_cpu_max_input"] == 5 and l["imbalance"]["value"] == 70, l
	EOT
'

test_expect_success 'report --imbalance: the imbalanced path first, naming the input that holds the max' '
	callprof report --imbalance all.cprof >out &&
	grep "^# imbalance: what the other inputs lost waiting for the slowest" out &&
	sed -n "/^ *imbalance /{n;p;}" out >first &&
	grep "input 3 (r3.cprof)  *input 0 (r0.cprof)  *\[unknown\]+0x100 > \[unknown\]+0x200$" first &&
	grep "^ *6.75us " first &&
	callprof report --imbalance --min-percent=0 all.cprof >all &&
	grep "input 5 (r5.cprof)  *input 0 (r0.cprof)  *\[unknown\]+0x100 > \[unknown\]+0x400$" all &&
	test $(grep -c "\[unknown\]" all) = 4
'

test_expect_success 'report --imbalance of a merge in a tree is the same' '
	callprof report --imbalance --min-percent=0 tree.cprof | sed 1d >tree.out &&
	callprof report --imbalance --min-percent=0 all.cprof | sed 1d >all.out &&
	test_cmp all.out tree.out
'

test_expect_success 'report --imbalance of one run: one error line, exit 1' '
	test_expect_code 1 callprof report --imbalance r1.cprof >out 2>err &&
	echo "callprof: error: --imbalance needs a merged profile of several runs or ranks: '"'"'r1.cprof'"'"' is not one (callprof merge makes one)" >expect &&
	test_cmp expect err &&
	test_must_be_empty out &&
	test_expect_code 1 callprof report --imbalance r1.cprof r2.cprof 2>err &&
	test_line_count = 1 err
'

# check_html ARGS...: tests/e2e/check-html.js on a page (see t0290).
check_html () {
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-html.js" "$@"
}

test_expect_success 'html: the Imbalance tab is report --imbalance, the side panel the distribution' '
	{ command -v chromium >/dev/null ||
	  { echo "chromium is needed (tools/install-deps --tests)"; false; }; } &&
	npm_install &&
	callprof export -f html -o all.html all.cprof &&
	callprof report --imbalance --min-percent=0 all.cprof >imb.txt &&
	check_html --html all.html --json all.json --imbalance imb.txt >out &&
	cat out &&
	grep "^ok - its first 4 rows are report --imbalance.s, cell by cell (first: \[unknown\]+0x100 > \[unknown\]+0x200, max at input 3 (r3.cprof))$" out &&
	callprof report --imbalance all.cprof >imb-default.txt &&
	check_html --html all.html --json all.json --imbalance imb-default.txt
'

test_expect_success 'html: an input named like markup is shown as text' '
	cp r3.cprof "<b>r3&amp;.cprof" &&
	callprof merge -q -o odd.cprof r0.cprof r1.cprof r2.cprof "<b>r3&amp;.cprof" &&
	callprof export -f html -o odd.html odd.cprof &&
	callprof export -f json -o odd.json odd.cprof &&
	callprof report --imbalance --min-percent=0 odd.cprof >odd.txt &&
	grep "input 3 (<b>r3&amp;.cprof)" odd.txt &&
	check_html --html odd.html --json odd.json --imbalance odd.txt >out &&
	grep "max at input 3 (<b>r3&amp;.cprof))$" out
'

test_expect_success 'html: one rank alone has no Imbalance tab' '
	callprof export -f html -o r1.html r1.cprof &&
	callprof export -f json -o r1.json r1.cprof &&
	check_html --html r1.html --json r1.json >out &&
	grep "^ok - no per-input distribution: no Imbalance tab$" out
'

test_expect_success 'counting profiles: imbalance of calls' '
	counting_ranks &&
	callprof report --imbalance c.cprof >out &&
	grep "^ *6  *66.67  *3.0  *1.6  *1  *5  *9  input 2 (c2.cprof)  input 0 (c0.cprof)  \[unknown\]+0x100$" out
'

test_expect_success 'counting profiles: the html Imbalance tab has the same calls' '
	callprof export -f html -o c.html c.cprof &&
	callprof export -f json -o c.json c.cprof &&
	callprof report --imbalance c.cprof >c.txt &&
	check_html --html c.html --json c.json --imbalance c.txt
'

test_done
