#!/bin/sh
test_description='export -f json, callgrind, speedscope, pprof, svg, plist: read by their real consumers, totals as ours'
. "$(dirname "$0")/lib.sh"

# folded_sum [ARGS...] <folded: the sum of the values (optionally of the
# lines starting with PREFIX;).
folded_sum () {
	awk -v pre="$1" 'pre == "" || index($0, pre ";") == 1 { s += $NF } END { print s + 0 }'
}

test_expect_success 'setup: a profile with three threads, recursion and call sites' '
	build_workload s-callsites.c &&
	callprof record -o p.cprof -- ./t-callsites 12 2 >out 2>err &&
	callprof export -f folded p.cprof >folded &&
	self=$(folded_sum <folded) &&
	test "$self" -gt 0 &&
	callprof export -f folded -m calls p.cprof >folded.calls &&
	calls=$(folded_sum <folded.calls) &&
	echo "$self $calls" >totals &&
	cat totals
'

test_expect_success 'json: parses, parents first, sums equal the report'"'"'s' '
	read self calls <totals &&
	callprof export -f json -o p.json p.cprof &&
	python3 - p.json "$self" "$calls" <<-\EOT
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["callprof_json"] == 1 and d["timed"] is True
	assert d["processes"][0]["command"][0] == "./t-callsites"
	fns = d["functions"]
	self_sum = calls = 0
	for t in d["trees"]:
	    for i, n in enumerate(t["nodes"]):
	        assert (n["parent"] is None) == (i == 0)
	        if i == 0:
	            continue
	        assert n["parent"] < i and n["function"] < len(fns)
	        assert n["self_ns"] <= n["total_ns"]
	        self_sum += n["self_ns"]
	        calls += n["calls"]
	        if "sites" in n:
	            assert sum(s["calls"] for s in n["sites"]) == n["calls"]
	            assert sum(s["total_ns"] for s in n["sites"]) == n["total_ns"]
	assert self_sum == int(sys.argv[2]), (self_sum, sys.argv[2])
	assert calls == int(sys.argv[3]) == d["calls"], (calls, sys.argv[3], d["calls"])
	names = {f["name"]: f for f in fns}
	assert names["leaf"]["file"].endswith("s-callsites.c") and names["leaf"]["line"] > 0
	assert names["leaf"]["offset"].startswith("0x")
	EOT
'

test_expect_success 'callgrind: callgrind_annotate reads it; its totals are ours' '
	read self calls <totals &&
	callprof export -f callgrind -o p.cg p.cprof &&
	callgrind_annotate p.cg >annotated 2>err &&
	test_must_be_empty err &&
	sed -n "s/^\([0-9,]*\) ([^)]*) *\([0-9,]*\) ([^)]*) .*PROGRAM TOTALS$/\1 \2/p" annotated |
		tr -d , >got &&
	echo "$self $calls" >expect &&
	test_cmp expect got &&
	grep -q "^calls=" p.cg &&
	callgrind_annotate --inclusive=yes --tree=calling p.cg >tree &&
	grep -q "s-callsites.c:fib" tree
'

