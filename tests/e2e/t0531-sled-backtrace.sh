#!/bin/sh
# matrix: cc-opt
test_description='sleds: backtrace(), backtrace_symbols() and _Unwind_Backtrace from sledded frames name the same functions'
. "$(dirname "$0")/lib.sh"

# Under sleds the runtime puts its return stub where each sledded frame's
# return address was.  A stack walk reads those slots: it must find the
# real callers (the unwinder's view), the names the run alone prints.

# Known, for every kind: a handler runs below callprof's signal trampoline
# (runtime/signals.c), one frame of libcallprof between the handler and
# the signal frame, which a walk from the handler sees.  That one frame,
# right below on_usr1, is allowed; any other frame of callprof's is not.
TRAMPOLINE='s/ on_usr1 ?(libcallprof[-a-z]*\.so) / on_usr1 /'

# Under ASan the program's backtrace() is ASan's interceptor, which calls
# the C library's: its frame comes first in every backtrace walk, alone and
# under record alike (gcc: "?(libasan.so.N)"; clang links it into the
# program, where it is named "backtrace").  run_both_ways compares the runs
# with it; the expected walks below are ASan's less that one frame.  (The
# runtime's own backtrace must not show there either: it drops the return
# into itself, wherever the interceptor puts it, runtime/interpose.c.)
ASAN_FRAME=
if sanitized address; then
	ASAN_FRAME='s/^backtrace: \(?(libasan\.so[.0-9]*)\|backtrace\) /backtrace: /'
fi

test_expect_success 'setup: the program in each kind' '
	for kind in $SLED_KINDS
	do
		build_kind $kind s-sled-backtrace.c -ldl || return 1
	done
'

for kind in $SLED_KINDS
do
	test_expect_success "$kind: the walks name the same frames alone and under record" '
		run_both_ways --filter "$TRAMPOLINE" t-sled-backtrace.$kind &&
		sed "$ASAN_FRAME" t-sled-backtrace.$kind.plain.out >plain.out &&
		sed "$ASAN_FRAME" t-sled-backtrace.$kind.rec.out >rec.out &&
		grep -x "backtrace: walk_backtrace walk level_c level_b level_a main" \
			plain.out >walks &&
		grep -x "unwind: walk_unwind walk level_c level_b level_a main" \
			plain.out >>walks &&
		test_line_count = 6 walks
	'

	test_expect_success "$kind: from a signal handler, across the signal frame" '
		grep -A2 -x "from the handler:" rec.out >handler &&
		grep -c "^backtrace: walk_backtrace walk on_usr1 .* level_c level_b level_a main$" handler >n &&
		grep -c "^unwind: walk_unwind walk on_usr1 .* level_c level_b level_a main$" handler >>n &&
		printf "3\n3\n" >expect &&
		test_cmp expect n
	'

	test_expect_success "$kind: the counts are the program's own" '
		sled_check_counts t-sled-backtrace.$kind.plain.out t-sled-backtrace.$kind.cprof &&
		callprof export -f folded -m calls t-sled-backtrace.$kind.cprof >folded &&
		grep "^main;level_a;level_b;level_c;<signal 10>;on_usr1;walk;walk_unwind 3$" folded
	'
done

# An interposer between the runtime's wrappers and the C library's, as
# ASan's backtrace interceptor is (s-sled-btwrap.c, preloaded after the
# runtime): a walk shows its frames alone and must show them, and not the
# runtime's, under record.  The runtime once dropped the walk's first frame
# for its own: "backtrace backtrace walk_backtrace" instead of
# "btwrap_backtrace backtrace walk_backtrace".  (With clang, ASan's
# interceptor is in the program, named backtrace, between it and the
# interposer: ASAN_MID.)
ASAN_MID=
if sanitized address; then
	ASAN_MID='\(backtrace \)\{0,1\}'
fi

test_expect_success 'an interposer of backtrace and _Unwind_Backtrace: its frames show, the runtime'"'"'s do not' '
	$CC $OPT -g -Wall -fno-optimize-sibling-calls -fPIC -shared -o libbtwrap.so \
		"$WORKLOADS/s-sled-btwrap.c" -ldl &&
	for kind in $SLED_KINDS
	do
		(
			LD_PRELOAD=$PWD/libbtwrap.so && export LD_PRELOAD &&
			run_both_ways --filter "$TRAMPOLINE" t-sled-backtrace.$kind
		) &&
		grep -c " btwrap_backtrace backtrace ${ASAN_MID}walk_backtrace walk level_c level_b level_a main$" \
			t-sled-backtrace.$kind.plain.out >n &&
		grep -c " btwrap_unwind _Unwind_Backtrace walk_unwind walk level_c level_b level_a main$" \
			t-sled-backtrace.$kind.plain.out >>n &&
		printf "3\n3\n" >expect &&
		test_cmp expect n || return 1
	done
'

test_done
