#!/bin/sh
# matrix: cc-opt
test_description='the weight: CPU time wherever the profile has it, in every view and export; --sort, -m, diff --fields and --fail-if take every metric'
. "$(dirname "$0")/lib.sh"

# The first row of the tree below its column titles: its name.
top_of_tree () {
	sed -n "/^ *calls /{n;p;q}" "$1" | awk "{ print \$NF }"
}

# The first row of a flat profile whose calls column is a number.
top_of_flat () {
	sed -n "/^ *calls /,\$p" "$1" | awk "NR > 1 && \$1 != \"-\" { print \$NF; exit }"
}

test_expect_success 'setup: four pool threads idle while main crunches' '
	build_workload s-pool.c &&
	callprof record -o p.cprof -- ./t-pool 2>err &&
	callprof record -o p0.cprof -- ./t-pool 0 2>err0
'

test_expect_success 'report: weighed by CPU time, and the banner says why and how to change it' '
	callprof report p.cprof >tree &&
	grep "^# weight: CPU time; the threads were also blocked [0-9.]*[mun]*s ([0-9]*% of their time: the wait column; --sort=wait weighs by it, --sort=total by elapsed time) and preempted [0-9.]*[mun]*s ([0-9]*%: the machine.s load, in no default weight)$" tree &&
	grep -q "^# contexts below 0.5% of their tree'"'"'s cpu" tree &&
	grep -q "^ *calls  *cpu  *self-cpu  *cpu%  *total  *wait  *inactive" tree &&
	test "$(top_of_tree tree)" = main &&
	grep -q " crunch$" tree &&
	! grep -q " idle_wait$" tree &&
	callprof report --flat p.cprof >flat &&
	grep -q "^ *calls  *self-cpu  *self-cpu%  *cpu  *cpu%" flat &&
	test "$(top_of_flat flat)" = crunch
'

test_expect_success 'report --sort=total: elapsed time weighs, and the idle pool leads' '
	callprof report --sort=total p.cprof >tree &&
	! grep -q "^# weight:" tree &&
	grep -q "^ *calls  *total  *cpu  *wait  *inactive  *self  *total%" tree &&
	grep -q " idle_wait$" tree &&
	test "$(top_of_tree tree)" = pool_thread &&
	callprof report --flat --sort=self p.cprof >flat &&
	test "$(top_of_flat flat)" = idle_wait &&
	callprof report --flat --sort=self-wait --fields=calls,self-wait,name p.cprof >flat &&
	test "$(top_of_flat flat)" = idle_wait
'

# The name column starts at character 22 (cpu 10 wide, cpu% 7, two blanks
# after each): a top-level context has no indentation there.
test_expect_success 'percentages are shares of the weight: the top-level contexts make 100' '
	callprof report --fields=cpu,percent,name --min-percent=0 p.cprof >cpu &&
	head -n 1 cpu | grep -q "cpu%" &&
	awk "NR > 1 && substr(\$0, 22, 1) != \" \" { p = \$2; sub(/^[?~]/, \"\", p); s += p }
		END { exit !(s > 99.5 && s < 100.5) }" cpu &&
	awk "\$NF == \"main\" { exit !(\$2 > 90) }" cpu &&
	callprof report --fields=total,percent,name --sort=total --min-percent=0 p.cprof >tot &&
	head -n 1 tot | grep -q "total%" &&
	awk "\$NF == \"main\" { exit !(\$2 < 50) }" tot
'

test_expect_success 'every metric sorts; a wrong one is listed; a missing one names the profile' '
	for m in calls self total cpu wait inactive samples self-cpu self-wait self-inactive self-samples name
	do
		callprof report --flat --sort=$m p.cprof >/dev/null || return 1
	done &&
	test_expect_code 129 callprof report --sort=bogus p.cprof 2>err &&
	grep -q "one of: calls, self, total, cpu, wait, inactive, samples, self-cpu, self-wait, self-inactive, self-samples, name" err &&
	callprof record --time=none -o c.cprof -- ./t-pool 2>/dev/null &&
	test_expect_code 1 callprof report --sort=cpu c.cprof 2>err &&
	test_line_count = 1 err &&
	grep -q "^callprof: error: --sort cpu: profile '"'"'c.cprof'"'"' has no times .*; it has: calls$" err
