#!/bin/sh
test_description='off-CPU time (wait, inactive, cpu) and sampled profiles in every view and export; report --lines'
. "$(dirname "$0")/lib.sh"

# Profiles made by hand (tests/mkprofile.c): nothing recorded here can
# give off-CPU time or samples on demand, and hand-made figures have
# exact expected outputs.  One tick is one nanosecond.
mkprofile () {
	"$CALLPROF_BUILD/tests/mkprofile" "$@"
}

# No "#" banner lines (the start date depends on the time zone).
unbanner () {
	sed "/^#/d"
}

# Two threads; wait, inactive and switches are exclusive per record; the
# 0x200 context of main has a second call site; worker's 0x200 waited
# more than its total (its total is lifted to its off-CPU time: cpu 0,
# and its parent's cpu still adds up).
test_expect_success 'setup: profiles with the off-CPU split measured, not measured, refused' '
	cat >split.txt <<-\EOF &&
	meta switches=1 duration=1500
	cmd ./prog
	thread tid=1 name=main cpu=700
	node ticks=1000 wait=50
	node parent=0 fn=0x100 calls=1 ticks=900 wait=100 inactive=20 vol=1
	node parent=1 fn=0x200 calls=4 ticks=400 wait=150 inactive=10 vol=2 invol=1 site=0x1010
	node parent=1 fn=0x200 calls=2 ticks=200 wait=60 vol=1 site=0x1020 flags=2
	node parent=1 fn=0x300 calls=1 ticks=100 inactive=30 invol=4
	thread tid=2 name=worker cpu=100
	node ticks=500
	node parent=0 fn=0x100 calls=1 ticks=450 wait=40
	node parent=1 fn=0x200 calls=3 ticks=300 wait=290 inactive=20 site=0x1010
	EOF
	mkprofile s.cprof <split.txt &&
	sed "s/switches=1/switches=0/" split.txt | mkprofile off.cprof &&
	sed "s/switches=1/switches=3 errno=13/" split.txt | mkprofile refused.cprof &&
	sed "s/switches=1/switches=2 failed=3 switch_lost=9/" split.txt | mkprofile partial.cprof
'

test_expect_success 'tree: cpu, wait and inactive by default, root cpu next to the kernel'"'"'s' '
	callprof report --min-percent=0 s.cprof >out &&
	grep -q "^# off-CPU time measured: wait (blocked) and inactive (preempted) per context" out &&
	unbanner <out >actual &&
	test_cmp "$EXPECT/offcpu.tree" actual &&
	callprof report --threads=each s.cprof | unbanner >actual &&
	test_cmp "$EXPECT/offcpu.tree-each" actual
'

test_expect_success 'flat: self time split by default; callees with the new fields' '
	callprof report --flat s.cprof | unbanner >actual &&
	test_cmp "$EXPECT/offcpu.flat" actual &&
	callprof report --callees "[unknown]+0x100" --fields=calls,total,cpu,wait,inactive,self-cpu,name \
		s.cprof >actual &&
	test_cmp "$EXPECT/offcpu.callees" actual &&
	callprof report --fields=calls,cpu,wait,self-switches-vol,switches-invol,name \
		--threads=each s.cprof >actual &&
	grep -q "^           6       380ns       210ns          3          1    \[unknown\]+0x200$" actual &&
	callprof report --srcline --fields=calls,cpu,wait,name s.cprof >actual &&
	test $(grep -c "^           [72]           -           -  -  *@ \[unknown\]+0x200$" actual) = 2
'

test_expect_success 'not measured: the columns of before; asked for, they show "-"' '
	callprof report off.cprof >out &&
	! grep -q "off-CPU" out &&
	grep -q "^       calls       total        self   total%         avg  name$" out &&
	callprof report --flat --fields=calls,cpu,self-wait,name off.cprof >actual &&
	grep -q "^           9           -           -  \[unknown\]+0x200$" actual
'

test_expect_success 'banner: refused with the reason, partial, records lost' '
	callprof report refused.cprof >out &&
	grep -q "^# off-CPU time unavailable: perf_event_open refused: Permission denied; see callprof-record(1)$" out &&
	! grep -q "  cpu  " out &&
	callprof report partial.cprof >out &&
	grep -q "^# off-CPU time measured partially: 3 threads without" out &&
	grep -q "^# warning: 9 context-switch records lost" out &&
	grep -q "  cpu  " out
'

