#!/bin/sh
test_description='a loaded CPU moves no default figure: the weight is CPU time, preempted time is in no default, compensated cpu adds up'
. "$(dirname "$0")/lib.sh"

# A run on a loaded CPU (the workload pinned beside a busy loop on the first
# CPU this test may use) against one without the loop.  A single thread
# kept elapsed time as its weight, so the time preempted in a tiny
# function's hooks piled onto it: a compressor's LZ4_read16 came second
# at 14.35% self (perf: 0%), and diff of two identical runs said -22%
# everywhere (issue 30, item 18).  The relations below hold however
# loaded the machine is besides: they compare the two runs, never a
# duration.

# The first CPU this test may use (taskset to CPU 0 fails where the cpuset
# lacks it).
first_cpu () {
	sed -n "s/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p" /proc/self/status
}

# beside_hog CMD...: run CMD pinned to that CPU beside a busy loop pinned
# there too, which ends with CMD (or with this script, if not before: its
# pid is in hog.pid for hog_stop).
beside_hog () {
	{ taskset -c "$(first_cpu)" sh -c "while kill -0 \$PPID 2>/dev/null; do :; done" & } &&
	echo $! >"$TRASH_DIRECTORY/hog.pid" || return 1
	taskset -c "$(first_cpu)" "$@"
	_ret=$?
	hog_stop
	return $_ret
}

hog_stop () {
	test -f "$TRASH_DIRECTORY/hog.pid" && kill "$(cat "$TRASH_DIRECTORY/hog.pid")" 2>/dev/null
	rm -f "$TRASH_DIRECTORY/hog.pid"
}

# flat_share FILE FN: FN's self-cpu% in the flat profile FILE.
flat_share () {
	awk -v fn="$2" '$NF == fn && $1 != "-" { print $3; exit }' "$1"
}

# check_cpu_adds_up JSON: per node, own cpu = self - own wait - own
# inactive (never below 0), cpu = own cpu + the children's cpu, and no
# child's cpu above its parent's.
check_cpu_adds_up () {
	python3 - "$1" <<-\EOT
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["off_cpu_measured"], "no off-CPU split"
	for t in d["trees"]:
	    nodes = t["nodes"]
	    kids = {}
	    for i, n in enumerate(nodes[1:], 1):
	        kids.setdefault(n["parent"], []).append(i)
	    for i, n in enumerate(nodes):
	        own = n["self_ns"] - n["self_wait_ns"] - n["self_inactive_ns"]
	        assert own >= 0 and n["self_cpu_ns"] == own, (i, n)
	        k = kids.get(i, [])
	        assert n["cpu_ns"] == own + sum(nodes[c]["cpu_ns"] for c in k), (i, n)
	        assert all(nodes[c]["cpu_ns"] <= n["cpu_ns"] for c in k), (i, n)
	EOT
}

test_expect_success 'setup: t-compress pinned, alone and beside a busy loop' '
	build_workload s-compress.c &&
	taskset -c "$(first_cpu)" callprof record -o q.cprof -- ./t-compress 2>err.q &&
	beside_hog callprof record -o l.cprof -- ./t-compress 2>err.l
'