'

# svg_share NAME SVG: the widest frame named NAME as a share of the widest
# frame (the root), 0 when there is none
svg_share () {
	python3 - "$1" "$2" <<-\EOT
	import re, sys
	w = {}
	for m in re.finditer(r'<g><title>([^\n]*)\n.*?<rect [^>]*width="([0-9.]+)"', open(sys.argv[2]).read(), re.S):
	    w[m.group(1)] = max(w.get(m.group(1), 0.0), float(m.group(2)))
	print("%.4f" % (w.get(sys.argv[1], 0.0) / max(w.values())))
	EOT
}

# By CPU time the idle pool is (nearly) nothing: a sample may land in its
# blocking read on a loaded machine, a frame a pixel wide; by total time
# it is most of the run.
test_expect_success 'svg: widths and caption follow the weight; -m changes them' '
	callprof export -f svg -o p.svg p.cprof &&
	xmllint --noout p.svg &&
	grep -q "width: CPU time sampled" p.svg &&
	share=$(svg_share idle_wait p.svg) &&
	awk -v s="$share" "BEGIN { exit !(s < 0.01) }" &&
	callprof export -f svg -m total -o t.svg p.cprof &&
	grep -q "width: total time" t.svg &&
	share=$(svg_share idle_wait t.svg) &&
	awk -v s="$share" "BEGIN { exit !(s > 0.5) }" &&
	callprof export -f svg -m wait -o w.svg p.cprof &&
	grep -q "width: wait (blocked) time" w.svg
'

test_expect_success 'export --min-percent folds by the weight' '
	callprof export -f folded --min-percent=1 p.cprof >cpu.folded &&
	! grep -q "idle_wait" cpu.folded &&
	grep -q "^main;crunch [1-9][0-9]*$" cpu.folded &&
	callprof export -f folded -m calls --min-percent=1 p.cprof >calls.folded &&
	grep -q "^pool_thread;idle_wait 4$" calls.folded &&
	callprof export -f svg -m total --min-percent=1 -o t1.svg p.cprof &&
	grep -q "^<g><title>idle_wait$" t1.svg
'