test_expect_success 'folded -m cpu|wait|inactive: the exclusive parts; refused without the split' '
	for m in cpu wait inactive
	do
		echo $m &&
		callprof export -f folded -m $m s.cprof || return 1
	done >actual &&
	test_cmp "$EXPECT/offcpu.folded" actual &&
	test_must_fail callprof export -f folded -m wait off.cprof 2>err &&
	grep -q "has no off-CPU times" err
'

test_expect_success 'json: cpu = total - wait - inactive (never below 0) for every node; the state' '
	callprof export -f json -o s.json s.cprof &&
	callprof export -f json -o off.json off.cprof &&
	python3 - s.json off.json <<-\EOT &&
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["off_cpu_measured"] is True
	assert d["processes"][0]["off_cpu"]["state"] == "measured"
	assert d["trees"][0]["kernel_cpu_ns"] == 800
	for t in d["trees"]:
	    for n in t["nodes"]:
	        off = n["wait_ns"] + n["inactive_ns"]
	        assert n["cpu_ns"] == n["total_ns"] - off >= 0, n
	        assert n["self_cpu_ns"] == n["self_ns"] - n["self_wait_ns"] - n["self_inactive_ns"] >= 0
	        kids = [k for k in t["nodes"] if k["parent"] is not None and t["nodes"][k["parent"]] is n]
	        assert n["cpu_ns"] == n["self_cpu_ns"] + sum(k["cpu_ns"] for k in kids), n
	        assert n["wait_ns"] == n["self_wait_ns"] + sum(k["wait_ns"] for k in kids)
	        assert n["switches_vol"] == n["self_switches_vol"] + sum(k["switches_vol"] for k in kids)
	assert d["trees"][0]["nodes"][0]["wait_ns"] == 690
	o = json.load(open(sys.argv[2]))
	assert o["off_cpu_measured"] is False and "cpu_ns" not in o["trees"][0]["nodes"][1]
	assert o["processes"][0]["off_cpu"]["state"] == "off"
	EOT
	callprof export --threads=each -f json -o each.json s.cprof &&
	python3 -c "import json, sys; n = json.load(open(sys.argv[1]))[\"trees\"][1][\"nodes\"][2]; assert n[\"cpu_ns\"] == 0 and n[\"wait_ns\"] + n[\"inactive_ns\"] == n[\"total_ns\"] == 310, n" each.json
'

test_expect_success 'pprof: sample types cpu, wait, inactive; their sums are the folded ones' '
	callprof export -f pprof -o s.pb.gz s.cprof &&
	gzip -dc s.pb.gz >s.pb &&
	protoc --decode=perftools.profiles.Profile --proto_path="$TEST_DIRECTORY/../../proto" \
		"$TEST_DIRECTORY/../../proto/profile.proto" <s.pb >s.pb.txt &&
	for t in calls self cpu wait inactive
	do
		grep -q "^string_table: \"$t\"$" s.pb.txt || return 1
	done &&
	awk "/^sample \{/ { k = 0 } /^  value: / { s[k++] += \$2 } END { print s[0], s[3], s[4] }" \
		s.pb.txt >got &&
	echo "630 640 80" >expect &&
	test_cmp expect got
'

test_expect_success 'callgrind: events Cpu Wait Inactive; callgrind_annotate totals' '
	callprof export -f callgrind -o s.cg s.cprof &&
	grep -q "^events: Cpu Time Calls Wait Inactive$" s.cg &&
	callgrind_annotate s.cg >annotated 2>err &&
	test_must_be_empty err &&
	grep "PROGRAM TOTALS" annotated | sed "s/ ([^)]*)//g" | tr -s " " >got &&
	echo "630 1,350 12 640 80 PROGRAM TOTALS" >expect &&
	test_cmp expect got
'

test_expect_success 'speedscope: a profile per part, valid, weights the folded sums' '
	npm_install &&
	callprof export -f speedscope -o s.speedscope.json s.cprof &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-speedscope.js" \
		s.speedscope.json >got &&
	cat >expect <<-\EOF &&
	all threads 1350
	all threads: cpu 630
	all threads: wait 640
	all threads: inactive 80
	EOF
	test_cmp expect got
'

test_expect_success 'svg: the tooltip splits the total' '
	callprof export -f svg -o s.svg s.cprof &&
	xmllint --noout s.svg &&
	grep -q "^cpu 630ns, wait 640ns, inactive 80ns</title>" s.svg
'

