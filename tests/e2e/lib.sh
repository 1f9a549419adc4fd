# lib.sh - helpers for the end-to-end tests, after git's t/test-lib.sh.
#
# A test script sources this file, then runs test_expect_success cases and
# ends with test_done:
#
#	#!/bin/sh
#	# matrix: cc-opt
#	test_description='what this script covers'
#	. "$(dirname "$0")/lib.sh"
#
#	test_expect_success 'report counts nested calls' '
#		build_workload s-nested.c &&
#		callprof record -o p.cprof -- ./t-nested &&
#		callprof export -f folded -m calls p.cprof >actual &&
#		test_cmp "$EXPECT/nested.calls" actual
#	'
#	test_done
#
# Each case's commands are one &&-chain, evaluated in a subshell in the
# script's own scratch ("trash") directory, which every case shares: later
# cases may use files made by earlier ones.  The script prints "ok N - desc"
# or "not ok N - desc" per case (TAP, as git does), and on failure the
# commands and their output prefixed with "# ".
#
# Environment: CALLPROF_BUILD (the build directory holding callprof,
# libcallprof.so and libcallprof.a; default: build/ at the top of the tree),
# CC (gcc or clang; default gcc), OPT (-O0 or -O2; default -O2), TMPDIR (the
# trash directory goes below it), CP_TRASH_ROOT (overrides where the trash
# directory goes; tests/e2e/run sets it), CP_SANITIZE (the sanitizers the
# build in CALLPROF_BUILD has: "address,undefined", "thread"; `make check`
# sets it) and CP_TEST_CFLAGS (flags every workload is compiled with, the
# same -fsanitize=...; build_workload and build_workload_lib add them) and
# CP_BUILD_KIND (hooks, the default, or sleds: the kind of build the
# column makes, which build_workload, build_workload_lib and cc_kind
# "$CP_BUILD_KIND" make; CP_INSTR_FLAGS, set from it, names the flag that
# kind adds, for a script that checks it).
#
# Options: -v/--verbose shows every case's output, -x traces the commands
# (set -x), -d/--debug keeps the trash directory, -i/--immediate stops at the
# first failure.
#
# Exit status: 0 when every case passed, 1 otherwise.  A case whose callprof
# (or, under record, whose program) died by a signal is reported as
# "not ok N - desc # SG ..." so that tests/e2e/run can show it apart.

LC_ALL=C
LANG=C
export LC_ALL LANG
unset LANGUAGE

# Nothing from the caller's profiling setup may leak into the tests.
unset LD_PRELOAD
for _cp_var in $(env | sed -n 's/^\(CALLPROF_[A-Za-z0-9_]*\)=.*/\1/p'); do
	test "$_cp_var" = CALLPROF_BUILD || unset "$_cp_var"
done
unset _cp_var

LF='
'

verbose=
trace=
debug=
immediate=
for _cp_arg
do
	case "$_cp_arg" in
	-v|--verbose) verbose=t ;;
	-x) trace=t ;;
	-d|--debug) debug=t ;;
	-i|--immediate) immediate=t ;;
	*) echo "error: unknown test option '$_cp_arg'" >&2; exit 1 ;;
	esac
done
unset _cp_arg

TEST_NAME=$(basename "$0" .sh)
TEST_DIRECTORY=$(cd "$(dirname "$0")" && pwd) || exit 1
TOP_DIRECTORY=$(cd "$TEST_DIRECTORY/../.." && pwd) || exit 1
EXPECT=$TEST_DIRECTORY/expect
WORKLOADS=$TEST_DIRECTORY/workloads

: "${CALLPROF_BUILD:=$TOP_DIRECTORY/build}"
CALLPROF_BUILD=$(cd "$CALLPROF_BUILD" 2>/dev/null && pwd) || {
	echo "error: CALLPROF_BUILD '$CALLPROF_BUILD' is not a directory (run make first)" >&2
	exit 1
}
: "${CC:=gcc}"
: "${OPT:=-O2}"
PATH=$CALLPROF_BUILD:$PATH
export TEST_DIRECTORY EXPECT WORKLOADS CALLPROF_BUILD CC OPT PATH

# The kind of build: hooks compiled in (-finstrument-functions), or sleds
# (patchable entries, `callprof cc --sleds`: only the functions left out of
# line after optimisation are counted, as with clang's after-inlining hooks).
# cc_kind below builds them.
: "${CP_BUILD_KIND:=hooks}"
case "$CP_BUILD_KIND" in
hooks) CP_INSTR_FLAGS=-finstrument-functions ;;
sleds) CP_INSTR_FLAGS=-fpatchable-function-entry=5,0 ;;
*) echo "error: CP_BUILD_KIND '$CP_BUILD_KIND' is neither hooks nor sleds" >&2; exit 1 ;;
esac
export CP_BUILD_KIND CP_INSTR_FLAGS

