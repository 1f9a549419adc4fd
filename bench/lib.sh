# shellcheck shell=bash disable=SC2034,SC2154,SC2016
# bench/lib.sh - what bench/run and bench/smoke share: the build of the
# benchmark programs, the workloads, and the table of configurations to
# compare.
#
# Sourced (bash) after setting `here` to the bench/ directory.  Sets:
#   top, B (the build directory: $CALLPROF_BUILD, default ./build), BB
#   ($B/bench, where everything here is built), CC (${CC:-gcc})
#   BENCH_WORKLOADS  the workloads, in report order
#   BENCH_CONFIGS    the configurations, in table order
#
# A workload W is a program built seven ways by bench_build: $BB/W-plain
# (-O2 -g), $BB/W (the same plus -finstrument-functions), $BB/W-pg (plus -pg,
# for gprof), $BB/W-fp (plus -fno-omit-frame-pointer, for perf's call
# graphs), $BB/W-sleds (plus $SLEDS_FLAGS, as callprof cc --sleds builds),
# and with clang whatever CC is, $BB/W-clangsleds (the same) and $BB/W-ai
# (-finstrument-functions-after-inlining, callprof cc's clang build).  workload_cmd says how to run it; the size knobs are N (fib),
# MIXED_ITERS (mixed, mixed4) and BZIP2_MB (bzip2), set by the caller.
#
# A configuration NAME is three case arms below: bench_label (its row in the
# table), bench_available (can it run here; a peer profiler may not be
# installed) and bench_argv (the command running a workload under it), plus
# bench_report_argv for the command that turns its output into a report.
# A peer is added by adding its name to BENCH_CONFIGS and an arm to each.
# The floors ("plain", "empty", "clock", "clockord") are the reference points every
# other configuration is measured against.

top=$(cd "$here/.." && pwd)
B=${CALLPROF_BUILD:-$top/build}
BB=$B/bench
CC=${CC:-gcc}

# Nothing from the caller's own profiling may leak into the measurements.
unset LD_PRELOAD GMON_OUT_PREFIX
for _v in $(env | sed -n 's/^\(CALLPROF_[A-Za-z0-9_]*\)=.*/\1/p'); do
	test "$_v" = CALLPROF_BUILD || unset "$_v"
done
unset _v

BENCH_WORKLOADS="fib mixed mixed4 bzip2"
BENCH_CONFIGS="plain empty clock clockord callprof timing nooffcpu hybrid budget tscfast counting coverage sleds sledsrec clangplain clangsleds aihooks gprof uftrace callgrind perf"

# What `callprof cc --sleds` adds (cli/cmd-cc.c): the entry NOPs the
# runtime patches into calls when the program is profiled.
SLEDS_FLAGS=-fpatchable-function-entry=5,0

BENCH_CFLAGS=(-O2 -g -Wall -Wextra)
BENCH_SO_CFLAGS=(-O2 -g -Wall -Wextra -fPIC -shared -fvisibility=hidden -ftls-model=initial-exec)
# The builds of a workload: plain, instrumented, gprof, perf, sleds ($CC),
# and with clang: sleds and after-inlining hooks.  A leading "clang " says
# the variant is clang's whatever $CC is.
BENCH_VARIANT_FLAGS=(
	"plain:"
	"inst:-finstrument-functions"
	"pg:-pg"
	"fp:-fno-omit-frame-pointer"
	"sleds:$SLEDS_FLAGS"
	"clangsleds:clang $SLEDS_FLAGS"
	"ai:clang -finstrument-functions-after-inlining"
	"clangplain:clang"
)

# The Debian source package the bzip2 workload builds, and where.
BZIP2_SRC=$BB/src
BZIP2_FILES="blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c bzip2.c"

