#!/bin/sh
test_description='cpu mode (CPU time sampled, counts exact) through exports, diff, merge, filters, --lines, --threads=each and snapshots'
. "$(dirname "$0")/lib.sh"

# Record in cpu mode: cpu_record OUT PROG [ARGS...].
cpu_record () {
	_cp_out=$1
	shift
	CALLPROF_OUT=$_cp_out LD_PRELOAD="$CALLPROF_BUILD/libcallprof-cpu.so" "$@"
}

# check_cpu_json FILE: the relations of a cpu-mode json export, per tree and
# node: self <= total; total = self + the children's totals; samples =
# self samples + the children's samples; self = self samples x period +
# self wait + self inactive; min and max null (not measured); the sites
# add up to the calls and carry no time.  Prints the root totals
# ("SAMPLES TOTAL_NS" per tree).
check_cpu_json () {
	python3 - "$1" <<-\EOT
	import json, sys
	d = json.load(open(sys.argv[1]))
	ts = d["time_source"]
	# No sample at all (a short run): the runtime gives no period either.
	assert ts["source"] == "cpu-samples" and (ts["period_ns"] > 0 or not ts["samples"]), ts
	assert d["processes"][0]["mode"] == "cpu"
	period = ts["period_ns"]
	for t in d["trees"]:
	    nodes = t["nodes"]
	    kids = {}
	    for i, n in enumerate(nodes):
	        if i:
	            kids.setdefault(n["parent"], []).append(i)
	    for i, n in enumerate(nodes):
	        k = kids.get(i, [])
	        assert n["self_ns"] <= n["total_ns"], (i, n)
	        assert n["total_ns"] == n["self_ns"] + sum(nodes[c]["total_ns"] for c in k), (i, n)
	        assert n["samples"] == n["self_samples"] + sum(nodes[c]["samples"] for c in k), (i, n)
	        own = n["self_samples"] * period + n.get("self_wait_ns", 0) + n.get("self_inactive_ns", 0)
	        assert n["self_ns"] == own, (i, n, own)
	        assert n["min_ns"] is None and n["max_ns"] is None, n
	        if "sites" in n:
	            assert sum(s["calls"] for s in n["sites"]) == n["calls"], n
	            assert all(s["total_ns"] is None for s in n["sites"]), n
	    assert sum(n["self_ns"] for n in nodes) == nodes[0]["total_ns"]
	    print(nodes[0]["samples"], nodes[0]["total_ns"])
	EOT
}

# folded_sum: the sum of a folded export's values.
folded_sum () {
	awk '{ s += $NF } END { printf "%.0f\n", s }'
}


test_expect_success 'setup: cpu-mode recordings of a spinning program and of one with threads and call sites' '
	build_workload s-spin.c &&
	build_workload s-callsites.c &&
	cpu_record s.cprof ./t-spin >out 2>err &&
	cpu_record s2.cprof ./t-spin 50ms >out 2>err &&
	cpu_record p.cprof ./t-callsites 30 2 >out 2>err &&
	callprof export -f json -o s.json s.cprof &&
	callprof export -f json -o p.json p.cprof &&
	python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"time_source\"][\"samples\"])" s.json >nsamples &&
	cat nsamples
'

if test "$(cat "$TRASH_DIRECTORY/nsamples" 2>/dev/null)" = 0; then
	echo "# SKIP (all): no CPU-time sample: perf_event_open refused here"
	test_done
fi

test_expect_success 'json: relations per node; totals are the report'"'"'s' '
	check_cpu_json s.json >roots &&
	read samples total <roots &&
	test "$samples" -gt 0 &&
	check_cpu_json p.json >proots &&
	# Folded leaves out the thread roots: their own time and samples.
	python3 -c "
