#!/bin/sh
# matrix: cc-opt
test_description='sleds: 8 threads, fork (both profiles exact), vfork + exec, exec of a sledded program'
. "$(dirname "$0")/lib.sh"

# Each thread has its own stack of replaced return addresses; a forked
# child inherits the parent's (its frames above the fork return through the
# runtime's stubs in the child too); exec drops the image, vfork shares
# the parent's memory until the exec.

test_expect_success 'setup: the program in each kind' '
	for kind in $SLED_KINDS
	do
		build_kind $kind s-sled-procs.c || return 1
	done
'

for kind in $SLED_KINDS
do
	p=t-sled-procs.$kind
	test_expect_success "$kind: 8 threads: output, status, counts" '
		run_both_ways $p threads &&
		grep "^count	unit	36000$" $p.rec.out &&
		sled_check_counts $p.rec.out $p.cprof &&
		callprof export -f folded -m calls $p.cprof >folded &&
		grep -x "worker;unit 36000" folded
	'

	test_expect_success "$kind: fork: the child profile has the child calls, the parent the parent calls" '
		run_both_ways $p fork &&
		ls $p.cprof* >files &&
		test_line_count = 2 files &&
		child=$(grep "cprof\.[0-9]*$" files) &&
		sled_part $p.rec.out child >child.out &&
		grep "^count	child_work	300$" child.out &&
		sled_check_counts child.out $child &&
		sled_part $p.rec.out parent >parent.out &&
		sled_check_counts parent.out $p.cprof &&
		callprof export -f folded -m calls $child >folded &&
		grep -x "main;forker;child_work;leaf 300" folded &&
		callprof export -f folded -m calls $p.cprof >folded &&
		grep -x "main;forker;after_fork;leaf 1" folded &&
		! grep child_work folded
	'

	test_expect_success "$kind: vfork + exec: the new image profiled, the parent intact" '
		run_both_ways $p vfork &&
		ls $p.cprof* >files &&
		test_line_count = 2 files &&
		sled_check_counts $p.rec.out $(cat files) &&
		sled_part $p.rec.out parent >parent.out &&
		sled_check_counts parent.out $p.cprof &&
		grep "^count	in_image	5$" $p.rec.out
	'

	test_expect_success "$kind: exec of a sledded program from a sledded program" '
		run_both_ways $p exec &&
		ls $p.cprof* >files &&
		printf "%s\n" $p.cprof $p.cprof.exec1 >expect &&
		test_cmp expect files &&
		sled_part $p.rec.out "old image" >old.out &&
		sled_check_counts old.out $p.cprof.exec1 &&
		sled_part $p.rec.out "new image" >new.out &&
		sled_check_counts new.out $p.cprof &&
		callprof export -f folded -m calls $p.cprof >folded &&
		grep -x "main;in_image;leaf 5" folded
	'
done

test_done