test -x "$CALLPROF_BUILD/callprof" ||
	echo "# warning: no callprof in $CALLPROF_BUILD: the cases below will fail"

# Sanitized suites (docs/internals/testing.md).  The preloaded runtime is
# not built with ASan, so it comes first in a sanitized program's library
# list, ahead of libasan; its wrappers then call ASan's through dlsym(RTLD_NEXT),
# which is the order ASan's check exists to protect, hence
# verify_asan_link_order=0.  Every finding ends the program with an error.
: "${CP_SANITIZE:=}"
: "${CP_TEST_CFLAGS:=}"
export CP_SANITIZE CP_TEST_CFLAGS
if test -n "$CP_SANITIZE"; then
	ASAN_OPTIONS=verify_asan_link_order=0:abort_on_error=0:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$TEST_DIRECTORY/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}
	export ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS
fi

# sanitized NAME: true if the build has sanitizer NAME (address, undefined,
# thread).
sanitized () {
	case ",$CP_SANITIZE," in *",$1,"*) return 0 ;; esac
	return 1
}

# scale FULL SMALL: the size of a scale case, FULL, or SMALL in a sanitized
# suite.  The plain suite holds the claim at its full size; a sanitized one
# runs the same code (every growth step of the stacks and the tree, every
# view) at a tenth of it, where a sanitizer's check costs ten times a
# plain run (docs/internals/testing.md).
scale () {
	if test -n "$CP_SANITIZE"; then echo "$2"; else echo "$1"; fi
}

# One fresh scratch directory per script and compiler setting.
: "${CP_TRASH_ROOT:=${TMPDIR:-/tmp}}"
TRASH_DIRECTORY=$CP_TRASH_ROOT/trash.$TEST_NAME.$(basename "$CC")$OPT.$$
rm -rf "$TRASH_DIRECTORY"
mkdir -p "$TRASH_DIRECTORY" && TRASH_DIRECTORY=$(cd "$TRASH_DIRECTORY" && pwd) || {
	echo "error: cannot create trash directory '$TRASH_DIRECTORY'" >&2
	exit 1
}
# Bookkeeping lives next to the trash, not in it, so that tests can list
# their directory.
CP_SIGNALS=$TRASH_DIRECTORY.signals
CP_OUTPUT=$TRASH_DIRECTORY.out
: >"$CP_SIGNALS"
export TRASH_DIRECTORY CP_SIGNALS
cd "$TRASH_DIRECTORY" || exit 1

test_count=0
test_failure=0
test_success=0

# Wrap the tool: note deaths by signal (exit status 130..192; 129 is a
# usage error, 128 a die()), then return its status unchanged.  Under
# record this also catches a program that the runtime made crash; a test
# that means its program to die by a signal calls "command callprof".
callprof () {
	command callprof "$@"
	_cp_status=$?
	if test $_cp_status -gt 129 && test $_cp_status -le 192; then
		echo "callprof $1 died by signal $((_cp_status - 128))" >>"$CP_SIGNALS"
	fi
	return $_cp_status
}

BUG () {
	echo "BUG in test script $TEST_NAME: $*" >&2
	exit 1
}

say_indented_ () {
	sed -e 's/^/# /' "$@"
}