test_expect_success 'html: the page loads in chromium with the split; tables have its columns' '
	{ command -v chromium >/dev/null ||
	  { echo "chromium is needed (tools/install-deps --tests)"; false; }; } &&
	callprof export -f html -o s.html s.cprof &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-html.js" --html s.html \
		--json s.json &&
	grep -q "\"split\":true" s.html &&
	grep -q "\"self_wait\":\[" s.html &&
	grep -q "title: .Self wait." s.html
'

test_expect_success 'plist: the same records with and without the split' '
	callprof export -f plist s.cprof >with &&
	callprof export -f plist off.cprof >without &&
	test_cmp without with
'

test_expect_success 'merge: exclusive values and switch counts survive, twice the input' '
	callprof merge -o m.cprof s.cprof s.cprof 2>err &&
	callprof report --fields=calls,wait,self-wait,inactive,switches-vol,self-switches-invol,name \
		m.cprof >actual &&
	cat >expect <<-\EOF &&
	       calls        wait   self-wait    inactive     blocks  self-prmt  name
	           4      1.28us       280ns       160ns          8          0  [unknown]+0x100
	          18      1.00us      1.00us        60ns          6          2    [unknown]+0x200
	           2         0ns         0ns        60ns          0          8    [unknown]+0x300
	EOF
	test_cmp expect actual &&
	callprof report m.cprof | grep -q "^# off-CPU time measured: " &&
	callprof merge -o mixed.cprof s.cprof off.cprof 2>err &&
	callprof report mixed.cprof >out &&
	grep -q "^# off-CPU time measured partially: 2 threads without" out
'

test_expect_success 'sampled profile: banner, samples column, no min/max, no compensation' '
	cat >sampled.txt <<-\EOF &&
	meta mode=3 hz=997 period=1003009 samples=30 samples_lost=4 sample_flags=2 duration=30000000
	cmd ./prog
	thread tid=1 name=main
	node calls=30 ticks=30090270
	node parent=0 fn=0x100 calls=30 ticks=30090270
	node parent=1 fn=0x200 calls=12 ticks=12036108
	EOF
	mkprofile m3.cprof <sampled.txt &&
	callprof report m3.cprof >out &&
	grep -q "^# sampled: 30 samples at 997 Hz (one per 1.00ms), call stacks unwound with DWARF CFI; times are estimates, counts are samples$" out &&
	grep -q "^# warning: 4 samples lost" out &&
	! grep -q "compensat" out &&
	grep -q "^     samples       total        self" out &&
	callprof report --flat --fields=calls,total,min,max,name m3.cprof >actual &&
	cat >expect <<-\EOF &&
	     samples       total         min         max  name
	          30     30.09ms           -           -  [unknown]+0x100
	          12     12.04ms           -           -  [unknown]+0x200
	EOF
	test_cmp expect actual
'

