#!/bin/sh
# matrix: cc-opt
test_description='callprof attach: the frames a C++ throw abandons close at the catch'
. "$(dirname "$0")/lib.sh"

# workloads/s-attach-catch.cc throws through thrower to main in a loop.
# clang runs no exit hooks for the frames an exception unwinds (gcc runs
# them as cleanups), so the runtime closes them when the catch block calls
# __cxa_begin_catch, which record interposes; attach now points the
# program's GOT slots of it at the runtime copy for the window, as it does
# the longjmp family's.  Before, a clang build's abandoned thrower frame
# stayed open and every later call nested under the one before: a chain
# as deep as the window's throws (the export of it ran out of time).  The
# thread stopped mid-throw at the switch has its seeds pushed by the catch
# that ends the throw (its first event): without that, three calls nested
# under the unwound seed until the next throw.  A sleds build of it is
# refused (t0516).  What is asserted is calls in the window; a context of
# 0 calls is a frame seeded open at attach: gcc's thrower, stopped in the
# throw from its split-off part (thrower.cold), is seeded twice, once for
# each part (seen once in six runs; docs/limitations.md).
test_skip_sleds 'attach refuses a sledded C++ program that catches (t0516)'
. "$TEST_DIRECTORY/attach-busy-lib.sh"
SEL="python3 $TEST_DIRECTORY/check-select.py"

test_expect_success 'setup' '
	build_kind -o t-attach-catch "$CP_BUILD_KIND" s-attach-catch.cc
'

test_expect_success 'attach: thrower under main only, its calls counted, the program unharmed' '
	start_target cx ./t-attach-catch &&
	callprof attach --duration 0.5 -o cx.cprof $pid 2>cx.aerr &&
	target_done cx &&
	echo "done 1" >cx.want &&
	test_cmp cx.want cx.out &&
	callprof export -f json cx.cprof >cx.json &&
	$SEL paths cx.json >cx.paths &&
	grep "^main;thrower(long) [1-9][0-9]*$" cx.paths &&
	! grep "thrower(long);thrower(long) [1-9]" cx.paths
'

test_done