# test_skip 'description' 'reason': a case that does not run here; TAP's
# "ok N - description # SKIP reason", which tests/e2e/run counts apart.
test_skip () {
	test $# = 2 || BUG "test_skip needs 2 arguments, got $#"
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

# test_skip_sanitized NAME 'reason': skip the rest of the script when the
# build has sanitizer NAME (a test inherently at odds with it: rlimits on
# memory under ASan's shadow, precise timings).  Says why.
test_skip_sanitized () {
	sanitized "$1" || return 0
	echo "# SKIP (all) under -fsanitize=$1: $2"
	test_done
}

# workloads_without_asan 'reason': compile this script's workloads without
# ASan (UBSan stays), for tests that ASan's shadow memory or its own
# interceptors would defeat while the runtime's part is what they test.
# Says why.
workloads_without_asan () {
	sanitized address || return 0
	echo "# workloads built without ASan: $1"
	CP_TEST_CFLAGS=
	if sanitized undefined; then
		CP_TEST_CFLAGS="-fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
	fi
}

# test_expect_success 'description' 'commands'
test_expect_success () {
	test $# = 2 || BUG "test_expect_success needs 2 arguments, got $#"
	test_count=$((test_count + 1))

	# A broken &&-chain would let a failing command pass unnoticed.  As
	# git used to: with the chain intact, "(exit 117) && body" stops at
	# once with 117; any other status means a command is not chained.
	( eval "(exit 117) && $2" ) >/dev/null 2>&1 </dev/null
	if test $? != 117; then
		test_failure=$((test_failure + 1))
		echo "not ok $test_count - $1 # broken &&-chain in test body"
		printf '%s\n' "$2" | say_indented_
		test -z "$immediate" || test_done
		return 0
	fi

	: >"$CP_SIGNALS"
	(
		cd "$TRASH_DIRECTORY" || exit 1
		test -z "$trace" || set -x
		eval "$2"
	) >"$CP_OUTPUT" 2>&1 </dev/null
	_cp_status=$?
	_cp_signal=$(sed -n '$p' "$CP_SIGNALS")

	if test $_cp_status = 0 && test -z "$_cp_signal"; then
		test_success=$((test_success + 1))
		echo "ok $test_count - $1"
		test -z "$verbose" || say_indented_ "$CP_OUTPUT"
	else
		test_failure=$((test_failure + 1))
		if test -n "$_cp_signal"; then
			echo "not ok $test_count - $1 # SG $_cp_signal"
		else
			echo "not ok $test_count - $1"
		fi
		printf '%s\n' "$2" | sed -e '/^[ 	]*$/d' -e 's/^/#	/'
		echo "# --- output (exit status $_cp_status) ---"
		say_indented_ "$CP_OUTPUT"
		test -z "$immediate" || test_done
	fi
	return 0
}

test_done () {
	rm -f "$CP_OUTPUT" "$CP_SIGNALS"
	echo "1..$test_count"
	if test $test_failure = 0; then
		echo "# passed all $test_count test(s)"
		if test -z "$debug"; then
			cd / && rm -rf "$TRASH_DIRECTORY"
		fi
		exit 0
	fi
	echo "# failed $test_failure among $test_count test(s)"
	echo "# trash directory kept: $TRASH_DIRECTORY"
	exit 1
}

# test_cmp expected actual: succeed iff the files are equal, else show the
# unified diff (expected first).
test_cmp () {
	test $# = 2 || BUG "test_cmp needs 2 arguments"
	diff -u "$1" "$2"
}

# test_must_fail cmd args...: succeed iff cmd exits 1..129 (an error, a
# die() at 128, a usage error at 129).  Success, a death by signal and
# "command not found" all fail.
test_must_fail () {
	"$@"
	_cp_status=$?
	if test $_cp_status = 0; then
		echo "test_must_fail: command succeeded: $*"
		return 1
	elif test $_cp_status -gt 129 && test $_cp_status -le 192; then
		echo "test_must_fail: died by signal $((_cp_status - 128)): $*"
		return 1
	elif test $_cp_status = 127 && ! command -v "$1" >/dev/null; then
		echo "test_must_fail: command not found: $*"
		return 1
	fi
	return 0
}

# test_might_fail cmd args...: like test_must_fail, but success is fine too.
test_might_fail () {
	"$@"
	_cp_status=$?
	if test $_cp_status -gt 129 && test $_cp_status -le 192; then
		echo "test_might_fail: died by signal $((_cp_status - 128)): $*"
		return 1
	fi
	return 0
}

# test_expect_code N cmd args...: succeed iff cmd exits with status N.
test_expect_code () {
	_cp_want=$1
	shift
	"$@"
	_cp_status=$?
	test $_cp_status = "$_cp_want" && return 0
	echo "test_expect_code: want exit status $_cp_want, got $_cp_status: $*"
	return 1
}

test_must_be_empty () {
	test $# = 1 || BUG "test_must_be_empty needs 1 argument"
	if ! test -f "$1"; then
		echo "'$1' is missing"
		return 1
	elif test -s "$1"; then
		echo "'$1' is not empty, it contains:"
		cat "$1"
		return 1
	fi
}

# test_line_count = N file (any test(1) comparison operator).
test_line_count () {
	test $# = 3 || BUG "test_line_count needs 3 arguments"
	if ! test $(wc -l <"$3") "$1" "$2"; then
		echo "test_line_count: line count for $3 !$1 $2"
		cat "$3"
		return 1
	fi
}

test_path_is_file () {
	test -f "$1" && return 0
	echo "file $1 does not exist"
	return 1
}

test_path_is_missing () {
	test -e "$1" || return 0
	echo "path exists: $1"
	ls -ld "$1"
	return 1
}

# The kind of a build (the column's is $CP_BUILD_KIND): "hooks",
# -finstrument-functions compiled in; "sleds", built by `callprof --sleds
# COMPILER` as a user's `callprof cc --sleds` is (-g
# -fpatchable-function-entry=5,0: gcc's five 1-byte NOPs or clang's one
# 5-byte NOP at each out-of-line function's entry, patched by the runtime
# under callprof record); "plain", neither.
#
# cc_kind KIND COMPILER [args...]: run COMPILER with args as a build of KIND.
#
# A sleds build of the ordinary workloads also gets CP_SLED_CFLAGS,
# -fno-optimize-sibling-calls: at -O2 both compilers turn a call in tail
# position into a jump (gcc makes 90 of them in the workloads, clang 19),
# which a hooks build never does (its exit hook follows the call), and the
# callee's calls then land under the caller's caller.  That is what sleds
# see of such a program, and the sleds' own scenarios test it
# (build_kind: t0535's tail calls, t0540's); the others test the same call
# trees in every column.
CP_SLED_CFLAGS=-fno-optimize-sibling-calls
cc_kind () {
	_cp_k=$1
	shift
	case "$_cp_k" in
	hooks) _cp_c=$1; shift; set -- "$_cp_c" -finstrument-functions "$@" ;;
	sleds) _cp_c=$1; shift; set -- command callprof --sleds "$_cp_c" $CP_SLED_CFLAGS "$@" ;;
	plain) ;;
	*) BUG "cc_kind: unknown kind '$_cp_k'" ;;
	esac
	echo "cc_kind $_cp_k: $*"
	"$@"
}

