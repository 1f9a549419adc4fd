#!/bin/sh
test_description='export -f json, callgrind, speedscope, pprof, svg, plist: read by their real consumers, totals as ours'
. "$(dirname "$0")/lib.sh"

# folded_sum [ARGS...] <folded: the sum of the values (optionally of the
# lines starting with PREFIX;).
folded_sum () {
	awk -v pre="$1" 'pre == "" || index($0, pre ";") == 1 { s += $NF } END { printf "%.0f\n", s }'
}

# The default recording (sampled CPU time) of a run long enough to be
# sampled, so that time, samples and the 0-call contexts of sampled code
# without hooks ([kernel]) reach every format; k.cprof is the same program
# timed per call (--time=clock), where call sites have times too.  Both
# are weighed by CPU time (the report's weight): folded's default value
# is self cpu, the first event and sample type cpu.
test_expect_success 'setup: a profile with three threads, recursion and call sites' '
	build_workload s-callsites.c &&
	callprof record -o p.cprof -- ./t-callsites 32 2 >out 2>err &&
	callprof export -f folded -m self p.cprof >folded &&
	self=$(folded_sum <folded) &&
	test "$self" -gt 0 &&
	callprof export -f folded -m calls p.cprof >folded.calls &&
	calls=$(folded_sum <folded.calls) &&
	callprof export -f folded -m samples p.cprof >folded.samples &&
	samples=$(folded_sum <folded.samples) &&
	test "$samples" -gt 0 &&
	callprof export -f folded p.cprof >folded.cpu &&
	callprof export -f folded -m self-cpu p.cprof >folded.self-cpu &&
	test_cmp folded.cpu folded.self-cpu &&
	cpu=$(folded_sum <folded.cpu) &&
	test "$cpu" -gt 0 && test "$cpu" -le "$self" &&
	echo "$self $calls $samples $cpu" >totals &&
	cat totals &&
	callprof record --time=clock -o k.cprof -- ./t-callsites 12 2 >out 2>err &&
	callprof export -f folded -m self k.cprof >k.folded &&
	callprof export -f folded -m calls k.cprof >k.folded.calls &&
	callprof export -f folded k.cprof >k.folded.cpu &&
	echo "$(folded_sum <k.folded) $(folded_sum <k.folded.calls) $(folded_sum <k.folded.cpu)" >k.totals &&
	cat k.totals
'

# json_check FILE SELF CALLS: the json export's structure and sums.  Per
# call-site times exist only per call (clock timing): cpu mode writes null
# there, and for min/max, and its self CPU time is samples x period; its
# 0-call contexts (sampled code without hooks) rest on samples.
json_check () {
	python3 - "$@" <<-\EOT
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["callprof_json"] == 1 and d["timed"] is True
	assert d["processes"][0]["command"][0] == "./t-callsites"
	cpu = d["processes"][0]["mode"] == "cpu"
	period = d["time_source"]["period_ns"] if cpu else 0
	fns = d["functions"]
	self_sum = calls = samples = kernel = 0
	for t in d["trees"]:
	    for i, n in enumerate(t["nodes"]):
	        assert (n["parent"] is None) == (i == 0)
	        for l in n.get("lines", []):
	            # kernel time and lost samples have no address, and say so
	            if l["address"] is None:
	                assert cpu and l["function"] in ("[kernel]", "[address unknown]"), l
	            else:
	                assert int(l["address"], 16) >= 4096, l
	        if i == 0:
	            # a sample lost while the thread had no call open is its own
	            samples += n.get("self_samples", 0)
	            continue
	        assert n["parent"] < i and n["function"] < len(fns)
	        assert n["self_ns"] <= n["total_ns"]
	        self_sum += n["self_ns"]
	        calls += n["calls"]
	        if cpu:
	            assert n["min_ns"] is None and n["max_ns"] is None, n
	            assert n["self_cpu_ns"] == n["self_samples"] * period, n
	            samples += n["self_samples"]
	            if n["calls"] == 0:
	                assert n["self_samples"] > 0 and "sites" not in n, n
	            if fns[n["function"]]["name"] == "[kernel]":
	                assert n["calls"] == 0, n
	                kernel += n["self_samples"]
	        else:
	            assert n["min_ns"] <= n["max_ns"], n
	        if "sites" in n:
	            assert sum(s["calls"] for s in n["sites"]) == n["calls"]
	            if cpu:
	                assert all(s["total_ns"] is None for s in n["sites"]), n
	            else:
	                assert sum(s["total_ns"] for s in n["sites"]) == n["total_ns"]
	assert self_sum == int(sys.argv[2]), (self_sum, sys.argv[2])
	assert calls == int(sys.argv[3]) == d["calls"], (calls, sys.argv[3], d["calls"])
	if cpu:
	    assert samples == d["time_source"]["samples"] > 0, (samples, d["time_source"])
	    # Kernel time (and samples a full ring dropped) is the [kernel] children's.
	    ts = d["time_source"]
	    assert ts["kernel_samples"] <= kernel <= ts["kernel_samples"] + ts["lost_samples"], (kernel, ts)
	names = {f["name"]: f for f in fns}
	assert names["leaf"]["file"].endswith("s-callsites.c") and names["leaf"]["line"] > 0
	assert names["leaf"]["offset"].startswith("0x")
	EOT
}

