#!/bin/sh
# matrix: cc-opt
test_description='the vDSO has no file: its image goes into the profile, and its functions are named (record, record --sample, attach, merge)'
. "$(dirname "$0")/lib.sh"

# t-vdso spends most of its CPU time in the vDSO's clock_gettime and
# gettimeofday.  Without the image those samples were [unknown]+0x7f...
# and their time the caller's self time.  The kernel's x86-64 vDSO names
# them __vdso_clock_gettime and __vdso_gettimeofday (global; clock_gettime
# and gettimeofday are weak aliases there).

# flat P: the flat profile's "CALLS NAME" rows.
flat () {
	callprof report --flat --fields=calls,name --min-percent=0 "$1" | grep -v "^#" |
		awk '$1 ~ /^([0-9]+|-)$/' | sed "s/^ *//; s/  */ /"
}

# vdso_named P: P names the vDSO's clocks (as code without hooks, "-", or
# with the samples of a sampled profile), and nothing in P is unknown.
vdso_named () {
	flat "$1" >flat.out &&
	grep -E -x -e "(-|[0-9]+) __vdso_(clock_gettime|gettimeofday)" flat.out &&
	! grep "\[unknown\]" flat.out &&
	callprof report --flat --addresses --fields=calls,name "$1" >addr.out &&
	grep -E "__vdso_(clock_gettime|gettimeofday) \[\[vdso\]\+0x[0-9a-f]+\]" addr.out
}

if ! grep -q "\[vdso\]" /proc/self/maps
then
	test_skip 'the vDSO named' 'this machine maps no vDSO (vdso=0)'
	test_done
fi

test_expect_success 'setup' '
	build_workload s-vdso.c &&
	$CC $OPT $CP_TEST_CFLAGS -g -fno-omit-frame-pointer -Wall -o u-vdso "$WORKLOADS/s-vdso.c" \
		-I"$WORKLOADS"
'

test_expect_success 'record: the vDSO functions are named, under their caller, in every view' '
	callprof record -o p.cprof -- ./t-vdso 300 2>err &&
	vdso_named p.cprof &&
	callprof report --callers __vdso_clock_gettime --fields=calls,name p.cprof >callers &&
	grep "<- read_clocks\$" callers &&
	callprof report --lines read_clocks p.cprof >lines &&
	grep -E "in __vdso_(clock_gettime|gettimeofday) \(\[vdso\]\)\$" lines &&
	! grep "\[unknown\]" lines &&
	callprof export -f folded p.cprof >folded &&
	grep -E "^main;read_clocks;__vdso_(clock_gettime|gettimeofday) [0-9]+\$" folded &&
	callprof export -f json p.cprof >p.json &&
	python3 - p.json <<-\EOT
	import json, sys
	fns = json.load(open(sys.argv[1]))["functions"]
	v = [f for f in fns if f["name"].startswith("__vdso_")]
	assert v and all(f["module"] == "[vdso]" for f in v), fns
	EOT
'

test_expect_success 'merge keeps the image: the merged profile names them too' '
	callprof record -o q.cprof -- ./t-vdso 100 2>err &&
	callprof merge -q -o m.cprof p.cprof q.cprof &&
	vdso_named m.cprof &&
	callprof merge -q -o mm.cprof m.cprof q.cprof &&
	vdso_named mm.cprof
'

# report of several files folds each in and frees it: the vDSO's image,
# read once the first file is gone, must be the set of images' own copy.
test_expect_success 'report of several files names them: the image outlives its file' '
	callprof report --flat --fields=calls,name --min-percent=0 p.cprof q.cprof m.cprof |
		grep -v "^#" | awk "\$1 ~ /^([0-9]+|-)\$/" | sed "s/^ *//; s/  */ /" >flat.out &&
	grep -E -x -e "(-|[0-9]+) __vdso_(clock_gettime|gettimeofday)" flat.out &&
	! grep "\[unknown\]" flat.out &&
	callprof report --lines read_clocks p.cprof q.cprof >lines &&
	grep -E "in __vdso_(clock_gettime|gettimeofday) \(\[vdso\]\)\$" lines &&
	! grep "\[unknown\]" lines
'

test_expect_success 'record --sample of a program without hooks: named, and unwound through' '
	callprof record --sample -o s.cprof -- ./u-vdso 300 2>err &&
	vdso_named s.cprof &&
	callprof export -f folded s.cprof >folded &&
	# the unwind goes on past the vDSO (its CFI) to main
	grep -E "main;(.*;)?read_clocks;(.*;)?__vdso_(clock_gettime|gettimeofday) [0-9]+\$" folded
'

# The target runs for at most 5 s of CPU time, and is killed once attach is done.
if test "$CP_BUILD_KIND" = sleds
then
	test_skip 'attach: the runtime loaded into a running program writes the image too' \
		'not yet checked against a sleds build since attach patches sleds (issue 31: t0510 and t0516 are)'
else
test_expect_success 'attach: the runtime loaded into a running program writes the image too' '
	{ ./t-vdso 5000 >/dev/null 2>&1 & echo $! >target.pid; } &&
	pid=$(cat target.pid) &&
	sleep 0.3 &&
	{ callprof attach --duration 1 -o a.cprof $pid 2>attach.err || echo $? >attach.failed; } &&
	{ kill $pid 2>/dev/null; wait $pid; true; } &&
	cat attach.err &&
	test_path_is_missing attach.failed &&
	vdso_named a.cprof
'
fi

test_done