# The compiler of a source: $CC for .c, $CXX (the C++ compiler of $CC's
# family) for .cc.
case "$CC" in
clang*) CXX=clang++ ;;
*) CXX=g++ ;;
esac
export CXX

# build_kind [-o EXE] KIND s-name.c|s-name.cc [extra args...]: ./t-name.KIND
# (or EXE) from $WORKLOADS/s-name.c with $CC (s-name.cc with $CXX) $OPT -g
# -rdynamic, a build of KIND; the extra arguments go after the source.
# -rdynamic: backtrace_symbols() names, and s-sled-count.h's table is
# shared with the libraries.
build_kind () {
	_cp_exe=
	if test "$1" = -o; then
		_cp_exe=$2
		shift 2
	fi
	_cp_kind=$1
	_cp_src=$2
	shift 2
	if test -z "$_cp_exe"; then
		_cp_exe=t-${_cp_src#s-}
		_cp_exe=${_cp_exe%.c}
		_cp_exe=${_cp_exe%.cc}.$_cp_kind
	fi
	_cp_saved=$CP_SLED_CFLAGS
	CP_SLED_CFLAGS=
	build_kind_ "$_cp_kind" "$_cp_exe" "$_cp_src" -rdynamic "$@"
	_cp_status=$?
	CP_SLED_CFLAGS=$_cp_saved
	return $_cp_status
}

# build_kind_ KIND EXE SRC [args...]: the common part of the builders.
build_kind_ () {
	_cp_k=$1
	_cp_exe=$2
	_cp_src=$3
	shift 3
	case "$_cp_src" in
	*.cc) _cp_cc=$CXX ;;
	*) _cp_cc=$CC ;;
	esac
	# shellcheck disable=SC2086
	cc_kind "$_cp_k" $_cp_cc $OPT $CP_TEST_CFLAGS -g -Wall -I"$WORKLOADS" \
		-o "$_cp_exe" "$WORKLOADS/$_cp_src" "$@" -lpthread
}

# build_workload s-name.c [extra cc args...]: ./t-name, a build of the
# column's kind ($CP_BUILD_KIND) of $WORKLOADS/s-name.c with $CC $OPT -g
# (-finstrument-functions, or `callprof --sleds $CC` in a sleds column);
# the extra arguments go after the source (libraries, -L, -Wl,...).
build_workload () {
	_cp_exe=t-${1#s-}
	build_kind_ "$CP_BUILD_KIND" "${_cp_exe%.c}" "$@"
}

# build_workload_lib s-name.c libname.so [extra args...]: the same, as a
# shared object.
build_workload_lib () {
	build_kind_lib_ "$CP_BUILD_KIND" "$@"
}

# build_kind_lib KIND s-name.c|.cc LIB [extra args...]: the shared object
# LIB, built as build_kind builds a program.
build_kind_lib () {
	_cp_saved=$CP_SLED_CFLAGS
	CP_SLED_CFLAGS=
	build_kind_lib_ "$@"
	_cp_status=$?
	CP_SLED_CFLAGS=$_cp_saved
	return $_cp_status
}

build_kind_lib_ () {
	_cp_k=$1
	_cp_src=$2
	_cp_lib=$3
	shift 3
	case "$_cp_src" in
	*.cc) _cp_cc=$CXX ;;
	*) _cp_cc=$CC ;;
	esac
	# shellcheck disable=SC2086
	cc_kind "$_cp_k" $_cp_cc $OPT $CP_TEST_CFLAGS -g -Wall -I"$WORKLOADS" -fPIC -shared \
		-o "$_cp_lib" "$WORKLOADS/$_cp_src" "$@"
}

# CP_RUNTIME_A: the arguments that link the static runtime into a program
# of the column's kind, unquoted.  A hooks build references the hooks, which
# pull the archive's members in; a sledded program references none of its
# symbols, so it links the archive whole, as docs/limitations.md tells users.
case "$CP_BUILD_KIND" in
sleds) CP_RUNTIME_A="-Wl,--whole-archive $CALLPROF_BUILD/libcallprof.a -Wl,--no-whole-archive" ;;
*) CP_RUNTIME_A=$CALLPROF_BUILD/libcallprof.a ;;
esac