test_expect_success 'the loaded run was preempted a quarter of its time or more' '
	callprof export -f json -o l.json l.cprof &&
	python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))[\"trees\"][0][\"nodes\"][0]
assert 4 * r[\"inactive_ns\"] >= r[\"total_ns\"], r" l.json
'

test_expect_success 'report: CPU time weighs both runs, the banner says how much was preempted' '
	for r in q l
	do
		callprof report $r.cprof >$r.tree &&
		grep "^# weight: CPU time; the thread was also blocked .* and preempted [0-9.]*[mun]*s ([0-9]*%: the machine.s load, in no default weight)$" $r.tree &&
		grep "^ *calls  *cpu  *self-cpu  *cpu%" $r.tree || return 1
	done
'

# What a loaded CPU does to CPU time itself stays: the floor of diff (1%
# of the larger cpu) is below the sampling noise of the largest contexts,
# and each preemption leaves kernel samples (and more of the hooks'
# neighbours, read16 and compress) under the context it hit, by up to
# twice on this 2-core machine under load.  By elapsed time the loaded
# run took several times as long, every path with it.  So the relations:
# the same top function with about the same share, the tiny read16 below
# it and with about the same share in both runs (within 3.5 points in 40
# of 41 runs over the columns and sanitized, busy loops or not; sampling
# alone moves it 1.5; the 41st had compress's samples on read16's
# instructions around its hooks, read16 above compress too), the run's
# cpu and checksum's own cpu within a half of each other.  By elapsed
# time read16 carries the time preempted in its hooks (item 18; sanitized
# runs weighed by --sort=total: read16 20-41%, 11-14% by CPU time).
# The program without -finstrument-functions (perf --no-children) decides
# what may be asserted: checksum is on top with gcc and clang at -O0 and
# -O2, ASan or not (60-73%; s-compress's checksum had 8 rounds, and gcc
# -O0 put compress on top, 51% against 45%).  Without ASan read16 costs
# 0-5% against compress's 27-37%.  With ASan read16 costs 5% against
# 19% for its two shadow checks, and the call sequences around its hooks
# are its own instructions too (half of its samples in perf of the
# instrumented program, whose shares the report matches within 2
# points): read16 and compress come out level, either one first, so that
# order is not asserted there.
test_expect_success 'flat: the same top function with about the same share; read16 stays small' '
	for r in q l
	do
		callprof report --flat $r.cprof >$r.flat &&
		grep "^ *calls  *self-cpu  *self-cpu%" $r.flat &&
		sed -n "/^ *calls /,\$p" $r.flat | awk "NR == 2 { print \$NF }" >$r.top &&
		echo checksum >expect &&
		test_cmp expect $r.top &&
		# read16 below compress in the quiet run only: beside the busy
		# loop the hooks slow down (the profiler own share 60.6%
		# against 32.8%, make check, 2026-11-30) and compress, whose
		# own code lies between 15.7 million hook calls, fell to 5.29%
		# (quiet 19.20%) with read16 at 6.41 (6.77): read16 did not
		# move, which is the claim, checked below
		order=1 &&
		{ ! sanitized address && test $r = q || order=0; } &&
		awk -v r="$(flat_share $r.flat read16)" -v c="$(flat_share $r.flat compress)" \
			-v k="$(flat_share $r.flat checksum)" -v order=$order \
			"BEGIN { exit !(r < k && (!order || r < c)) }" ||
			return 1
	done &&
	a=$(flat_share q.flat checksum) && b=$(flat_share l.flat checksum) &&
	awk -v a="$a" -v b="$b" "BEGIN { d = a - b; exit !(d < 15 && d > -15) }" &&
	a=$(flat_share q.flat read16) && b=$(flat_share l.flat read16) &&
	awk -v a="$a" -v b="$b" "BEGIN { d = a - b; exit !(d < 6 && d > -6) }"
'

# The run's CPU time itself may move with the load: on a machine whose two
# CPUs share a core, a busy neighbour slows each instruction (CI, sanitized:
# 683 ms quiet against 458 ms beside the loop, the quiet run most likely
# beside another test on its core's twin).  So the header must give each run's own CPU time,
# and checksum's change must be the run's change: its share holds.
test_expect_success 'diff: CPU time weighs its default view; the work does not move with the load' '
	callprof diff q.cprof l.cprof >d &&
	grep "^# cpu: .* weight: CPU time (blocked and preempted time left out)" d &&
	grep "^ *self-cpu-delta  *self-cpu-ratio  *self-cpu-a  *self-cpu-b  *calls-delta  *cpu-delta " d &&
	sed -n "s/^# cpu: .* (.*, \([0-9.]*\)x); weight.*/\1/p" d >ratio &&
	callprof export -f json -o q.json q.cprof &&
	python3 -c "
import json, sys
cpu = [sum(t[\"nodes\"][0][\"cpu_ns\"] for t in json.load(open(f))[\"trees\"])
       for f in sys.argv[1:]]
print(\"%.2f\" % (cpu[1] / cpu[0]))" q.json l.json >want &&
	test_cmp want ratio &&
	callprof diff --all --fields=self-cpu-ratio,path q.cprof l.cprof >rows &&
	awk -v run="$(cat ratio)" "\$NF == \"checksum\" && \$(NF - 1) == \">\" {
		r = \$1; sub(/x\$/, \"\", r); r /= run; n++; bad = !(r > 0.67 && r < 1.5)
	} END { exit bad || !n }" rows
'

# --time=clock beside the busy loop: the hooks' cost was taken off the
# self time of contexts that were mostly preempted, and the thread's cpu
# came out below its main's (issue 30, item 24).
test_expect_success 'clock: compensated cpu adds up over the tree on a loaded CPU' '
	beside_hog callprof record --time=clock -o c.cprof -- ./t-compress 40 2>err.c &&
	callprof report c.cprof >c.report &&
	grep -q "^# overhead compensated:" c.report &&
	callprof export -f json -o c.json c.cprof &&
	check_cpu_adds_up c.json &&
	callprof export -f json --threads=each -o ce.json c.cprof &&
	check_cpu_adds_up ce.json
'

test_expect_success 'cleanup: no busy loop left' '
	hog_stop
'

test_done
