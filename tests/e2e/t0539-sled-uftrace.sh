#!/bin/sh
# matrix: cc-opt
test_description='sleds: callprof counts each function as uftrace does, on the same binary (check-uftrace.py)'
. "$(dirname "$0")/lib.sh"

# The reference for a sledded binary's counts is an independent count of
# the same binary: uftrace patches the same sleds (-P .) and counts every
# call of the program's own functions.  The hooks builds go through the
# same comparison (uftrace counts those through the hooks), which proves
# the checker on what works today.  Where uftrace itself fails, the case
# says so and why, rather than comparing with a count that is wrong.

if ! command -v uftrace >/dev/null 2>&1; then
	echo "# SKIP (all): uftrace is not installed (tools/install-deps --tests installs it)"
	test_done
fi

test_expect_success 'setup: the programs in each kind' '
	build_kind_lib plain s-sled-throw-lib.cc libsled-throw-lib.so &&
	for kind in $SLED_KINDS
	do
		build_kind $kind s-fib.c &&
		build_kind $kind s-sled-jump.c &&
		build_kind $kind s-sled-signal.c &&
		build_kind $kind s-sled-coro.c &&
		build_kind $kind s-sled-tail.c &&
		build_kind $kind s-sled-procs.c &&
		build_kind $kind s-sled-backtrace.c -ldl &&
		build_kind $kind s-sled-retaddr.c -ldl &&
		build_kind_lib $kind s-sled-plug.c $PWD/libplug1.$kind.so -DWHICH=1 &&
		build_kind_lib $kind s-sled-plug.c $PWD/libplug2.$kind.so -DWHICH=2 &&
		build_kind $kind s-sled-dlopen.c -ldl &&
		build_kind $kind s-throw.cc &&
		build_kind $kind s-sled-throw.cc -L. -lsled-throw-lib -Wl,-rpath,"$PWD" || return 1
	done
'

# against_uftrace EXE [ARGS...]: check-uftrace.py's table, and its verdict.
against_uftrace () {
	"$TEST_DIRECTORY/check-uftrace.py" --callprof "$CALLPROF_BUILD/callprof" --timeout 60 \
		-- "$@"
}

for kind in $SLED_KINDS
do
	test_expect_success "$kind: fib: counts as uftrace's" '
		against_uftrace ./t-fib.$kind
	'
	test_expect_success "$kind: longjmp and siglongjmp: counts as uftrace's" '
		against_uftrace ./t-sled-jump.$kind 100
	'
	test_expect_success "$kind: signal handlers, sigaltstack, siglongjmp out: counts as uftrace's" '
		against_uftrace ./t-sled-signal.$kind sync 50
	'
	test_expect_success "$kind: swapcontext coroutines: counts as uftrace's" '
		against_uftrace ./t-sled-coro.$kind 50
	'
	test_expect_success "$kind: tail calls, recursion 1000 deep: counts as uftrace's" '
		against_uftrace ./t-sled-tail.$kind 50 1000
	'
	test_expect_success "$kind: 8 threads: counts as uftrace's" '
		against_uftrace ./t-sled-procs.$kind threads
	'
	test_expect_success "$kind: fork: counts as uftrace's, both processes" '
		against_uftrace ./t-sled-procs.$kind fork
	'
	test_expect_success "$kind: exec: counts as uftrace's, both images" '
		against_uftrace ./t-sled-procs.$kind exec
	'
	test_expect_success "$kind: backtrace walks: counts as uftrace's" '
		against_uftrace ./t-sled-backtrace.$kind
	'
	test_expect_success "$kind: __builtin_return_address: counts as uftrace's" '
		against_uftrace ./t-sled-retaddr.$kind quiet 100
	'
	test_expect_success "$kind: dlopen, dlclose, dlopen again: counts as uftrace's (the program's functions)" '
		against_uftrace ./t-sled-dlopen.$kind $PWD/libplug1.$kind.so $PWD/libplug2.$kind.so 3
	'
	test_expect_success "$kind: C++ exceptions without cleanups: counts as uftrace's" '
		against_uftrace ./t-throw.$kind
	'
done

test_done