# test_skip_sleds 'reason': skip the rest of the script in a sleds column
# (what it tests is the hooks' own: their ABI, their verdicts, attach's
# redirection of them).  Says why.
test_skip_sleds () {
	test "$CP_BUILD_KIND" = sleds || return 0
	echo "# SKIP (all) in a sleds column: $1"
	test_done
}

# The sleds scenarios (t0530-t0539) run every case against the builds of
# SLED_KINDS: in a hooks column a hooks build (proves the program and the
# checks) and a sleds build, in a sleds column the sleds build only.
case "$CP_BUILD_KIND" in
sleds) SLED_KINDS=sleds ;;
*) SLED_KINDS="hooks sleds" ;;
esac

# build_hostile: ./t-hostile from s-hostile.c, its functions renamed to
# what a hostile binary could name them (objcopy --redefine-sym): terminal
# escapes (OSC 0 window title, OSC 52 clipboard, clear screen, a lone C1
# CSI byte, C1 CSI as UTF-8), a newline forging report lines, ';' and a
# space (folded's separators), bytes that are not UTF-8, XML markup, a
# backslash forging an escape, a right-to-left override, a newline forging
# callgrind lines.  HOSTILE_VISIBLE lists, one a line, each name as every
# text output shows it (util/text.h), in the order hostile_01..12;
# hostile_NN has NN calls (s-hostile.c).
HOSTILE_VISIBLE='\x1b]0;PWNED-TITLE\x07
\x1b]52;c;ZXZpbA==\x07
\x1b[2J\x1b[Hclear
\x9b31mC1lone
\u009b31mC1utf8
nl\n  999999  forged_row
semi;colon frame
bad\xff\xfeutf8
<tag attr="x">&amp;'"'"'q'"'"'
back\\slash\\x1b
\u202ertl-override
fn=evil\ncalls=1 1\n0 99999 tab\there'
build_hostile () {
	build_workload s-hostile.c &&
	objcopy \
		--redefine-sym hostile_01="$(printf '\033]0;PWNED-TITLE\007')" \
		--redefine-sym hostile_02="$(printf '\033]52;c;ZXZpbA==\007')" \
		--redefine-sym hostile_03="$(printf '\033[2J\033[Hclear')" \
		--redefine-sym hostile_04="$(printf '\23331mC1lone')" \
		--redefine-sym hostile_05="$(printf '\302\23331mC1utf8')" \
		--redefine-sym hostile_06="$(printf 'nl\n  999999  forged_row')" \
		--redefine-sym hostile_07="semi;colon frame" \
		--redefine-sym hostile_08="$(printf 'bad\377\376utf8')" \
		--redefine-sym hostile_09="<tag attr=\"x\">&amp;'q'" \
		--redefine-sym hostile_10='back\slash\x1b' \
		--redefine-sym hostile_11="$(printf '\342\200\256rtl-override')" \
		--redefine-sym hostile_12="$(printf 'fn=evil\ncalls=1 1\n0 99999 tab\there')" \
		t-hostile
}

# wait_for FILE: until it exists and is not empty (at most 10 s).
wait_for () {
	_i=0
	while ! test -s "$1" && test $_i -lt 100
	do
		sleep 0.1 && _i=$((_i + 1))
	done
	test -s "$1"
}

# until_true CMD...: until CMD succeeds (at most 20 s)
until_true () {
	_i=0
	until "$@"
	do
		test $_i -lt 1000 || { echo "not true in 20 s: $*"; return 1; }
		sleep 0.02
		_i=$((_i + 1))
	done
}

# watchers_of PID: the live watchers of process PID (callprof-watch
# processes holding a pidfd on it), one a line
watchers_of () {
	for _w in $(pgrep -x callprof-watch)
	do
		grep -q "^State:[[:space:]]*[RSD]" "/proc/$_w/status" 2>/dev/null &&
		grep -l -s "^Pid:[[:space:]]*$1$" /proc/$_w/fdinfo/* >/dev/null &&
		echo $_w
	done
	true
}

# has_watcher PID, no_watcher PID: whether process PID has a live watcher
# (for until_true, which runs its command again: a $(...) in its arguments
# would be expanded once)
has_watcher () {
	test -n "$(watchers_of "$1")"
}
no_watcher () {
	test -z "$(watchers_of "$1")"
}

# run_both_ways [--dies] [--filter SED] EXE [args...]: run ./EXE args alone
# (EXE.plain.out, .err, .rc), then under callprof record -o EXE.cprof
# (EXE.rec.*), and succeed iff stdout, stderr (less callprof's own
# "callprof: " lines and the indented lines continuing them; under a
# sanitizer, the pid of its "==PID==" lines) and the exit
# status are the same.  --dies: the
# program is meant to die by a signal, which then is no SG of the case.
# --filter: a sed script applied to both runs' stdout before the
# comparison (a known difference, or what varies from run to run: the
# caller says why).
run_both_ways () {
	_cp_cmd=callprof
	_cp_filter=
	while :
	do
		case "$1" in
		--dies) _cp_cmd="command callprof" ;;
		--filter) _cp_filter=$2; shift ;;
		*) break ;;
		esac
		shift
	done
	_cp_exe=$1
	shift
	rm -f "$_cp_exe.cprof"*
	./"$_cp_exe" "$@" >"$_cp_exe.plain.out" 2>"$_cp_exe.plain.err"
	echo $? >"$_cp_exe.plain.rc"
	$_cp_cmd record -o "$_cp_exe.cprof" -- ./"$_cp_exe" "$@" \
		>"$_cp_exe.rec.out" 2>"$_cp_exe.rec.err-all"
	echo $? >"$_cp_exe.rec.rc"
	# callprof's lines, and the indented lines that continue one (verdicts).
	awk '/^callprof: / { more = 1; next } more && /^  / { next } { more = 0; print }' \
		"$_cp_exe.rec.err-all" >"$_cp_exe.rec.err"
	cp "$_cp_exe.plain.err" "$_cp_exe.plain.err-cmp"
	# A sanitizer's lines begin with "==PID==" (ASan's swapcontext warning,
	# its reports): the pid is the one thing that differs between two runs.
	if test -n "$CP_SANITIZE"; then
		sed -i "s/^==[0-9]*==/==PID==/" "$_cp_exe.plain.err-cmp" "$_cp_exe.rec.err"
	fi
	if test -n "$_cp_filter"; then
		sed "$_cp_filter" "$_cp_exe.rec.out" >"$_cp_exe.rec.out-filtered" &&
		sed "$_cp_filter" "$_cp_exe.plain.out" >"$_cp_exe.plain.out-filtered" &&
		test_cmp "$_cp_exe.plain.out-filtered" "$_cp_exe.rec.out-filtered" &&
		test_cmp "$_cp_exe.plain.err-cmp" "$_cp_exe.rec.err" &&
		test_cmp "$_cp_exe.plain.rc" "$_cp_exe.rec.rc"
		return
	fi
	echo "run_both_ways: exit status $(cat "$_cp_exe.plain.rc") alone, $(cat "$_cp_exe.rec.rc") under record"
	test_cmp "$_cp_exe.plain.out" "$_cp_exe.rec.out" &&
	test_cmp "$_cp_exe.plain.err-cmp" "$_cp_exe.rec.err" &&
	test_cmp "$_cp_exe.plain.rc" "$_cp_exe.rec.rc"
}

# without_asan_ctors <FOLDED: the lines of a folded export less those
# ending in the constructor or destructor that gcc's ASan adds to each
# module it compiles (module registration, priority 99: _sub_I_00099_N,
# _sub_D_00099_N; clang's asan.module_ctor/dtor get no sled).  gcc gives
# them patchable entries like any function, so a sleds build records them:
# real calls, the program's at start and exit, a library's destructor in
# dlclose (its constructor ran in dlopen, before the patching), but none of
# the workload's.  Without ASan, its input unchanged.
without_asan_ctors () {
	if sanitized address; then
		sed "/\(^\|;\)_sub_[DI]_00099_[0-9]*\( ([^)]*)\)\{0,1\} [0-9]*$/d"
	else
		cat
	fi
}

# sled_calls_by_name PROFILE...: "name<TAB>calls" of every function in the
# profiles, its calls summed over all its call paths (report --flat, which
# also serves trees a million deep), sorted.
sled_calls_by_name () {
	callprof report --flat --fields=calls,name --sort=name "$@" >calls.flat &&
	sed 1d calls.flat | sed -n "s/^ *\([0-9][0-9]*\)  \(.*\)$/\2\t\1/p" | LC_ALL=C sort
}

# sled_check_counts OUTPUT PROFILE...: the "count<TAB>name<TAB>N" lines the
# program printed into OUTPUT (s-sled-count.h), N added up per name (a
# name may come from several processes), equal callprof's calls of that
# function in the profiles (merged), summed over its call paths.
sled_check_counts () {
	_cp_out=$1
	shift
	awk -F "\t" '$1 == "count" { n[$2] += $3 } END { for (k in n) printf "%s\t%d\n", k, n[k] }' \
		"$_cp_out" | LC_ALL=C sort >counts.want &&
	test -s counts.want &&
	sled_calls_by_name "$@" >counts.all &&
	awk -F "\t" 'FILENAME == ARGV[1] { want[$1] = 1; next } ($1 in want)' \
		counts.want counts.all >counts.got &&
	test_cmp counts.want counts.got
}

# sled_part OUTPUT NAME: the lines of OUTPUT after the line "--- NAME" up
# to the next "--- " line (s-sled-procs.c: one process's counts).
sled_part () {
	awk -v want="--- $2" '/^--- / { on = ($0 == want); next } on' "$1"
}

# normalize_report <report: drop the column-title line, check that the
# calls column (the first) is right-aligned, and print "calls|name" with
# the name's indentation kept ("|name" for headings without numbers).
# Rows of sampled code without hooks (calls "-") are left out: they are
# no call path, and only there when a sample happened to land there; so is
# a heading with only such rows under it (callees "at an unknown line").
# Comparing normalized expectation and output checks the values and the
# tree shape, not the column width.
normalize_report () {
	sed 1d | awk '
	{
		# A heading (callees by line): no numbers, the name indented as a row.
		# Printed with the first row under it that is printed, or alone
		# when nothing, not even a row of code without hooks, follows.
		if (width != "" && substr($0, 1, width + 2) ~ /^ *$/ && substr($0, width + 3) ~ /[^ ]/) {
			flush(0)
			heading = "|" substr($0, width + 3)
			dashes = 0
			next
		}
		# Sampled code without hooks (calls "-", default time source): no
		# call path, and there only if a sample happened to land there.
		if (match($0, /^ *-  /)) {
			end = RLENGTH - 2
			if (width != "" && end != width)
				print "MISALIGNED CALLS COLUMN: " $0
			dashes++
			next
		}
		flush(1)
		if (!match($0, /^ *[0-9]+  /)) {
			print "UNPARSED LINE: " $0
			next
		}
		end = RLENGTH - 2
		if (width == "")
			width = end
		else if (end != width)
			print "MISALIGNED CALLS COLUMN: " $0
		calls = substr($0, 1, end)
		sub(/^ +/, "", calls)
		print calls "|" substr($0, RLENGTH + 1)
	}
	function flush(counted) {
		if (heading != "" && (counted || !dashes))
			print heading
		heading = ""
	}
	END { flush(0) }'
}

# test_cmp_report expected actual: test_cmp after normalize_report.
test_cmp_report () {
	normalize_report <"$1" >"$2.expect-normalized" &&
	normalize_report <"$2" >"$2.normalized" &&
	test_cmp "$2.expect-normalized" "$2.normalized"
}

# Print the value of one folded path: folded_value PATH <folded
folded_value () {
	awk -v want="$1" '
	{
		i = match($0, / -?[0-9]+$/)
		if (i && substr($0, 1, i - 1) == want) {
			print substr($0, i + 1)
			found = 1
		}
	}
	END { if (!found) exit 1 }'
}

# ratio_between A B LO [HI]: succeed iff A > 0 and B is at least LO times A
# (and at most HI times A, if given): the bounds of a timed test's ratio.
ratio_between () {
	awk -v a="$1" -v b="$2" -v lo="$3" -v hi="${4:-}" \
		'BEGIN { exit !(a > 0 && b >= lo * a && (hi == "" || b <= hi * a)) }'
}

# check_time_relations SELF TOTAL: two folded exports of one profile
# (-m self, -m total).  Both list the same paths; for every path
# 0 <= self <= total, and the totals of its direct children (the paths one
# frame longer) add up to at most its total.  Prints every violation.
check_time_relations () {
	test -s "$1" && test -s "$2" || {
		echo "check_time_relations: empty export: $1 or $2"
		return 1
	}
	awk '
	function parse(line) {
		i = match(line, / -?[0-9]+$/)
		if (!i) {
			print "unparsed line in " FILENAME ": " line
			bad = 1
			return 0
		}
		P = substr(line, 1, i - 1)
		V = substr(line, i + 1) + 0
		return 1
	}
	FILENAME != prev { file++; prev = FILENAME }
	file == 1 { if (parse($0)) self[P] = V; next }
	file == 2 { if (parse($0)) { total[P] = V; order[++n] = P }; next }
	END {
		for (p in self)
			if (!(p in total)) { print "in self, not in total: " p; bad = 1 }
		for (k = 1; k <= n; k++) {
			p = order[k]
			if (!(p in self)) { print "in total, not in self: " p; bad = 1; continue }
			if (self[p] < 0) { print "self < 0: " p " " self[p]; bad = 1 }
			if (self[p] > total[p]) {
				print "self > total: " p ": " self[p] " > " total[p]
				bad = 1
			}
			parent = p
			if (sub(/;[^;]*$/, "", parent))
				kids[parent] += total[p]
		}
		for (p in kids)
			if ((p in total) && kids[p] > total[p]) {
				print "children total > total: " p ": " kids[p] " > " total[p]
				bad = 1
			}
		exit bad
	}' "$1" "$2"
}

# export_times PROFILE PREFIX [export options]: PREFIX.self, PREFIX.total and
# PREFIX.calls from one profile; check that self and total list the same
# paths, and calls those too but for the sample-only rows of a cpu-mode
# profile (code without hooks, [kernel]: no call counted, so -m calls
# leaves them out): each of those must rest on self samples of its own.
export_times () {
	_cp_prof=$1
	_cp_pfx=$2
	shift 2
	callprof export -f folded -m self "$@" "$_cp_prof" >"$_cp_pfx.self" &&
	callprof export -f folded -m total "$@" "$_cp_prof" >"$_cp_pfx.total" &&
	callprof export -f folded -m calls "$@" "$_cp_prof" >"$_cp_pfx.calls" &&
	sed 's/ [0-9-]*$//' "$_cp_pfx.calls" >"$_cp_pfx.paths" &&
	sed 's/ [0-9-]*$//' "$_cp_pfx.self" >"$_cp_pfx.self-paths" &&
	sed 's/ [0-9-]*$//' "$_cp_pfx.total" >"$_cp_pfx.total-paths" &&
	test_cmp "$_cp_pfx.self-paths" "$_cp_pfx.total-paths" &&
	LC_ALL=C sort "$_cp_pfx.paths" >"$_cp_pfx.paths.sorted" &&
	LC_ALL=C sort "$_cp_pfx.self-paths" >"$_cp_pfx.self-paths.sorted" &&
	LC_ALL=C comm -23 "$_cp_pfx.paths.sorted" "$_cp_pfx.self-paths.sorted" \
		>"$_cp_pfx.calls-only" &&
	test_must_be_empty "$_cp_pfx.calls-only" &&
	LC_ALL=C comm -13 "$_cp_pfx.paths.sorted" "$_cp_pfx.self-paths.sorted" \
		>"$_cp_pfx.sample-only" &&
	if test -s "$_cp_pfx.sample-only"; then
		callprof export -f folded -m samples "$@" "$_cp_prof" >"$_cp_pfx.samples" &&
		awk '
		FILENAME == ARGV[1] { want[$0] = 1; next }
		{
			i = match($0, / [0-9]+$/)
			p = substr($0, 1, i - 1)
			if (!(p in want))
				next
			seen[p] = 1
			if (substr($0, i + 1) + 0 <= 0) {
				print "sample-only row without self samples: " $0
				bad = 1
			}
		}
		END {
			for (p in want) if (!(p in seen)) { print "not in -m samples: " p; bad = 1 }
			exit bad
		}' "$_cp_pfx.sample-only" "$_cp_pfx.samples"
	fi
}

# npm_install: make the npm packages of tests/e2e/package.json (the real
# consumers of the export formats) importable by node scripts run with
# NODE_PATH=$NPM_DIR/node_modules, installing them into $NPM_DIR (below the
# build directory) when they are not there yet.  The scripts that run at
# the same time share it, hence the lock; CI's machine reaches npm's
# registry.  Prints why and fails if node or npm is missing or the install
# fails.
NPM_DIR=$CALLPROF_BUILD/npm
npm_install () {
	command -v node >/dev/null && command -v npm >/dev/null || {
		echo "npm_install: node and npm are needed (apt-get install nodejs npm)"
		return 1
	}
	mkdir -p "$NPM_DIR" && (
		flock 9 &&
		if ! cmp -s "$TEST_DIRECTORY/package.json" "$NPM_DIR/package.json" ||
		   ! test -f "$NPM_DIR/node_modules/.package-lock.json"; then
			cp "$TEST_DIRECTORY/package.json" "$NPM_DIR/package.json" &&
			npm install --prefix "$NPM_DIR" --no-audit --no-fund --silent </dev/null 2>&1 |
				grep -v "Unknown user config"
			test -f "$NPM_DIR/node_modules/.package-lock.json" || {
				echo "npm_install: npm install into $NPM_DIR failed"
				exit 1
			}
		fi
	) 9>"$NPM_DIR/.lock"
}

# pprof_sums FILE: decode the pprof export FILE with protoc
# (proto/profile.proto) into FILE.txt and print the sums of each sample
# value, space-separated, in the order of the sample types.
pprof_sums () {
	gzip -dc "$1" >"$1.raw" &&
	protoc --decode=perftools.profiles.Profile --proto_path="$TEST_DIRECTORY/../../proto" \
		"$TEST_DIRECTORY/../../proto/profile.proto" <"$1.raw" >"$1.txt" &&
	awk "
		/^sample \{/ { k = 0; in_sample = 1 }
		in_sample && /^  value: / { sum[k++] += \$2; if (k > n) n = k }
		/^}/ { in_sample = 0 }
		END { for (i = 0; i < n; i++) printf \"%s%d\", i ? \" \" : \"\", sum[i]; print \"\" }
	" "$1.txt"
}