test_expect_success 'json: parses, parents first, sums equal the report'"'"'s' '
	read self calls samples cpu <totals &&
	callprof export -f json -o p.json p.cprof &&
	json_check p.json "$self" "$calls" &&
	python3 -c "import json, sys; assert json.load(open(sys.argv[1]))[\"weight\"] == \"cpu\"" p.json &&
	read self calls cpu <k.totals &&
	callprof export -f json -o k.json k.cprof &&
	json_check k.json "$self" "$calls"
'

# cg_totals <ANNOTATED: the first two events of callgrind_annotate's
# PROGRAM TOTALS line, without the thousands commas.  A total of 0 has no
# "(100.0%)" after it (a thread that drew no sample has a Time of 0).
cg_totals () {
	sed -n "s/^\([0-9,]*\) \(([^)]*) \)\{0,1\} *\([0-9,]*\) .*PROGRAM TOTALS$/\1 \3/p" | tr -d ,
}

# The weight's event first (callgrind_annotate sorts and shows by it).
test_expect_success 'callgrind: callgrind_annotate reads it; its totals are ours' '
	read self calls samples cpu <totals &&
	callprof export -f callgrind -o p.cg p.cprof &&
	grep -q "^events: Cpu Time Calls Wait Inactive Samples$" p.cg &&
	callgrind_annotate p.cg >annotated 2>err &&
	test_must_be_empty err &&
	cg_totals <annotated >got &&
	echo "$cpu $self" >expect &&
	test_cmp expect got &&
	callprof export -f callgrind -m calls -o c.cg p.cprof &&
	grep -q "^events: Calls Time Cpu Wait Inactive Samples$" c.cg &&
	callgrind_annotate c.cg | cg_totals >got &&
	echo "$calls $self" >expect &&
	test_cmp expect got &&
	grep -q "^calls=" p.cg &&
	callgrind_annotate --inclusive=yes --tree=calling p.cg >tree &&
	grep -q "s-callsites.c:fib" tree
'

# cg_exclusive ANNOTATED JSON FIELD: every function's exclusive cost of
# the first event in callgrind_annotate's listing (--threshold=100: all of
# them) is the sum of FIELD over its contexts in the json export, and the
# listing's percentages add up to 100.  Code without hooks ([kernel]) was
# written as calls=0 edges, whose cost callgrind_annotate adds to the
# caller's own: fib showed its [kernel] time twice, the column above 100%.
cg_exclusive () {
	python3 - "$@" <<-\EOT
	import json, re, sys
	ann = open(sys.argv[1]).read().split("\n")
	d = json.load(open(sys.argv[2]))
	want = {}
	for t in d["trees"]:
	    for n in t["nodes"][1:]:
	        name = d["functions"][n["function"]]["name"]
	        want[name] = want.get(name, 0) + n[sys.argv[3]]
	start = [i for i, l in enumerate(ann) if l.endswith("file:function")][0] + 2
	got, pct = {}, 0.0
	for l in ann[start:]:
	    if not l.strip() or l.startswith("--"):
	        break
	    # "FILE:FUNCTION [OBJECT]": a C++ name may hold blanks (an ASan build's do), OBJECT brackets ([vdso])
	    m = re.match(r"^\s*([\d,]+) (?:\(\s*([\d.]+)%\))?.*?  (\S*?):(.+) \[.*\]$", l)
	    assert m, l
	    got[m.group(4)] = got.get(m.group(4), 0) + int(m.group(1).replace(",", ""))
	    pct += float(m.group(2) or 0)
	assert got == {k: v for k, v in want.items() if k in got}, (got, want)
	assert all(v == 0 for k, v in want.items() if k not in got), (got, want)
	assert 99.9 <= pct <= 100.1, pct
	EOT
}