bench_label()
{
	case "$1" in
	plain) echo "plain -O2 (no -finstrument-functions)" ;;
	empty) echo "instrumented + empty hooks" ;;
	clock) echo "instrumented + rdtsc-only hooks" ;;
	clockord) echo "instrumented + lfence;rdtsc-only hooks" ;;
	callprof) echo "callprof record (sampled CPU time)" ;;
	timing) echo "callprof record --time=clock" ;;
	nooffcpu) echo "callprof record --no-offcpu" ;;
	hybrid) echo "callprof record --time=clock + 1 kHz sampled lines" ;;
	budget) echo "callprof record --time=clock --budget=5" ;;
	tscfast) echo "callprof record --time=clock --clock=tsc-fast" ;;
	counting) echo "callprof record --time=none" ;;
	coverage) echo "callprof record --mode=coverage" ;;
	sleds) echo "sleds build, not profiled" ;;
	sledsrec) echo "sleds build, callprof record" ;;
	clangplain) echo "clang plain -O2 (the clang rows' reference)" ;;
	clangsleds) echo "clang sleds build, callprof record" ;;
	aihooks) echo "clang after-inlining hooks, callprof record" ;;
	gprof) echo "gprof (-pg build)" ;;
	uftrace) echo "uftrace record" ;;
	callgrind) echo "valgrind --tool=callgrind" ;;
	perf) echo "perf record -g (cpu-clock)" ;;
	*) echo "$1" ;;
	esac
}

# bench_record_works OPTION...: `callprof record OPTION...` runs the
# instrumented fib and writes a profile (the modes and clocks came after the
# bench).
bench_record_works()
{
	local p=$BB/probe.$$.cprof r=1

	rm -f "$p"
	if "$B/callprof" record "$@" -o "$p" -- "$BB/fib" 5 >/dev/null 2>&1 && test -s "$p"; then
		r=0
	fi
	rm -f "$p"
	return $r
}

# bench_sleds_work: 0 if `callprof record` counts the calls of a sledded
# build (the runtime patches sleds); else 1 with `why` set.  Call after
# bench_build.  Until the runtime patches them, a sledded program runs
# under record at its plain speed and the profile has no calls.
bench_sleds_work()
{
	local p=$BB/probe-sleds.$$.cprof n

	why=
	if ! test -x "$BB/fib-sleds"; then
		why="$CC cannot build with $SLEDS_FLAGS"
		return 1
	fi
	rm -f "$p"
	if ! "$B/callprof" record -o "$p" -- "$BB/fib-sleds" 5 >/dev/null 2>&1; then
		rm -f "$p"
		why="callprof record of a sledded build fails"
		return 1
	fi
	n=0
	test -s "$p" && n=$(profile_calls "$p" 2>/dev/null)
	rm -f "$p"
	test "${n:-0}" -gt 0 && return 0
	why="callprof record counts no calls in a sledded build (this runtime does not patch sleds)"
	return 1
}

# bench_available NAME: exit status 0 if NAME can run on this machine;
# otherwise sets `why` to the reason.  Call after bench_build.
bench_available()
{
	why=
	case "$1" in
	plain|empty|clock|clockord|callprof) return 0 ;;
	timing)
		bench_record_works --time=clock && return 0
		why="callprof record --time=clock does not work in this build" ;;
	counting|coverage)
		bench_record_works --mode="$1" && return 0
		why="callprof record --mode=$1 does not work in this build" ;;
	nooffcpu)
		bench_record_works --no-offcpu && return 0
		why="callprof record --no-offcpu does not work in this build" ;;
	hybrid) return 0 ;;
	sleds|sledsrec)
		test -x "$BB/fib-sleds" && return 0
		why="$CC cannot build with $SLEDS_FLAGS (gcc 8 and clang 10 can)" ;;
	clangplain)
		test -x "$BB/fib-clangplain" && return 0
		why="no clang" ;;
	clangsleds)
		test -x "$BB/fib-clangsleds" && return 0
		why="no clang that builds with $SLEDS_FLAGS (clang 10 can)" ;;
	aihooks)
		test -x "$BB/fib-ai" && return 0
		why="no clang with -finstrument-functions-after-inlining" ;;
	budget)
		bench_record_works --time=clock --budget=5 && return 0
		why="callprof record --budget does not work in this build" ;;
	tscfast)
		bench_record_works --time=clock --clock=tsc-fast && return 0
		why="callprof record --clock=tsc-fast does not work in this build" ;;
	gprof)
		command -v gprof >/dev/null && test -x "$BB/fib-pg" && return 0
		why="gprof or a -pg build with $CC not available" ;;
	uftrace)
		command -v uftrace >/dev/null && return 0
		why="uftrace not installed (apt-get install uftrace)" ;;
	callgrind)
		command -v valgrind >/dev/null && return 0
		why="valgrind not installed (apt-get install valgrind)" ;;
	perf)
		if command -v perf >/dev/null &&
		   perf record -q -g --no-bpf-event -e cpu-clock -o "$BB/probe.$$.perf" -- true \
			>/dev/null 2>&1; then
			rm -f "$BB/probe.$$.perf"
			return 0
		fi
		rm -f "$BB/probe.$$.perf"
		why="perf record does not work here (not installed, or perf_event_paranoid)" ;;
	*) why="unknown configuration" ;;
	esac
	return 1
}