test_expect_success 'sampled profile: every export works' '
	callprof export -f folded -m calls m3.cprof >folded &&
	grep -q "^\[unknown\]+0x100;\[unknown\]+0x200 12$" folded &&
	callprof export -f json m3.cprof >m3.json &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); p = d[\"processes\"][0]; assert p[\"mode\"] == \"sampled\" and p[\"sampling\"][\"unwinding\"] == \"dwarf\", p" m3.json &&
	callprof export -f callgrind -o m3.cg m3.cprof &&
	grep -q "^events: Time Samples$" m3.cg &&
	callgrind_annotate m3.cg >/dev/null &&
	callprof export -f pprof -o m3.pb.gz m3.cprof &&
	gzip -dc m3.pb.gz | protoc --decode=perftools.profiles.Profile \
		--proto_path="$TEST_DIRECTORY/../../proto" "$TEST_DIRECTORY/../../proto/profile.proto" >m3.txt &&
	grep -q "^string_table: \"samples\"$" m3.txt &&
	callprof export -f speedscope -o m3.speedscope.json m3.cprof &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-speedscope.js" m3.speedscope.json &&
	callprof export -f svg -o m3.svg m3.cprof &&
	xmllint --noout m3.svg &&
	grep -q "^samples 12, total" m3.svg &&
	callprof export -f html -o m3.html m3.cprof &&
	grep -q "\"sampled\":true" m3.html &&
	callprof export -f plist m3.cprof >m3.plist &&
	test -s m3.plist
'

# Samples of an instrumented program on real addresses: two lines of
# work(), the helper it calls (no hooks) and libc's qsort, from two call
# paths (main's thread and a worker's).  The addresses of the lines come
# from addr2line, the reference the symbolizer is checked against.
test_expect_success 'setup: a LINES profile of a real program' '
	build_workload s-lines.c -no-pie &&
	libc=$(ldd t-lines | awk "/libc.so/ { print \$3 }") &&
	test -f "$libc" &&
	addr () { nm t-lines | awk -v f="$1" "\$3 == f { print \"0x\" \$1 }"; } &&
	work=$(addr work) && main=$(addr main) && helper=$(addr helper) &&
	size=$(nm -S t-lines | awk "\$4 == \"work\" { print \"0x\" \$2 }") &&
	qsort=$(nm -D --defined-only "$libc" | awk "\$3 ~ /^qsort(@|\$)/ { print \"0x\" \$1; exit }") &&
	test -n "$work" && test -n "$helper" && test -n "$size" && test -n "$qsort" &&
	a=$(grep -n "LINE-A" "$WORKLOADS/s-lines.c" | cut -d: -f1) &&
	b=$(grep -n "LINE-B" "$WORKLOADS/s-lines.c" | cut -d: -f1) &&
	seq $((work)) $((work + size - 1)) | awk "{ printf \"0x%x\\n\", \$1 }" >addrs &&
	addr2line -e t-lines $(cat addrs) | sed "s/.*:\([0-9]*\).*/\1/" | paste addrs - >lines &&
	ipa=$(awk -v l=$a "\$2 == l { print \$1; exit }" lines) &&
	ipb=$(awk -v l=$b "\$2 == l { print \$1; exit }" lines) &&
	test -n "$ipa" && test -n "$ipb" &&
	cat >lines.txt <<-EOF &&
	meta hz=1000 period=1000000 samples=62 sample_flags=4 duration=5000000
	cmd ./t-lines
	module $PWD/t-lines
	module $libc bias=0x7f0000000000
	thread tid=10 name=main
	node ticks=5000000
	node parent=0 fn=$main calls=1 ticks=4000000
	node parent=1 fn=$work calls=2 ticks=3000000
	thread tid=11 name=worker
	node ticks=1000000
	node parent=0 fn=$work calls=1 ticks=900000
	line node=2 ip=$ipa samples=20
	line node=2 ip=$ipb samples=10
	line node=2 ip=$helper samples=5
	line node=2 ip=$(printf 0x%x $((0x7f0000000000 + qsort + 4))) samples=3
	line node=4 ip=$ipa samples=7
	line node=1 ip=$main samples=2
	EOF
	mkprofile l.cprof <lines.txt
'

test_expect_success 'report --lines: inside work by line with the source, outside by function' '
	callprof report --lines work l.cprof >out &&
	grep -q "^# sampled lines: 62 samples at 1000 Hz (one per 1.00ms)" out &&
	unbanner <out >actual &&
	test_cmp "$EXPECT/lines.work" actual &&
	callprof report --lines work --threads=each l.cprof | unbanner >actual &&
	test_cmp "$EXPECT/lines.work-each" actual
'

test_expect_success 'report --lines: no LINES, unknown function; json lines per node' '
	test_must_fail callprof report --lines work s.cprof 2>err &&
	echo "callprof: error: profile '"'"'s.cprof'"'"' has no sampled lines: record with --time=cpu (the default) or --sample" >expect &&
	test_cmp expect err &&
	test_must_fail callprof report --lines nosuch l.cprof 2>err &&
	echo "callprof: error: no function named '"'"'nosuch'"'"' in profile '"'"'l.cprof'"'"'" >expect &&
	test_cmp expect err &&
	callprof export -f json l.cprof >l.json &&
	python3 - l.json "$(grep -n LINE-A "$WORKLOADS/s-lines.c" | cut -d: -f1)" <<-\EOT
	import json, sys
	d = json.load(open(sys.argv[1]))
	fns = [f["name"] for f in d["functions"]]
	got = {}
	for t in d["trees"]:
	    for n in t["nodes"]:
	        if n["function"] is not None and fns[n["function"]] == "work":
	            for l in n.get("lines", []):
	                key = l["function"], l["line"] if l["function"] == "work" else None
	                got[key] = got.get(key, 0) + l["samples"]
	assert got[("work", int(sys.argv[2]))] == 27, got
	assert got[("qsort", None)] == 3 and got[("helper", None)] == 5, got
	assert sum(got.values()) == 45, got
	EOT
'

test_done