test_expect_success 'callgrind: each function'"'"'s exclusive cost is the report'"'"'s; the column makes 100%' '
	callprof export -f json -o p.json p.cprof &&
	# kernel time is [kernel] (if the run was sampled there: a loaded
	# machine may give the whole run 20 samples, none in the kernel)
	if python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not any(d[\"functions\"][n[\"function\"]][\"name\"] == \"[kernel]\"
		 for t in d[\"trees\"] for n in t[\"nodes\"][1:]))" p.json
	then
		grep -q "^fn=([0-9]*) \[kernel\]$" p.cg
	else
		! grep -q "^fn=([0-9]*) \[kernel\]$" p.cg
	fi &&
	callgrind_annotate --threshold=100 --auto=no p.cg >ann &&
	cg_exclusive ann p.json self_cpu_ns &&
	callprof export -f callgrind -m self -o t.cg p.cprof &&
	callgrind_annotate --threshold=100 --auto=no t.cg >ann &&
	cg_exclusive ann p.json self_ns &&
	! grep -q "^calls=0 " p.cg t.cg
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
	callprof export -f folded -m self --threads=each p.cprof >folded.each.self &&
	for part in each.cg-01 each.cg-02 each.cg-03; do
		label=$(sed -n "s/^desc: Thread: //p" $part) &&
		callgrind_annotate $part >annotated 2>err &&
		test_must_be_empty err &&
		cg_totals <annotated >got &&
		echo "$(folded_sum "$label" <folded.each) $(folded_sum "$label" <folded.each.self)" >expect &&
		test_cmp expect got || exit 1
	done &&
	test_expect_code 1 callprof export -f callgrind --threads=each p.cprof >stdout 2>err &&
	grep -q "give -o OUT" err &&
	test_must_be_empty stdout
'

# The parts of self time (cpu, wait, inactive) and, in cpu mode, the samples
# each get a profile of their own per tree: speedscope shows one metric per
# profile.
parts=": \(cpu\|wait\|inactive\|samples\) "

test_expect_success 'speedscope: valid by the schema in the speedscope package, weights = self' '
	read self calls samples cpu <totals &&
	npm_install &&
	callprof export -f speedscope -o p.speedscope.json p.cprof &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-speedscope.js" \
		p.speedscope.json >all &&
	grep -v "$parts" all >got &&
	echo "all threads $self" >expect &&
	test_cmp expect got &&
	# ... and one profile each for the cpu, wait and inactive parts of self,
	test "$(grep -c ": \(cpu\|wait\|inactive\) " all)" = 3 &&
	test "$(awk "/: (cpu|wait|inactive) / { s += \$NF } END { printf \"%.0f\\n\", s }" all)" = "$self" &&
	# ... and one for the samples the CPU time rests on.
	echo "all threads: samples $samples" >expect &&
	grep ": samples " all >got &&
	test_cmp expect got &&
	callprof export -f speedscope -o k.speedscope.json k.cprof &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-speedscope.js" \
		k.speedscope.json >all &&
	! grep ": samples " all
'

test_expect_success 'speedscope: a profile per thread with --threads=each' '
	npm_install &&
	callprof export -f speedscope --threads=each -o each.json p.cprof &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-speedscope.js" each.json >all &&
	grep -v "$parts" all >got &&
	test $(wc -l <got) = 3 &&
	callprof export -f folded -m self --threads=each p.cprof >folded.each &&
	while read -r label total; do
		test "$(folded_sum "$label" <folded.each)" = "$total" || exit 1
	done <got &&
	sed -n "s/: samples / /p" all >got &&
	test $(wc -l <got) = 3 &&
	callprof export -f folded -m samples --threads=each p.cprof >folded.each.samples &&
	while read -r label total; do
		test "$(folded_sum "$label" <folded.each.samples)" = "$total" || exit 1
	done <got
'

# pprof_types FILE (after pprof_sums, lib.sh): the names of its sample
# types, then "default=" the name of its default sample type (what pprof and
# speedscope open).
pprof_types () {
	awk "
		/^sample_type \{/ { st = 1 }
		st && /^  type: / { type[nt++] = \$2; st = 0 }
		/^default_sample_type: / { dflt = \$2 }
		/^string_table: / { s = substr(\$0, 15); gsub(/\"/, \"\", s); str[ns++] = s }
		END { for (i = 0; i < nt; i++) printf \"%s \", str[type[i]]; print \"default=\" str[dflt] }
	" "$1.txt"
}

# The weight's type (cpu) first and the default: pprof -top opens the report's picture.
test_expect_success 'pprof: gzip, decoded by protoc as profile.proto; sample sums are ours' '
	read self calls samples cpu <totals &&
	callprof export -f pprof -o p.pb.gz p.cprof &&
	pprof_sums p.pb.gz >sums &&
	pprof_types p.pb.gz >types &&
	echo "cpu calls self wait inactive samples default=cpu" >expect &&
	test_cmp expect types &&
	cut -d" " -f1,2,3,6 sums >got &&
	echo "$cpu $calls $self $samples" >expect &&
	test_cmp expect got &&
	# The recording split self time into cpu, wait and inactive.
	awk "{ exit !(\$1 + \$4 + \$5 == \$3) }" sums &&
	callprof export -f pprof -m self -o s.pb.gz p.cprof &&
	pprof_sums s.pb.gz >/dev/null &&
	pprof_types s.pb.gz >types &&
	echo "self calls cpu wait inactive samples default=self" >expect &&
	test_cmp expect types &&
	grep -q "^string_table: \"\"$" p.pb.gz.txt &&
	grep -q "^string_table: \"fib\"$" p.pb.gz.txt &&
	grep -q "^string_table: \"nanoseconds\"$" p.pb.gz.txt &&
	id=$(readelf -n t-callsites | awk "/Build ID:/ { print \$3 }") &&
	grep -q "^string_table: \"$id\"$" p.pb.gz.txt &&
	test $(grep -c "^sample {" p.pb.gz.txt) = $(wc -l <folded)
'

test_expect_success 'pprof: a clock-timed profile has no samples type' '
	read self calls cpu <k.totals &&
	callprof export -f pprof -o k.pb.gz k.cprof &&
	pprof_sums k.pb.gz >sums &&
	pprof_types k.pb.gz >types &&
	echo "cpu calls self wait inactive default=cpu" >expect &&
	test_cmp expect types &&
	cut -d" " -f1,2,3 sums >got &&
	echo "$cpu $calls $self" >expect &&
	test_cmp expect got &&
	awk "{ exit !(NF == 5 && \$1 + \$4 + \$5 == \$3) }" sums &&
	test $(grep -c "^sample {" k.pb.gz.txt) = $(wc -l <k.folded)
'

test_expect_success 'pprof: thread labels with --threads=each' '
	read self calls samples cpu <totals &&
	callprof export -f pprof --threads=each -o each.pb.gz p.cprof &&
	pprof_sums each.pb.gz >got &&
	set -- $(cat got) &&
	test "$1" = "$cpu" &&
	test "$2" = "$calls" &&
	test "$3" = "$self" &&
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
	# Per thread, a frame for each thread that has time: a thread that drew
	# no sample and never waited is 0 wide, and counted out.
	callprof export -f svg --icicle --threads=each -o each.svg p.cprof &&
	xmllint --noout each.svg &&
	callprof export -f folded --threads=each p.cprof >folded.each &&
	timed=$(awk "{ split(\$1, a, \";\"); s[a[1]] += \$NF }
		END { for (t in s) n += s[t] > 0; print n + 0 }" folded.each) &&
	test "$timed" -ge 1 &&
	test $(grep -c "^<g><title>t-callsites" each.svg) = "$timed" &&
	drawn=$(grep -c "^<g><title>" each.svg) &&
	out=$(sed -n "s/^<!-- \([0-9]*\) frames left out.*/\1/p" each.svg) &&
	test $((drawn + ${out:-0})) = $(($(wc -l <folded.each) + 3 + 1)) &&
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
	read self calls samples <totals &&
	callprof export -f plist -o p.plist p.cprof &&
	plist_check p.plist "$calls" >got &&
	echo 522 >expect &&
	test_cmp expect got &&
	# [kernel] is no function (no record 6, docs/plist-format.md); sampled
	# code without hooks is, with 0 calls ("-" in the report).
	callprof report --flat --fields=calls,name --sort=name p.cprof | sed 1d |
		sed "s/^ *\([^ ]*\)  \(.*\)\$/\2 \1/; s/ -\$/ 0/" | grep -v "^\[kernel\] " >flat &&
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
	grep -q "metric is for -f folded, callgrind, speedscope, pprof, svg and html" err &&
	test_expect_code 129 callprof export -f svgz p.cprof 2>err &&
	test_expect_code 1 callprof export -f callgrind -o no/such/dir/p.cg p.cprof 2>err &&
	grep -q "no/such/dir" err &&
	! test -e no
'

test_done
