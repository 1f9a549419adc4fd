#!/bin/sh
# matrix: cc-opt
test_description='a program that takes away memory it did not create does not take the runtime'"'"'s'
. "$(dirname "$0")/lib.sh"

# t-unmap walks /proc/self/maps and unmaps (write-protects, discards,
# moves) every shared mapping: without callprof it finds none, under
# callprof the runtime's.  Its calls succeed, the runtime keeps its memory,
# and the program runs and ends as without callprof, its profile whole.

test_expect_success 'setup' '
	build_workload s-unmap.c &&
	test_expect_code 3 ./t-unmap munmap >plain &&
	test_line_count = 1 plain
'

# check HOW [RECORD OPTIONS]: same output and status, every call counted
check () {
	_how=$1
	shift
	test_expect_code 3 callprof record "$@" -o $_how.cprof -- ./t-unmap $_how >$_how.out 2>$_how.err &&
	cat $_how.err &&
	test_cmp plain $_how.out &&
	callprof export -f folded -m calls $_how.cprof >$_how.calls &&
	awk "/;leaf / { n += \$2 } END { print n }" $_how.calls >$_how.leaves &&
	echo 42000 >expect &&
	test_cmp expect $_how.leaves
}

for how in munmap syscall mprotect madvise mremap
do
	test_expect_success "$how of the runtime's shared memory: as without callprof" "
		check $how
	"
done

test_expect_success 'the same with --time=clock and --time=none' '
	check munmap --time=clock &&
	check mprotect --time=none
'

# A sleds build has one more shared mapping of the runtime's, in both of
# its aliases: the return stubs every recorded call runs through.
test_expect_success 'a sleds build: its return stubs are kept too' '
	build_kind -o t-unmap sleds s-unmap.c &&
	check munmap &&
	check mremap
'

test_done