# bench_variant NAME: which build of the workload configuration NAME runs.
bench_variant()
{
	case "$1" in
	plain|callgrind) echo plain ;;
	gprof) echo pg ;;
	perf) echo fp ;;
	sleds|sledsrec) echo sleds ;;
	clangplain) echo clangplain ;;
	clangsleds) echo clangsleds ;;
	aihooks) echo ai ;;
	*) echo inst ;;
	esac
}

# workload_label W: what W does at its full size, for the table's title.
workload_label()
{
	case "$1" in
	fib) echo "fib($N): naive recursion, nothing but calls" ;;
	mixed) echo "mixed $MIXED_ITERS: checksum, sort, hashing between many small calls" ;;
	mixed4) echo "mixed $MIXED_ITERS 4: the same work split over 4 threads" ;;
	bzip2) echo "bzip2 $(bzip2_version): compress, then decompress, $BZIP2_MB MB of text" ;;
	esac
}

# workload_size W SCALE: the argument(s) of W at SCALE (full, or small:
# about 1/8 of the work), as shown in notes.
workload_size()
{
	case "$1:$2" in
	fib:full) echo "fib($N)" ;;
	fib:small) echo "fib($((N - 4)))" ;;
	mixed*:full) echo "$MIXED_ITERS steps" ;;
	mixed*:small) echo "$((MIXED_ITERS / 8)) steps" ;;
	bzip2:full) echo "$BZIP2_MB MB" ;;
	bzip2:small) echo "$(bzip2_small_kb) KB" ;;
	esac
}

bzip2_small_kb()
{
	echo $((BZIP2_MB * 1024 / 8))
}

# workload_exe W VARIANT: the program of workload W built as VARIANT.
workload_exe()
{
	local name=$1

	test "$name" = mixed4 && name=mixed
	case "$2" in
	inst) echo "$BB/$name" ;;
	*) echo "$BB/$name-$2" ;;
	esac
}

# workload_cmd W VARIANT SCALE SCRATCH: set the array `wcmd` to the command
# running workload W built as VARIANT (plain, inst, pg, fp) at SCALE (full
# or small), which may use the path SCRATCH for a temporary file.  Every
# workload prints one line that must not depend on the configuration.
workload_cmd()
{
	local exe

	exe=$(workload_exe "$1" "$2")
	case "$1:$3" in
	fib:full) wcmd=("$exe" "$N") ;;
	fib:small) wcmd=("$exe" $((N - 4))) ;;
	mixed:full) wcmd=("$exe" "$MIXED_ITERS") ;;
	mixed:small) wcmd=("$exe" $((MIXED_ITERS / 8))) ;;
	mixed4:full) wcmd=("$exe" "$MIXED_ITERS" 4) ;;
	mixed4:small) wcmd=("$exe" $((MIXED_ITERS / 8)) 4) ;;
	bzip2:*)
		# Two processes, as a user runs it; the sum of the decompressed
		# bytes is the check.
		wcmd=(sh -c '"$1" -c <"$2" >"$3" && "$1" -dc <"$3" | cksum && rm -f "$3"' sh
		      "$exe" "$BB/bzip2-in-$3.txt" "$4.bz2") ;;
	*) echo "bench: unknown workload '$1:$3'" >&2; return 1 ;;
	esac
}

