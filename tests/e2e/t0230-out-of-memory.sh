#!/bin/sh
test_description='memory runs out: the tree stops growing, the program goes on, every call is counted'
. "$(dirname "$0")/lib.sh"

workloads_without_asan "ASan reserves terabytes of shadow address space, beyond any ulimit -v"

# 2,222,222 calls on as many distinct paths need about 180 MB of nodes; the
# program gets an address-space limit of 100 MB (record itself does not).
test_expect_success 'under an address-space limit: recorded + lost = all calls, the report says so' '
	build_workload s-manypaths.c &&
	callprof record -o oom.cprof -- sh -c "ulimit -v 100000 && exec ./t-manypaths" \
		>out 2>err &&
	grep -q "^callprof: out of memory: stopped recording new call paths" err &&
	callprof export -f folded -m calls oom.cprof >folded &&
	recorded=$(awk "{ n += \$NF } END { printf \"%.0f\\n\", n }" folded) &&
	callprof report oom.cprof >report &&
	lost=$(sed -n "s/^# warning: incomplete: \([0-9]*\) calls in unrecorded paths.*/\1/p" report) &&
	echo "recorded $recorded, lost $lost" &&
	test "$lost" -gt 0 &&
	test $((recorded + lost)) -eq 2222222
'

# The runtime takes address space as its trees grow (runtime/arena.c), not
# gigabytes up front: a program that lowers its own limit keeps the room
# it had without callprof.
test_expect_success 'a program that sets RLIMIT_AS to 1 GB can still malloc 64 MB' '
	build_workload s-rlimit.c &&
	./t-rlimit 1024 >plain &&
	for how in "" --no-offcpu --mode=counting
	do
		callprof record $how -o rlimit.cprof -- ./t-rlimit 1024 >out 2>err &&
		test_cmp plain out &&
		callprof export -f folded -m calls rlimit.cprof >folded &&
		grep -x "main;work 1000" folded || return 1
	done
'

test_expect_success 'a trivial program'"'"'s address space stays small (VmSize < 128 MB)' '
	callprof record -o small.cprof -- ./t-rlimit >out 2>err &&
	kb=$(sed -n "s/^VmSize //p" out) &&
	echo "VmSize $kb kB" &&
	test "$kb" -gt 0 &&
	test "$kb" -lt 131072
'

test_done