test_expect_success 'speedscope opens the weight'"'"'s profile; html carries it' '
	callprof export -f speedscope -o p.ss.json p.cprof &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); p = d[\"profiles\"][d[\"activeProfileIndex\"]]; assert p[\"name\"].endswith(\": cpu\"), p[\"name\"]" p.ss.json &&
	callprof export -f speedscope -m calls -o c.ss.json p.cprof &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); p = d[\"profiles\"][d[\"activeProfileIndex\"]]; assert p[\"name\"].endswith(\": calls\") and p[\"unit\"] == \"none\", p[\"name\"]" c.ss.json &&
	callprof export -f html -o p.html p.cprof &&
	grep -q "\"weight\":\"cpu\"" p.html &&
	callprof export -f html -m total -o t.html p.cprof &&
	grep -q "\"weight\":\"total\"" t.html &&
	test_expect_code 129 callprof export -f json -m cpu p.cprof 2>err &&
	grep -q "metric is for -f folded, callgrind, speedscope, pprof, svg and html" err
'

# The real consumers open what report shows first (issue 30, item 17): by
# elapsed time the four idle pool threads are 80% of the run, and pprof
# -top, callgrind_annotate and a flame graph of the default folded output
# put them first.  pprof (and speedscope) open default_sample_type, other
# readers the first type; callgrind_annotate sorts by the first event.
test_expect_success 'pprof: the default and first sample type is cpu; by it main leads, the pool has nothing' '
	callprof export -f pprof -o p.pb.gz p.cprof &&
	pprof_sums p.pb.gz >/dev/null &&
	python3 - p.pb.gz.txt <<-\EOT
	import re, sys
	txt = open(sys.argv[1]).read()
	strs = [eval(s) for s in re.findall(r"^string_table: (\".*\")$", txt, re.M)]
	types = [strs[int(t)] for t in re.findall(r"^sample_type \{\n  type: (\d+)", txt, re.M)]
	dflt = strs[int(re.search(r"^default_sample_type: (\d+)$", txt, re.M).group(1))]
	assert types[0] == dflt == "cpu", (types, dflt)
	fname = {}
	for f in re.findall(r"^function \{\n  id: (\d+)\n  name: (\d+)", txt, re.M):
	    fname[f[0]] = strs[int(f[1])]
	# pprof -top: the flat self figures of the default type, per leaf.
	flat = {}
	for smp in re.findall(r"^sample \{\n(.*?)^\}", txt, re.M | re.S):
	    locs = re.findall(r"^  location_id: (\d+)$", smp, re.M)
	    vals = [int(v) for v in re.findall(r"^  value: (-?\d+)$", smp, re.M)]
	    leaf = fname[locs[0]]
	    flat[leaf] = flat.get(leaf, 0) + vals[0]
	top = max(flat, key=flat.get)
	assert top == "crunch", flat
	assert flat.get("idle_wait", 0) * 100 < sum(flat.values()), flat
	EOT
'

test_expect_success 'callgrind: the first event is Cpu; callgrind_annotate lists crunch first, not the idle pool' '
	callprof export -f callgrind -o p.cg p.cprof &&
	grep -q "^events: Cpu " p.cg &&
	callgrind_annotate p.cg >ann &&
	sed -n "/file:function\$/,\$p" ann | sed -n 3p | grep -q ":crunch " &&
	! sed -n "/file:function\$/,/^-- Auto/p" ann | grep ":idle_wait " | grep -v "^ *0 "
'

test_expect_success 'folded: the default value is self cpu; a flame graph of it is main and crunch' '
	callprof export -f folded p.cprof >f &&
	callprof export -f folded -m self-cpu p.cprof >fc &&
	test_cmp f fc &&
	awk "{ split(\$1, fr, \";\"); top[fr[1]] += \$NF } END { for (k in top) print top[k], k }" f |
		sort -rn >tops &&
	test "$(sed -n "1s/.* //p" tops)" = main &&
	test "$(awk "\$2 == \"pool_thread\" { print \$1 }" tops)" -le "$(awk "NR == 1 { print int(\$1 / 100) }" tops)"
'

# The diff's "before" crunches nothing: the CPU time a fixed piece of work
# takes varies with the machine's load (a busy sibling hyperthread, steal
# time), so a run with twice the work can show as little as 1.2x the CPU
# time of the other; from none to some is a change no load can hide.
test_expect_success 'diff: ordered by CPU time, its columns by default; any metric in --fields and --fail-if' '
	callprof diff p0.cprof p.cprof >d &&
	grep -q "^# cpu: .* weight: CPU time" d &&
	grep -q "^# time changes below 1% of the larger cpu" d &&
	grep -q "^ *self-cpu-delta  *self-cpu-ratio  *self-cpu-a  *self-cpu-b  *calls-delta  *cpu-delta  *status  *path$" d &&
	sed -n "/self-cpu-delta/{n;p;q}" d | grep -q " main > crunch$" &&
	callprof diff --fields=wait-a,wait-b,self-wait-delta,status,path --all p0.cprof p.cprof >w &&
	grep -q " pool_thread > idle_wait$" w &&
	test_expect_code 3 callprof diff --fail-if "self-cpu>+20%" p0.cprof p.cprof >/dev/null 2>err &&
	grep -q "^callprof: fail-if '"'"'self-cpu>+20%'"'"' holds for [0-9]* call paths\?; worst: main[ :]" err &&
	test_expect_code 129 callprof diff --fields=cpu-x p0.cprof p.cprof 2>err &&
	grep -q "METRIC-a, METRIC-b, METRIC-delta, METRIC-ratio" err &&
	test_expect_code 1 callprof diff --fail-if "cpu>+10%" p.cprof c.cprof 2>err &&
	test_line_count = 1 err &&
	grep -q "c.cprof" err
'

test_done