# bench_argv NAME W SCALE DIR: set the array `argv` to the command that runs
# workload W at SCALE under configuration NAME, writing its output (profile,
# trace) into the existing empty directory DIR.
bench_argv()
{
	local c=$1 dir=$4

	workload_cmd "$2" "$(bench_variant "$c")" "$3" "$dir.scratch" || return 1
	case "$c" in
	plain|sleds|clangplain) argv=("${wcmd[@]}") ;;
	sledsrec|clangsleds|aihooks)
		argv=("$B/callprof" record -o "$dir/profile.cprof" -- "${wcmd[@]}") ;;
	empty) argv=(env "LD_PRELOAD=$BB/hooks-empty.so" "${wcmd[@]}") ;;
	clock) argv=(env "LD_PRELOAD=$BB/hooks-clock.so" "${wcmd[@]}") ;;
	clockord) argv=(env "LD_PRELOAD=$BB/hooks-clock-ordered.so" "${wcmd[@]}") ;;
	callprof) argv=("$B/callprof" record -o "$dir/profile.cprof" -- "${wcmd[@]}") ;;
	timing)
		argv=("$B/callprof" record --time=clock -o "$dir/profile.cprof" -- "${wcmd[@]}") ;;
	nooffcpu)
		argv=("$B/callprof" record --no-offcpu -o "$dir/profile.cprof" -- "${wcmd[@]}") ;;
	hybrid)
		argv=(env CALLPROF_SAMPLE=1000 "$B/callprof" record --time=clock -o "$dir/profile.cprof" --
		      "${wcmd[@]}") ;;
	budget)
		argv=("$B/callprof" record --time=clock --budget=5 -o "$dir/profile.cprof" --
		      "${wcmd[@]}") ;;
	tscfast)
		argv=("$B/callprof" record --time=clock --clock=tsc-fast -o "$dir/profile.cprof" --
		      "${wcmd[@]}") ;;
	counting|coverage)
		argv=("$B/callprof" record --mode="$c" -o "$dir/profile.cprof" -- "${wcmd[@]}") ;;
	gprof) argv=(env "GMON_OUT_PREFIX=$dir/gmon.out" "${wcmd[@]}") ;;
	uftrace)
		# --force: the bzip2 workload starts with sh, which has no hooks.
		argv=(uftrace record --force -d "$dir/uftrace.data" "${wcmd[@]}") ;;
	callgrind)
		argv=(valgrind --tool=callgrind -q --trace-children=yes
		      "--trace-children-skip=*/cksum" "--callgrind-out-file=$dir/callgrind.out.%p"
		      "${wcmd[@]}") ;;
	perf)
		# --no-bpf-event: else its side-band thread holds the exit up to a
		# second, a fixed cost that has nothing to do with the calls.
		argv=(perf record -q -g --no-bpf-event -e cpu-clock -o "$dir/perf.data" --
		      "${wcmd[@]}") ;;
	*) echo "bench: unknown configuration '$c'" >&2; return 1 ;;
	esac
}

# bench_report_argv NAME W DIR: set the array `argv` to the command that
# reports what NAME wrote to DIR running W (its default report, output to be
# discarded); returns 1 if NAME writes nothing to report on.
bench_report_argv()
{
	local c=$1 dir=$3

	case "$c" in
	sledsrec|clangsleds|aihooks)
		# A runtime that does not patch sleds writes no profile.
		compgen -G "$dir/profile.cprof*" >/dev/null || return 1
		argv=(sh -c 'for f in "$1"/profile.cprof*; do "$2" report "$f" || exit; done'
		      sh "$dir" "$B/callprof") ;;
	callprof|timing|nooffcpu|hybrid|budget|tscfast|counting|coverage)
		# One report per process that wrote a profile (bzip2 has two).
		argv=(sh -c 'for f in "$1"/profile.cprof*; do "$2" report "$f" || exit; done'
		      sh "$dir" "$B/callprof") ;;
	gprof) argv=(gprof -b "$(workload_exe "$2" pg)" "$dir"/gmon.out.*) ;;
	uftrace) argv=(uftrace report -d "$dir/uftrace.data") ;;
	callgrind) argv=(sh -c 'for f in "$1"/callgrind.out.*; do callgrind_annotate "$f" || exit; done'
			 sh "$dir") ;;
	perf) argv=(perf report -i "$dir/perf.data" --stdio) ;;
	*) return 1 ;;
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

