# shellcheck shell=bash disable=SC2034,SC2154
# bench/lib.sh - what bench/run and bench/smoke share: the build of the
# benchmark programs and the table of configurations to compare.
#
# Sourced (bash) after setting `here` to the bench/ directory.  Sets:
#   top, B (the build directory: $CALLPROF_BUILD, default ./build), BB
#   ($B/bench, where everything here is built), CC (${CC:-gcc})
#   BENCH_CONFIGS  the configurations, in table order
#
# A configuration NAME is three case arms below: bench_label (its row in the
# table), bench_available (can it run here; a peer profiler may not be
# installed) and bench_argv (the command running fib(N)).  A peer is added
# by adding its name to BENCH_CONFIGS and an arm to each, plus whatever it
# needs built in bench_build.  The floors ("plain", "empty", "clock") are
# the reference points every other configuration is measured against.

top=$(cd "$here/.." && pwd)
B=${CALLPROF_BUILD:-$top/build}
BB=$B/bench
CC=${CC:-gcc}

# Nothing from the caller's own profiling may leak into the measurements.
unset LD_PRELOAD
for _v in $(env | sed -n 's/^\(CALLPROF_[A-Za-z0-9_]*\)=.*/\1/p'); do
	test "$_v" = CALLPROF_BUILD || unset "$_v"
done
unset _v

BENCH_CONFIGS="plain empty clock callprof"

BENCH_CFLAGS=(-O2 -g -Wall -Wextra)
BENCH_SO_CFLAGS=(-O2 -g -Wall -Wextra -fPIC -shared -fvisibility=hidden -ftls-model=initial-exec)

bench_label()
{
	case "$1" in
	plain) echo "plain -O2 (no -finstrument-functions)" ;;
	empty) echo "instrumented + empty hooks" ;;
	clock) echo "instrumented + rdtsc-only hooks" ;;
	callprof) echo "instrumented + callprof record" ;;
	*) echo "$1" ;;
	esac
}

# bench_available NAME: exit status 0 if NAME can run on this machine.
bench_available()
{
	case "$1" in
	plain|empty|clock|callprof) return 0 ;;
	*) return 1 ;;
	esac
}

# bench_argv NAME N PROFILE: set the array `argv` to the command that runs
# fib(N) under configuration NAME, writing its profile (if any) to PROFILE.
bench_argv()
{
	case "$1" in
	plain) argv=("$BB/fib-plain" "$2") ;;
	empty) argv=(env "LD_PRELOAD=$BB/hooks-empty.so" "$BB/fib" "$2") ;;
	clock) argv=(env "LD_PRELOAD=$BB/hooks-clock.so" "$BB/fib" "$2") ;;
	callprof) argv=(env "CALLPROF_LIB=$B/libcallprof.so" "$B/callprof" record -o "$3" --
			"$BB/fib" "$2") ;;
	*) echo "bench: unknown configuration '$1'" >&2; return 1 ;;
	esac
}

# bench_compile OUT ARGS...: compile to a temporary name, then rename, so a
# concurrent bench/run and bench/smoke never run a half-written binary.
bench_compile()
{
	local out=$1

	shift
	"$CC" "$@" -o "$out.tmp.$$" && mv -f "$out.tmp.$$" "$out"
}

# bench_build: build the workload (plain and instrumented), the floor hooks
# and runstat into $BB.  Prints why and returns 1 on failure.
bench_build()
{
	local f

	for f in "$B/callprof" "$B/libcallprof.so"; do
		if ! test -f "$f"; then
			echo "bench: $f not found: run make first (or set CALLPROF_BUILD)" >&2
			return 1
		fi
	done
	if ! { mkdir -p "$BB" &&
	       bench_compile "$BB/runstat" "${BENCH_CFLAGS[@]}" "$here/runstat.c" &&
	       bench_compile "$BB/fib-plain" "${BENCH_CFLAGS[@]}" "$here/fib.c" &&
	       bench_compile "$BB/fib" "${BENCH_CFLAGS[@]}" -finstrument-functions "$here/fib.c" &&
	       bench_compile "$BB/hooks-empty.so" "${BENCH_SO_CFLAGS[@]}" "$here/hooks-empty.c" &&
	       bench_compile "$BB/hooks-clock.so" "${BENCH_SO_CFLAGS[@]}" "$here/hooks-clock.c"; }
	then
		echo "bench: build with $CC failed" >&2
		return 1
	fi
}

# fib_value N: fib(N) with fib(0) = 0, fib(1) = 1, as the workload prints it.
fib_value()
{
	local a=0 b=1 i t

	for ((i = 0; i < $1; i++)); do
		t=$((a + b))
		a=$b
		b=$t
	done
	echo "$a"
}

# fib_calls N: the calls one run of the workload makes: fib(N) makes
# 2*F(N+1) - 1 calls, and main is one more.
fib_calls()
{
	echo $((2 * $(fib_value $(($1 + 1))) - 1 + 1))
}

# profile_calls FILE: the total call count in a callprof profile.
profile_calls()
{
	"$B/callprof" export -f folded -m calls "$1" | awk '{ s += $NF } END { print s + 0 }'
}

# file_size FILE: its size in bytes.
file_size()
{
	wc -c <"$1" | tr -d ' '
}