test_expect_success 'callgrind: fib'"'"'s calls, one edge per call-site line' '
	callprof report --callers fib --srcline --fields=calls,site,name --sort=name p.cprof >callers &&
	a=$(awk "/s-callsites.c:29 .*<- fib\$/ { print \$1 }" callers) &&
	b=$(awk "/s-callsites.c:31 .*<- fib\$/ { print \$1 }" callers) &&
	test -n "$a" && test -n "$b" &&
	awk -v a="$a" -v b="$b" "
		/^fn=/ { fn = \$0 }
		/^cfn=/ { cfn = \$0 }
		/^calls=/ { n = substr(\$1, 7); getline; line = \$1 }
		/^calls=/ || line == \"\" { next }
		fn ~ /fib\$/ && cfn ~ /=\\(/ && line == 29 && n == a { fa = 1 }
		fn ~ /fib\$/ && line == 31 && n == b { fb = 1 }
		{ line = \"\" }
		END { exit !(fa && fb) }
	" p.cg
'

test_expect_success 'callgrind: a file per thread with --threads=each, each read as ours' '
	callprof export -f callgrind --threads=each -o each.cg p.cprof &&
	test -f each.cg-01 && test -f each.cg-02 && test -f each.cg-03 && ! test -e each.cg-04 &&
	callprof export -f folded --threads=each p.cprof >folded.each &&
	callprof export -f folded -m calls --threads=each p.cprof >folded.each.calls &&
	for part in each.cg-01 each.cg-02 each.cg-03; do
		label=$(sed -n "s/^desc: Thread: //p" $part) &&
		callgrind_annotate $part >annotated 2>err &&
		test_must_be_empty err &&
		sed -n "s/^\([0-9,]*\) ([^)]*) *\([0-9,]*\) ([^)]*) .*PROGRAM TOTALS$/\1 \2/p" \
			annotated | tr -d , >got &&
		echo "$(folded_sum "$label" <folded.each) $(folded_sum "$label" <folded.each.calls)" >expect &&
		test_cmp expect got || exit 1
	done &&
	test_expect_code 1 callprof export -f callgrind --threads=each p.cprof >stdout 2>err &&
	grep -q "give -o OUT" err &&
	test_must_be_empty stdout
'

test_expect_success 'speedscope: valid by the schema in the speedscope package, weights = self' '
	read self calls <totals &&
	npm_install &&
	callprof export -f speedscope -o p.speedscope.json p.cprof &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-speedscope.js" \
		p.speedscope.json >all &&
	grep -v ": \(cpu\|wait\|inactive\) " all >got &&
	echo "all threads $self" >expect &&
	test_cmp expect got &&
	# ... and one profile each for the cpu, wait and inactive parts of self.
	test "$(grep -c ": \(cpu\|wait\|inactive\) " all)" = 3 &&
	test "$(awk "/: (cpu|wait|inactive) / { s += \$NF } END { print s }" all)" = "$self"
'

test_expect_success 'speedscope: a profile per thread with --threads=each' '
	npm_install &&
	callprof export -f speedscope --threads=each -o each.json p.cprof &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-speedscope.js" each.json |
		grep -v ": \(cpu\|wait\|inactive\) " >got &&
	test $(wc -l <got) = 3 &&
	callprof export -f folded --threads=each p.cprof >folded.each &&
	while read -r label total; do
		test "$(folded_sum "$label" <folded.each)" = "$total" || exit 1
	done <got
'

# pprof_sums FILE: decode with protoc against proto/profile.proto and print
# the sums of each sample value, space-separated.
pprof_sums () {
	gzip -dc "$1" >"$1.raw" &&
	protoc --decode=perftools.profiles.Profile --proto_path="$TEST_DIRECTORY/../../proto" \
		"$TEST_DIRECTORY/../../proto/profile.proto" <"$1.raw" >"$1.txt" &&
	awk "
		/^sample \{/ { k = 0; in_sample = 1 }
		in_sample && /^  value: / { sum[k++] += \$2; if (k > n) n = k }
		/^}/ { in_sample = 0 }
		END { for (i = 0; i < n; i++) printf \"%s%d\", i ? \" \" : \"\", sum[i]; print \"\" }
	" "$1.txt"
}

test_expect_success 'pprof: gzip, decoded by protoc as profile.proto; sample sums are ours' '
	read self calls <totals &&
	callprof export -f pprof -o p.pb.gz p.cprof &&
	pprof_sums p.pb.gz >sums &&
	cut -d" " -f1,2 sums >got &&
	echo "$calls $self" >expect &&
	test_cmp expect got &&
	# The recording split self time into cpu, wait and inactive (types 3-5).
	awk "{ exit !(NF == 5 && \$3 + \$4 + \$5 == \$2) }" sums &&
	grep -q "^string_table: \"\"$" p.pb.gz.txt &&
	grep -q "^string_table: \"fib\"$" p.pb.gz.txt &&
	grep -q "^string_table: \"nanoseconds\"$" p.pb.gz.txt &&
	id=$(readelf -n t-callsites | awk "/Build ID:/ { print \$3 }") &&
	grep -q "^string_table: \"$id\"$" p.pb.gz.txt &&
	test $(grep -c "^sample {" p.pb.gz.txt) = $(wc -l <folded)
'

test_expect_success 'pprof: thread labels with --threads=each' '
	read self calls <totals &&
	callprof export -f pprof --threads=each -o each.pb.gz p.cprof &&
	pprof_sums each.pb.gz >got &&
	set -- $(cat got) &&
	test "$1" = "$calls" &&
	grep -q "^string_table: \"thread\"$" each.pb.gz.txt &&
	test $(grep -c "^  label {" each.pb.gz.txt) -gt 0
'

test_expect_success 'svg: well-formed, drawn by rsvg-convert, every context a frame or counted out' '
	callprof export -f svg -o p.svg p.cprof &&
	xmllint --noout p.svg &&
	rsvg-convert -o p.png p.svg &&
	test -s p.png &&
	drawn=$(grep -c "^<g><title>" p.svg) &&
	out=$(sed -n "s/^<!-- \([0-9]*\) frames left out.*/\1/p" p.svg) &&
	test $((drawn + ${out:-0})) = $(($(wc -l <folded) + 1)) &&
	grep -q "^<g><title>main\$" p.svg &&
	grep -A1 "^<g><title>fib\$" p.svg | grep -q "^calls [0-9]*, total" &&
	callprof export -f svg --icicle --threads=each -o each.svg p.cprof &&
	xmllint --noout each.svg &&
	test $(grep -c "^<g><title>t-callsites" each.svg) = 3 &&
	test_expect_code 129 callprof export -f json --icicle p.cprof 2>err &&
	grep -q "icicle.*svg only" err
'

# plist_check FILE CALLS: the record structure of a PLIST /T file: tags 0
# to 5 once each and in order, total hits = CALLS, record 8 = the number of
# stacks, each stack's size = its 10 records, the stacks' calls add up to
# CALLS.  Prints the method number.
plist_check () {
	awk -F "\t" -v calls="$2" "
		NR <= 6 && \$1 != NR - 1 { print \"tag \" \$1 \" at line \" NR; bad = 1 }
		\$1 == 1 { method = \$2 }
		\$1 == 3 && \$2 != calls { print \"hits \" \$2 \" not \" calls; bad = 1 }
		\$1 == 8 { stacks = \$2 }
		\$1 == 9 { if (left) bad = 1; left = \$2; n9++; c9 += \$3 }
		\$1 == 10 { left--; if (left < 0) bad = 1 }
		END {
			if (left || n9 != stacks || c9 != calls) { print \"stacks\", n9, stacks, c9; bad = 1 }
			print method
			exit bad
		}
	" "$1"
}

test_expect_success 'plist: the PLIST records, method 522, exact counts per function' '
	read self calls <totals &&
	callprof export -f plist -o p.plist p.cprof &&
	plist_check p.plist "$calls" >got &&
	echo 522 >expect &&
	test_cmp expect got &&
	callprof report --flat --fields=calls,name --sort=name p.cprof | sed 1d |
		awk "{ print \$2, \$1 }" >flat &&
	awk -F "\t" "\$1 == 6 { print \$7, \$4 }" p.plist >plist.calls &&
	test_cmp flat plist.calls &&
	grep -q "^5	main$" p.plist &&
	callprof report --plist p.cprof >listing &&
	grep -q "^Profile: Function timing, sorted by function name$" listing &&
	grep -q "^    Total hits: $calls$" listing &&
	grep -q "^ .*  fib$" listing
'

test_expect_success 'a counting profile: calls only, in every format' '
	callprof record --mode=counting -o c.cprof -- ./t-callsites 12 2 >out 2>err &&
	callprof export -f folded -m calls c.cprof >folded.c &&
	calls=$(folded_sum <folded.c) &&
	callprof export -f callgrind -o c.cg c.cprof &&
	grep -q "^events: Calls$" c.cg &&
	callgrind_annotate c.cg | grep -q "^$(printf "%s" "$calls" | sed ":a;s/\B[0-9]\{3\}\>/,&/;ta") (100.0%)  PROGRAM TOTALS" &&
	npm_install &&
	callprof export -f speedscope -o c.json c.cprof &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-speedscope.js" c.json >got &&
	echo "all threads $calls" >expect &&
	test_cmp expect got &&
	callprof export -f pprof -o c.pb.gz c.cprof &&
	pprof_sums c.pb.gz >got &&
	echo "$calls" >expect &&
	test_cmp expect got &&
	callprof export -f plist -o c.plist c.cprof &&
	plist_check c.plist "$calls" >got &&
	echo 521 >expect &&
	test_cmp expect got &&
	callprof record --mode=coverage -o v.cprof -- ./t-callsites 12 2 >out 2>err &&
	callprof export -f plist v.cprof >v.plist &&
	grep -q "^1	524	" v.plist &&
	callprof export -f svg -o c.svg c.cprof &&
	xmllint --noout c.svg &&
	grep -A1 "^<g><title>all threads\$" c.svg | grep -q "$calls calls below" &&
	test $(grep -c "^<g><title>" c.svg) = $(($(wc -l <folded.c) + 1)) &&
	grep -A1 "^<g><title>work\$" c.svg | grep -q "^calls 1, 7 calls below" &&
	grep -A1 "^<g><title>work\$" c.svg | grep -q "^calls 2, 14 calls below" &&
	callprof export -f json c.cprof >c.json2 &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert d[\"timed\"] is False; assert \"total_ns\" not in d[\"trees\"][0][\"nodes\"][1]" c.json2
'

test_expect_success 'usage errors and unwritable outputs leave nothing behind' '
	test_expect_code 129 callprof export -f json -m calls p.cprof 2>err &&
	grep -q "metric.*folded only" err &&
	test_expect_code 129 callprof export -f svgz p.cprof 2>err &&
	test_expect_code 1 callprof export -f callgrind -o no/such/dir/p.cg p.cprof 2>err &&
	grep -q "no/such/dir" err &&
	! test -e no
'

test_done