# bench_build_variants NAME SOURCES...: NAME-plain, NAME, NAME-pg, NAME-fp,
# NAME-sleds, NAME-clangsleds, NAME-ai, NAME-clangplain (the reference of
# the clang builds).  Only the plain and instrumented
# builds must succeed: without the others (a compiler without -pg or
# patchable entries, no clang) their configurations are unavailable.
bench_build_variants()
{
	local name=$1 v flags out cc

	shift
	for v in "${BENCH_VARIANT_FLAGS[@]}"; do
		flags=${v#*:}
		cc=$CC
		case "$flags" in
		# bench/mixed.c's noipa is gcc's: clang ignores it, and says so.
		clang|"clang "*) cc=clang flags="${flags#clang} -Wno-unknown-attributes" ;;
		esac
		case "${v%%:*}" in
		inst) out=$BB/$name ;;
		*) out=$BB/$name-${v%%:*} ;;
		esac
		# shellcheck disable=SC2086
		if ! { command -v "$cc" >/dev/null &&
		       CC=$cc bench_compile "$out" "${BENCH_CFLAGS[@]}" $flags -pthread "$@"; }; then
			case "${v%%:*}" in
			plain|inst) return 1 ;;
			esac
			rm -f "$out"
		fi
	done
}

# bench_build: build the workloads (all four ways), the floor hooks, runstat
# and gendata into $BB.  Prints why and returns 1 on failure.  The bzip2
# workload is built separately, by bench_build_bzip2.
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
	       bench_compile "$BB/gendata" "${BENCH_CFLAGS[@]}" "$here/gendata.c" &&
	       bench_build_variants fib "$here/fib.c" &&
	       bench_build_variants mixed "$here/mixed.c" &&
	       bench_compile "$BB/hooks-empty.so" "${BENCH_SO_CFLAGS[@]}" "$here/hooks-empty.c" &&
	       bench_compile "$BB/hooks-clock.so" "${BENCH_SO_CFLAGS[@]}" "$here/hooks-clock.c" &&
	       bench_compile "$BB/hooks-clock-ordered.so" "${BENCH_SO_CFLAGS[@]}" -DORDERED \
		       "$here/hooks-clock.c"; }
	then
		echo "bench: build with $CC failed" >&2
		return 1
	fi
}

# bzip2_dir: the unpacked bzip2 source, if there is one.
bzip2_dir()
{
	bench_src_dir bzip2 bzlib.c
}

bzip2_version()
{
	local d

	d=$(bzip2_dir) || { echo "(no source)"; return; }
	echo "${d##*/bzip2-}"
}

# bench_src_dir PKG FILE: the unpacked source of Debian package PKG under
# $BZIP2_SRC (PKG-VERSION/), if there is one holding FILE.
bench_src_dir()
{
	local d

	for d in "$BZIP2_SRC/$1"-*/; do
		test -f "$d/$2" && { echo "${d%/}"; return 0; }
	done
	return 1
}

# bench_fetch_bzip2: bench_fetch_source for bzip2.
bench_fetch_bzip2()
{
	bench_fetch_source bzip2 bzlib.c
}

