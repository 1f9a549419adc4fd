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
		build_kind $kind s-sled-throw.cc -L. -lsled-throw-lib -Wl,-rpath,"$PWD" || return 1
	done
'

# uftrace_case DESCRIPTION [--ignore-output] EXE [ARGS...]: a case that holds callprof's
# counts of EXE against uftrace's (check-uftrace.py), run as the case is
# declared.  Where uftrace itself fails on the program (check-uftrace.py
# exits 2: it hung, changed the program's exit status, or counted other
# than the program counts itself), the case is skipped with uftrace's
# failure as the reason: its count is no reference there.
uftrace_case () {
	_desc=$1
	shift
	_opts=
	if test "$1" = --ignore-output; then
		_opts=$1
		shift
	fi
	_log=uftrace.$((test_count + 1)).log
	"$TEST_DIRECTORY/check-uftrace.py" --callprof "$CALLPROF_BUILD/callprof" --timeout 30 \
		$_opts -- "$@" >"$_log" 2>&1
	_rc=$?
	if test $_rc = 2; then
		test_skip "$_desc" "$(sed -n "s/^check-uftrace: //p" "$_log" | tail -n 1)"
	else
		test_expect_success "$_desc" "cat $_log && test $_rc = 0"
	fi
}

for kind in $SLED_KINDS
do
	uftrace_case "$kind: fib" ./t-fib.$kind
	uftrace_case "$kind: longjmp and siglongjmp" ./t-sled-jump.$kind 100
	uftrace_case "$kind: signal handlers, sigaltstack, siglongjmp out" \
		./t-sled-signal.$kind sync 50
	uftrace_case "$kind: swapcontext coroutines" ./t-sled-coro.$kind 50
	uftrace_case "$kind: tail calls, recursion 1000 deep" ./t-sled-tail.$kind 50 1000
	uftrace_case "$kind: 8 threads" ./t-sled-procs.$kind threads
	uftrace_case "$kind: fork, both processes" ./t-sled-procs.$kind fork
	uftrace_case "$kind: exec, both images" ./t-sled-procs.$kind exec
	# Its output under callprof has one frame more (t0531 checks it).
	uftrace_case "$kind: backtrace walks" --ignore-output ./t-sled-backtrace.$kind
	uftrace_case "$kind: __builtin_return_address" ./t-sled-retaddr.$kind quiet 100
	uftrace_case "$kind: dlopen, dlclose, dlopen again (the program's functions)" \
		./t-sled-dlopen.$kind $PWD/libplug1.$kind.so $PWD/libplug2.$kind.so 3
	uftrace_case "$kind: C++ exceptions without cleanups" ./t-sled-throw.$kind bare 100
	# uftrace 0.13 spins for ever on a throw through a patched frame with
	# a cleanup (a destructor): waiting out its timeout in every column
	# taught nothing (t0530 holds these counts against the program's own).
	if test $kind = sleds && uftrace --version 2>/dev/null | grep -q "v0\.13"
	then
		test_skip "$kind: C++ exceptions with cleanups, through a plain library" \
			"uftrace 0.13 does not end on a throw through a patched frame with a cleanup"
	else
		uftrace_case "$kind: C++ exceptions with cleanups, through a plain library" \
			./t-sled-throw.$kind 10
	fi
done

test_done