import json
r = json.load(open(\"s.json\"))[\"trees\"][0][\"nodes\"][0]
print(r[\"total_ns\"] - r[\"self_ns\"], r[\"samples\"] - r[\"self_samples\"])" >expect &&
	callprof export -f folded -m self s.cprof | folded_sum >self &&
	callprof export -f folded -m samples s.cprof | folded_sum >samples &&
	echo "$(cat self) $(cat samples)" >got &&
	test_cmp expect got &&
	cp expect nonroot &&
	callprof report --flat --fields=self-samples,samples,name --sort=name s.cprof >flat &&
	awk "\$3 == \"spin4\" { print \$1, \$2 }" flat >got &&
	python3 -c "
import json, sys
d = json.load(open(\"s.json\"))
f = [i for i, x in enumerate(d[\"functions\"]) if x[\"name\"] == \"spin4\"][0]
n = [x for x in d[\"trees\"][0][\"nodes\"] if x[\"function\"] == f]
print(sum(x[\"self_samples\"] for x in n), sum(x[\"samples\"] for x in n))" >expect &&
	test_cmp expect got
'

test_expect_success 'folded -m samples refuses a profile without samples' '
	callprof record --mode=timing -o t.cprof -- ./t-spin >out 2>err &&
	test_expect_code 1 callprof export -f folded -m samples t.cprof 2>err &&
	grep -q "t.cprof.*no CPU-time samples" err
'

# The exports below lay out the contexts, not the thread roots: their sums
# leave out the roots' own time and samples (nonroot).
test_expect_success 'pprof: protoc decodes it; a samples type, period cpu/nanoseconds, sums are ours' '
	read total samples <nonroot &&
	callprof export -f pprof -o s.pb.gz s.cprof &&
	pprof_sums s.pb.gz >sums &&
	set -- $(cat sums) &&
	test $# = 6 &&
	test "$3" = "$total" &&
	test "$6" = "$samples" &&
	test $(($1 + $4 + $5)) = "$3" &&
	period=$(python3 -c "import json; print(json.load(open(\"s.json\"))[\"time_source\"][\"period_ns\"])") &&
	grep -q "^period: $period$" s.pb.gz.txt &&
	grep -q "^string_table: \"samples\"$" s.pb.gz.txt &&
	grep -q "^string_table: \"cpu\"$" s.pb.gz.txt &&
	grep -q "^string_table: \"callprof time source: cpu-samples: CPU time sampled at " s.pb.gz.txt &&
	grep -q "^comment: " s.pb.gz.txt
'

test_expect_success 'callgrind: callgrind_annotate reads a Samples event; its totals are ours' '
	read total samples <nonroot &&
	callprof export -f callgrind -o s.cg s.cprof &&
	grep -q "^events: Cpu Time Calls Wait Inactive Samples$" s.cg &&
	callgrind_annotate s.cg >annotated 2>err &&
	test_must_be_empty err &&
	sed -n "s/^\([0-9,]*\) ([^)]*) *\([0-9,]*\) ([^)]*) .* \([0-9,]*\) ([^)]*)  PROGRAM TOTALS$/\2 \3/p" \
		annotated | tr -d , >got &&
	echo "$total $samples" >expect &&
	test_cmp expect got &&
	callgrind_annotate --inclusive=yes s.cg >incl &&
	# main holds every sample but those of code sampled after it returned.
	main=$(python3 -c "
import json
d = json.load(open(\"s.json\"))
t = d[\"trees\"][0]
print(sum(n[\"samples\"] for n in t[\"nodes\"] if n[\"parent\"] == 0 and d[\"functions\"][n[\"function\"]][\"name\"] == \"main\"))") &&
	grep -q "^[0-9,]* ([ 0-9.]*%) .* $(printf "%s" "$main" | sed ":a;s/\B[0-9]\{3\}\>/,&/;ta") ([ 0-9.]*%)  .*:main " incl
'

test_expect_success 'callgrind: a context called from two lines shares its time and samples among them' '
	callprof export -f callgrind -o p.cg p.cprof &&
	callgrind_annotate p.cg >/dev/null 2>err &&
	test_must_be_empty err &&
	python3 - p.cg p.json <<-\EOT
	import json, sys
	# Per caller -> callee edge, the inclusive Time (the second event, after
	# Cpu) and Samples summed over its lines; the contexts of the json per
	# (caller, callee) function pair.
	cg = open(sys.argv[1]).read().split("\n")
	names, edges, fn = {}, {}, None
	i = 0
	while i < len(cg):
	    l = cg[i]
	    for key in ("fn=", "cfn="):
	        if l.startswith(key):
	            num = l[len(key):].split(")")[0] + ")"
	            if " " in l:
	                names[num] = l.split(") ", 1)[1]
	            if key == "fn=":
	                fn = names[num]
	            else:
	                cfn = names[num]
	    if l.startswith("calls="):
	        v = cg[i + 1].split()
	        e = edges.setdefault((fn, cfn), [0, 0])
	        e[0] += int(v[2])
	        e[1] += int(v[-1])
	        i += 1
	    i += 1
	d = json.load(open(sys.argv[2]))
	fns = [f["name"] for f in d["functions"]]
	want = {}
	nodes = d["trees"][0]["nodes"]
	# The edge totals of callgrind are per call, not per context: recursion adds
	# each level.  Sum the contexts of each (caller, callee) pair.
	for n in nodes[1:]:
	    p = nodes[n["parent"]]
	    if p["function"] is None:
	        continue
	    e = want.setdefault((fns[p["function"]], fns[n["function"]]), [0, 0])
	    e[0] += n["total_ns"]
	    e[1] += n["samples"]
	assert edges == want, (edges, want)
	assert any("sites" in n for n in nodes), "no context with several call sites"
	EOT
'

test_expect_success 'speedscope: valid by the schema; weights are ours, plus a samples profile' '
	read total samples <nonroot &&
	npm_install &&
	callprof export -f speedscope -o s.ss.json s.cprof &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-speedscope.js" s.ss.json >all &&
	printf "all threads %s\nall threads: samples %s\n" "$total" "$samples" >expect &&
	grep -v ": \(cpu\|wait\|inactive\) " all >got &&
	test_cmp expect got &&
	python3 -c "import json, sys; n = json.load(open(sys.argv[1]))[\"name\"]; assert \"CPU time sampled at\" in n, n" s.ss.json
'

test_expect_success 'html: chromium shows samples per node, the time source, no min or max' '
	npm_install &&
	callprof export -f html -o s.html s.cprof &&
	callprof report --flat --fields=calls,total,self,name --sort=name s.cprof >flat.html &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-html.js" --html s.html \
		--json s.json --flat flat.html >checks &&
	grep -q "^ok - cpu mode: the facts name the time source" checks &&
	grep -q "^ok - the page holds the json export.s calls, total, self and samples" checks
'

test_expect_success 'svg, plist, folded: times work, samples shown, nothing says min or max' '
	read samples total <roots &&
	callprof export -f svg -o s.svg s.cprof &&
	xmllint --noout s.svg &&
	grep -A3 "^<g><title>spin4\$" s.svg | grep -q "^samples [1-9][0-9]*, self [0-9]" &&
	grep -A3 "^<g><title>burn\$" s.svg | grep -q "^samples [1-9][0-9]*, self [1-9]" &&
	grep -q "CPU time sampled" s.svg &&
	! grep -qi "min\b\|max\b" s.svg &&
	callprof export -f plist -o s.plist s.cprof &&
	awk -F "\t" "\$1 == 2 { print \$2 }" s.plist >got &&
	awk -v t="$total" "BEGIN { printf \"%d.%06d\n\", t / 1000000, t % 1000000 }" >expect &&
	test_cmp expect got &&
	callprof report --plist s.cprof | grep -q "^    Time source: CPU time sampled at [0-9]* Hz, $samples samples"
'

test_expect_success 'filters: --focus, --hide, --min-percent keep the relations and the samples' '
	read samples total <proots &&
	callprof export -f json --focus=fib -o focus.json p.cprof &&
	check_cpu_json focus.json >got &&
	echo "$samples $total" >expect &&
	test_cmp expect got &&
	callprof export -f json --hide=fib -o hide.json p.cprof &&
	check_cpu_json hide.json >got &&
	test_cmp expect got &&
	python3 -c "
import json, sys
d = json.load(open(\"hide.json\"))
assert \"fib\" not in [d[\"functions\"][n[\"function\"]][\"name\"] for n in d[\"trees\"][0][\"nodes\"][1:]]" &&
	callprof export -f json --min-percent=20 -o minp.json p.cprof &&
	check_cpu_json minp.json >got &&
	test_cmp expect got
'

# spin4 calls only burn, which has no hooks: the samples of its contexts
# are its inclusive samples (its own, burn's and the kernel's).
test_expect_success 'report --lines: the samples of a function'"'"'s contexts, as the report counts them' '
	callprof report --flat --fields=samples,name s.cprof | awk "\$2 == \"spin4\" { print \$1 }" >expect &&
	callprof report --lines spin4 s.cprof >lines &&
	sed -n "s/^spin4: \([0-9]*\) samples .*/\1/p" lines >got &&
	test_cmp expect got &&
	awk "/^ *[0-9]+ +[0-9.]+ / { s += \$1 } END { printf \"%.0f\\n\", s }" lines >got &&
	test_cmp expect got
'

test_expect_success '--threads=each: per-thread trees keep the relations and add up to the merged one' '
	read samples total <proots &&
	callprof export -f json --threads=each -o each.json p.cprof &&
	check_cpu_json each.json >roots.each &&
	test $(wc -l <roots.each) = 3 &&
	awk "{ s += \$1; t += \$2 } END { printf \"%.0f %.0f\\n\", s, t }" roots.each >got &&
	echo "$samples $total" >expect &&
	test_cmp expect got &&
	callprof report --threads=each p.cprof >rep &&
	test $(grep -c "^== t-callsites" rep) = 3 &&
	grep "^ *calls  " rep >heads &&
	test_line_count = 3 heads &&
	! grep -q "min\|max" heads
'

test_expect_success 'diff: samples per side, a header naming the time source, --fail-if' '
	callprof diff s.cprof s2.cprof >diff &&
	grep -q "^# A: CPU time sampled at [0-9]* Hz" diff &&
	grep -Eq "^ *self(-cpu)?-delta .*  status   path$" diff &&
	callprof diff --fields=self-samples-a,self-samples-b,status s.cprof s2.cprof >samples &&
	grep -q "^ *self-samples-a  self-samples-b  status   path$" samples &&
	grep -q "  changed  main > run > spin4$" diff &&
	test_expect_code 3 callprof diff --fail-if "self>+50%" s.cprof s2.cprof >/dev/null 2>err &&
	# The worst path may be kernel time a loaded (or sanitized) run spent
	# elsewhere: any path, with the samples its times rest on.
	grep -q "^callprof: fail-if .self>+50%. holds for [0-9]* call paths*; worst: .*: self .*; samples [0-9]* -> [0-9]*)$" err &&
	# samples (CPU time), not total: preemption on a loaded machine is in total
	callprof diff --fields=samples-ratio,path s.cprof s2.cprof >ratio &&
	awk "/ main > run > spin4\$/ { r = \$1; sub(/x\$/, \"\", r); found = r > 1.5 } END { exit !found }" ratio &&
	test_expect_code 0 callprof diff --fail-if "self>+1%" --fail-if calls-changed s.cprof s.cprof >same &&
	grep -q "all the same: no change" same &&
	callprof diff t.cprof s.cprof >mixed &&
	grep -q "^# note: A.s times were clocked per call, B.s sampled (cpu mode)" mixed
'

# Two crafted cpu-mode profiles (tests/mkprofile.c; period 1 ms): f's self
# time rests on 3 then 6 samples (noise), g's on 100 then 200.
test_expect_success 'diff --fail-if: a time on fewer than 10 samples in A and B is noise' '
	for n in 1 2; do
		cat >c$n.txt <<-EOT &&
		meta mode=4 hz=1000 period=1000000 switches=1
		cmd ./prog
		thread tid=1 name=main
		node
		node parent=0 fn=0x1000 calls=1
		node parent=1 fn=0x2000 calls=1
		node parent=1 fn=0x3000 calls=1
		line node=2 ip=0x2010 samples=$((3 * n))
		line node=3 ip=0x3010 samples=$((100 * n))
		EOT
		"$CALLPROF_BUILD/tests/mkprofile" c$n.cprof <c$n.txt || return 1
	done &&
	callprof diff --min-percent=0 --fields=self-a,self-b,self-samples-a,self-samples-b,path \
		c1.cprof c2.cprof >crafted &&
	grep -q "^ *?3.00ms *?6.00ms *3 *6  .*+0x1000 > .*+0x2000$" crafted &&
	grep -q "^ *100.00ms *200.00ms *100 *200  .*+0x1000 > .*+0x3000$" crafted &&
	test_expect_code 3 callprof diff --min-percent=0 --fail-if "self>+50%" c1.cprof c2.cprof 2>err &&
	grep -q "holds for 1 call path; worst: .*samples 100 -> 200)" err
'

test_expect_success 'merge: cpu-mode inputs make a cpu-mode file with the samples; report A B agrees' '
	callprof merge -o m.cprof s.cprof s2.cprof 2>err &&
	callprof export -f json -o m.json m.cprof &&
	check_cpu_json m.json >got &&
	callprof export -f json -o ab.json s.cprof s2.cprof &&
	check_cpu_json ab.json >expect &&
	test_cmp expect got &&
	callprof export -f json -o s2.json s2.cprof &&
	check_cpu_json s2.json >r2 &&
	read a ta <roots && read b tb <r2 &&
	echo "$((a + b)) $((ta + tb))" >expect &&
	test_cmp expect got &&
	callprof report m.cprof >rep &&
	grep -q "^# time: CPU time sampled at" rep &&
	grep -q "calls-min .* samples  name$" rep &&
	callprof report --lines spin4 m.cprof | grep -q "^spin4: [0-9]* samples" &&
	callprof merge -o m2.cprof m.cprof s.cprof 2>err &&
	callprof export -f json m2.cprof >m2.json &&
	check_cpu_json m2.json >got &&
	echo "$((a + a + b)) $((ta + ta + tb))" >expect &&
	test_cmp expect got
'

test_expect_success 'merge: cpu mode and timing mode, or two sampling periods, are refused in one line' '
	test_expect_code 1 callprof merge -o bad.cprof s.cprof t.cprof 2>err &&
	test_line_count = 1 err &&
	grep -q "t.cprof.*another mode" err &&
	test_path_is_missing bad.cprof &&
	test_expect_code 1 callprof report s.cprof t.cprof 2>err &&
	grep -q "another mode" err &&
	sed "s/period=1000000/period=2000000/" c1.txt >c3.txt &&
	"$CALLPROF_BUILD/tests/mkprofile" c3.cprof <c3.txt &&
	test_expect_code 1 callprof merge -o bad.cprof c1.cprof c3.cprof 2>err &&
	test_line_count = 1 err &&
	grep -q "c3.cprof.* sampled every 2000000 ns .* every 1000000 ns" err &&
	test_path_is_missing bad.cprof
'

test_expect_success 'snapshots: callprof_dump() and callprof_reset() in cpu mode' '
	build_workload s-api.c &&
	cpu_record a.cprof ./t-api >out 2>err &&
	grep "^dump1=0$" err &&
	test_path_is_file a.cprof.dump1 &&
	for f in a.cprof d1.cprof d2.cprof a.cprof.dump1; do
		callprof export -f json -o snap.json $f &&
		check_cpu_json snap.json >/dev/null || return 1
	done &&
	callprof export -f folded -m calls d1.cprof | grep "^main;all;tick 3$" &&
	callprof export -f folded -m calls d2.cprof | grep "^main;all;tick 10$" &&
	cpu_record r.cprof ./t-api reset >out 2>err &&
	callprof export -f json -o r.json r.cprof &&
	check_cpu_json r.json >/dev/null &&
	callprof export -f folded -m calls r.cprof >actual &&
	grep "^main;reset;after 4$" actual &&
	! grep "^main;reset;before [1-9]" actual
'

# callprof dump of a cpu-mode process (LD_PRELOAD of libcallprof-cpu.so):
# the watcher, a process of its own, must see the samples' tables, which
# come from the arena for that; before they did, it died on them.
test_expect_success 'callprof dump PID of a cpu-mode process: a snapshot with its samples' '
	rm -f ready stop &&
	{ cpu_record d.cprof ./t-api serve ready >out 2>err & } &&
	wait_for ready &&
	pid=$(cat ready) &&
	callprof dump -o snap.cprof $pid >path &&
	touch stop &&
	wait &&
	callprof export -f json -o snap.json snap.cprof &&
	check_cpu_json snap.json >/dev/null &&
	callprof export -f folded -m calls snap.cprof | grep "^main;serve;tick [1-9]"
'

test_expect_success 'record --dump-on of a sampled process: the watcher writes the snapshot with its samples' '
	rm -f ready stop &&
	{ CALLPROF_DUMP_ON=12 cpu_record s.cprof ./t-api serve ready >out 2>err & } &&
	wait_for ready &&
	pid=$(cat ready) &&
	kill -USR2 $pid &&
	wait_for s.cprof.dump1 &&
	touch stop &&
	wait &&
	! ls s.cprof.dump1.tmp.* 2>/dev/null &&
	callprof export -f json -o s.json s.cprof.dump1 &&
	check_cpu_json s.json >/dev/null
'

test_expect_success 'callprof_reset() in a sampled program: the samples before it are gone' '
	build_workload s-resetcpu.c &&
	cpu_record reset.cprof ./t-resetcpu >out &&
	echo ok >expect &&
	test_cmp expect out &&
	callprof export -f folded -m samples reset.cprof >samples &&
	after=$(awk "/^main;burn_after /{ print \$NF }" samples) &&
	before=$(awk "/^main;burn_before /{ s += \$NF } END { printf \"%.0f\\n\", s }" samples) &&
	echo "before $before after $after" &&
	test "$after" -ge 100 &&
	test "$before" -le 2
'

test_done