# bench_fetch_source PKG FILE: `apt-get source PKG` into $BZIP2_SRC unless
# a PKG-*/FILE is there.  As root, first adds a deb-src entry for the
# machine's own Debian mirrors if none is configured (/etc/apt/sources.list.d/
# callprof-bench-src.sources) and runs apt-get update, and installs
# dpkg-dev if dpkg-source is missing.  Returns 1 with `why` set on failure.
bench_fetch_source()
{
	local pkg=$1 file=$2
	local list=/etc/apt/sources.list.d/callprof-bench-src.sources
	local deb=/etc/apt/sources.list.d/debian.sources
	local apt=(apt-get -q -o Acquire::Retries=1 -o Acquire::http::Timeout=20)
	local log=$BZIP2_SRC/apt-$pkg.log

	why=
	bench_src_dir "$pkg" "$file" >/dev/null && return 0
	mkdir -p "$BZIP2_SRC" || { why="cannot create $BZIP2_SRC"; return 1; }
	: >"$log"
	if ! command -v apt-get >/dev/null; then
		why="no apt-get: not a Debian machine"
		return 1
	fi
	if ! grep -rqsE '^[[:space:]]*(deb-src|Types:.*deb-src)' /etc/apt/sources.list \
		/etc/apt/sources.list.d/; then
		if test "$(id -u)" != 0; then
			why="no deb-src entry in apt's sources, and not root to add one"
			return 1
		fi
		if ! test -f "$deb"; then
			why="no deb-src entry and no $deb to copy one from"
			return 1
		fi
		echo "bench: adding $list (deb-src of $deb), apt-get update" >&2
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
		/(^|\n)Types:[^\n]*deb/ {
			out = "Types: deb-src"
			n = split($0, l, "\n")
			for (i = 1; i <= n; i++)
				if (l[i] ~ /^(URIs|Suites|Components|Signed-By):/)
					out = out "\n" l[i]
			print out
		}' "$deb" >"$list.tmp" && mv -f "$list.tmp" "$list" || {
			why="cannot write $list"
			return 1
		}
		"${apt[@]}" update >>"$log" 2>&1 || {
			why="apt-get update failed (no network?), see $log"
			return 1
		}
	fi
	if ! command -v dpkg-source >/dev/null; then
		if test "$(id -u)" != 0; then
			why="dpkg-source missing (apt-get install dpkg-dev)"
			return 1
		fi
		echo "bench: installing dpkg-dev for apt-get source" >&2
		"${apt[@]}" install -y dpkg-dev >>"$log" 2>&1 || {
			why="apt-get install dpkg-dev failed, see $log"
			return 1
		}
	fi
	echo "bench: apt-get source $pkg into $BZIP2_SRC" >&2
	if ! (cd "$BZIP2_SRC" && "${apt[@]}" -o APT::Sandbox::User=root source "$pkg") \
		>>"$log" 2>&1; then
		# A stale package list may name a version the mirror has dropped.
		if test "$(id -u)" = 0 && "${apt[@]}" update >>"$log" 2>&1 &&
		   (cd "$BZIP2_SRC" && "${apt[@]}" -o APT::Sandbox::User=root source "$pkg") \
			>>"$log" 2>&1; then
			:
		else
			why="apt-get source $pkg failed (no network?), see $log"
			return 1
		fi
	fi
	bench_src_dir "$pkg" "$file" >/dev/null && return 0
	why="apt-get source $pkg left no $pkg-*/$file in $BZIP2_SRC"
	return 1
}

# bench_build_bzip2: fetch (bench_fetch_bzip2) and build bzip2 four ways
# from its sources, as its Makefile does but with our flags, and generate
# its inputs: BZIP2_MB MB and 1/8 of that.  Returns 1 with `why` set.
bench_build_bzip2()
{
	local d f srcs=() kb saved r

	bench_fetch_bzip2 || return 1
	d=$(bzip2_dir)
	for f in $BZIP2_FILES; do
		srcs+=("$d/$f")
	done
	# Rebuilt when this file, which holds the flags, changes.
	if ! test -x "$BB/bzip2" || ! test -x "$BB/bzip2-plain" || test "$here/lib.sh" -nt "$BB/bzip2"
	then
		saved=("${BENCH_CFLAGS[@]}")
		BENCH_CFLAGS=(-O2 -g -w -D_FILE_OFFSET_BITS=64)
		bench_build_variants bzip2 "${srcs[@]}" && r=0 || r=1
		BENCH_CFLAGS=("${saved[@]}")
		if test $r != 0; then
			why="building bzip2 from $d with $CC failed"
			return 1
		fi
	fi
	kb=$(bzip2_small_kb)
	for f in "full:$((BZIP2_MB * 1024 * 1024))" "small:$((kb * 1024))"; do
		if test "$(file_size "$BB/bzip2-in-${f%%:*}.txt" 2>/dev/null)" != "${f#*:}"; then
			"$BB/gendata" "${f#*:}" >"$BB/bzip2-in-${f%%:*}.txt" || {
				why="gendata failed"
				return 1
			}
		fi
	done
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

# profile_calls FILE...: the total call count in callprof profiles.
profile_calls()
{
	local f

	for f; do
		"$B/callprof" export -f folded -m calls "$f" || return 1
	done | awk '{ s += $NF } END { print s + 0 }'
}

# file_size FILE: its size in bytes.
file_size()
{
	wc -c <"$1" | tr -d ' '
}

# dir_size DIR: the bytes in the files under DIR.
dir_size()
{
	find "$1" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'
}

# lines_bytes FILE: the size of the LINES section (sampled addresses) of the
# profile FILE, from its section table (docs/profile-format.md); 0 if none.
lines_bytes()
{
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", d, 20)[0]
print(sum(struct.unpack_from("<IIQQ", d, 48 + 24 * i)[3]
          for i in range(n) if struct.unpack_from("<IIQQ", d, 48 + 24 * i)[0] == 11))
PY
}

# truth_fetch P: the Debian source of truth program P (bzip2, lua, sqlite)
# under $BZIP2_SRC (bench_fetch_source).  Returns 1 with `why` set.
truth_fetch()
{
	case "$1" in
	bzip2) bench_fetch_source bzip2 bzlib.c ;;
	lua) bench_fetch_source lua5.4 src/lvm.c ;;
	sqlite) bench_fetch_source sqlite3 test/speedtest1.c ;;
	*) why="unknown program $1"; return 1 ;;
	esac
}

# truth_build P OUT CC [FLAGS...]: build truth program P (bzip2, lua,
# sqlite) from its fetched sources (truth_fetch) into OUT, with the
# compiler command CC FLAGS... (bench/truth's builds, bench/sleds-cost's).
# Inputs and the SQLite amalgamation go to $BB/truth.
truth_build()
{
	local p=$1 out=$2 d f srcs=() t=$BB/truth

	shift 2
	mkdir -p "$t"
	case "$p" in
	bzip2)
		d=$(bzip2_dir)
		for f in $BZIP2_FILES; do srcs+=("$d/$f"); done
		set -- "$@" -D_FILE_OFFSET_BITS=64 "${srcs[@]}" ;;
	lua)
		d=$(bench_src_dir lua5.4 src/lvm.c)
		mkdir -p "$t/lua-inc"
		echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' >"$t/lua-inc/lua5.4-deb-multiarch.h"
		for f in "$d"/src/*.c; do
			case "$f" in */luac.c) ;; *) srcs+=("$f") ;; esac
		done
		# A fixed string-hash seed (Lua seeds it from the time and addresses):
		# with ASLR off (truth_cmd), every run then does the same work.
		set -- "$@" -I"$t/lua-inc" -DLUA_COMPAT_5_3 -DLUA_USE_LINUX '-Dluai_makeseed(L)=0' \
			"${srcs[@]}" -lm -ldl ;;
	sqlite)
		d=$(bench_src_dir sqlite3 test/speedtest1.c)
		if ! test -f "$t/sqlite-amalg/sqlite3.c"; then
			echo "bench: making the sqlite3.c amalgamation (needs tclsh)" >&2
			mkdir -p "$t/sqlite-amalg"
			(cd "$t/sqlite-amalg" && "$d/configure" --disable-tcl >configure.log 2>&1 &&
			 make sqlite3.c >make.log 2>&1) || return 1
		fi
		set -- "$@" -I"$t/sqlite-amalg" -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION \
			"$d/test/speedtest1.c" "$t/sqlite-amalg/sqlite3.c" -lm ;;
	*) echo "bench: unknown truth program '$p'" >&2; return 1 ;;
	esac
	"$@" -o "$out.tmp.$$" && mv -f "$out.tmp.$$" "$out"
}

# truth_cmd P EXE: set `cmd` to the command running truth program P built
# as EXE (inputs: BZIP2_MB, LUA_N, SQLITE_SIZE; bzip2's in $BB/truth), with
# address-space randomisation off where setarch can, so that runs of a
# program differ as little as the machine lets them.
truth_cmd()
{
	case "$1" in
	bzip2) cmd=("$2" -9 -c "$BB/truth/bzip2-in.txt") ;;
	lua) cmd=("$2" "$here/truth-sort.lua" "$LUA_N") ;;
	sqlite) cmd=("$2" --memdb --size "$SQLITE_SIZE") ;;
	esac
	if setarch "$(uname -m)" -R true 2>/dev/null; then
		cmd=(setarch "$(uname -m)" -R "${cmd[@]}")
	fi
}

# truth_input: bzip2's input for the truth programs, BZIP2_MB MB, made by
# gendata (bench_build) unless it is there.
truth_input()
{
	local t=$BB/truth

	mkdir -p "$t"
	if test "$(file_size "$t/bzip2-in.txt" 2>/dev/null)" != $((BZIP2_MB * 1048576)); then
		"$BB/gendata" $((BZIP2_MB * 1048576)) >"$t/bzip2-in.txt"
	fi
}
