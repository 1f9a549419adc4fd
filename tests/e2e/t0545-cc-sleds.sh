#!/bin/sh
# matrix: cc-opt
test_description='callprof cc --sleds: patchable entries reach the compiler, however it is run'
. "$(dirname "$0")/lib.sh"

case "$CC" in
clang*) CXX=clang++ ;;
*) CXX=g++ ;;
esac
CFLAGS="$OPT $CP_TEST_CFLAGS -Wall -I$WORKLOADS"
export CALLPROF_CC="$CC" CALLPROF_CXX="$CXX"
unset CALLPROF_VERBOSE

# sled_at FILE SYMBOL...: each SYMBOL's code in FILE (an object, a program
# or a shared library) starts with the sled callprof's runtime patches,
# after an endbr64 if there is one: five 1-byte NOPs (gcc) or one 5-byte
# NOP (clang).  In a linked file, __patchable_function_entries also lists
# the sled's address.
sled_at () {
	_f=$1
	shift
	readelf -SW "$_f" | grep -q " __patchable_function_entries " || {
		echo "$_f: no __patchable_function_entries section"
		return 1
	}
	for _s
	do
		objdump -d --disassemble="$_s" "$_f" >dis &&
		awk -F '\t' -v sym="$_s" '
			$0 ~ "<" sym ">:$" { on = 1; next }
			on && /^ *[0-9a-f]+:\t/ {
				if (first == "") first = $1
				n = split($2, b, " ")
				for (i = 1; i <= n; i++) bytes = bytes " " b[i]
				if (length(bytes) >= 27) exit
			}
			on && /^$/ { exit }
			END {
				sub(/^ f3 0f 1e fa/, "", bytes)
				sub(/^ +/, "", bytes)
				bytes = substr(bytes, 1, 14)
				if (bytes != "90 90 90 90 90" && bytes !~ /^0f 1f 44 00 [0-9a-f][0-9a-f]$/) {
					printf "%s: no sled at its entry, it starts %s\n", sym, bytes
					exit 1
				}
			}' dis || { cat dis; return 1; }
		readelf -hW "$_f" | grep -q "Type: *REL " && continue
		_addr=$(nm "$_f" | awk -v s="$_s" '$3 == s && $2 ~ /[tT]/ { print $1; exit }')
		case "$(awk -F '\t' -v sym="$_s" '$0 ~ "<" sym ">:$" { on = 1; next }
			on && /^ *[0-9a-f]+:\t/ { print $2; exit }' dis)" in
		"f3 0f 1e fa"*) _addr=$(printf "%x" $((0x$_addr + 4))) ;;
		esac
		python3 - "$_f" "$_addr" <<-\EOF || return 1
		import struct, sys
		path, want = sys.argv[1], int(sys.argv[2], 16)
		d = open(path, "rb").read()
		shoff, = struct.unpack_from("<Q", d, 0x28)
		shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
		def sh(i):
		    return struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)
		strtab = sh(shstrndx)
		found = []
		for i in range(shnum):
		    name, typ, flags, addr, off, size = sh(i)[:6]
		    end = d.index(b"\0", strtab[4] + name)
		    if d[strtab[4] + name:end] == b"__patchable_function_entries":
		        found += struct.unpack_from("<%dQ" % (size // 8), d, off)
		if want not in found:
		    print("%s: 0x%x not in __patchable_function_entries %s" %
		          (path, want, [hex(x) for x in found]))
		    sys.exit(1)
		EOF
	done
}

# no_hooks FILE: FILE calls no profiling hook.
no_hooks () {
	! nm "$1" | grep __cyg_profile_func
}

# fakecc: answers callprof's question as the real compiler does, and
# otherwise writes its arguments, one a line, to fakecc.args.
cat >fakecc <<EOF
#!/bin/sh
case " \$* " in *" -dM "*) exec $CC "\$@" ;; esac
printf "%s\\n" "\$@" >fakecc.args
EOF
chmod +x fakecc
# What --sleds adds after -g: clang also records its flags in the debug
# data, for record's overhead verdict to tell a sleds build (gcc always
# does); gcc also -fno-ipa-ra (callprof-cc(1)).
case "$CC" in
clang*) SLED_ADDS="-fpatchable-function-entry=5,0 -grecord-command-line" ;;
*) SLED_ADDS="-fpatchable-function-entry=5,0 -fno-ipa-ra" ;;
esac

test_expect_success 'callprof cc --sleds compiles and links in one call' '
	callprof cc --sleds $CFLAGS -o t-one "$WORKLOADS/s-cc-main.c" "$WORKLOADS/s-cc-util.c" &&
	sled_at t-one main run twice leaf &&
	no_hooks t-one &&
	./t-one
'

# record --sample of a sledded program: its runtime patches the sleds and
# samples (the exact tree), as for a hooks build; it is not sampled as a
# program built without callprof (stacks unwound, counts of samples).
test_expect_success 'record --sample of a sleds build: the exact tree, CPU time sampled at the rate' '
	callprof record -o one.cprof -- ./t-one 2>/dev/null &&
	callprof export -f folded -m calls one.cprof >one.calls &&
	callprof record --sample=2000 -o one-s.cprof -- ./t-one 2>err &&
	grep "^callprof: wrote one-s.cprof: 1 thread, [0-9]* calls, .* at 2000 Hz" err &&
	callprof export -f folded -m calls one-s.cprof >one-s.calls &&
	test_cmp one.calls one-s.calls
'

test_expect_success 'callprof cc --sleds -c, then a link of the objects' '
	callprof cc --sleds $CFLAGS -c -o main.o "$WORKLOADS/s-cc-main.c" &&
	callprof cc --sleds $CFLAGS -c -o util.o "$WORKLOADS/s-cc-util.c" &&
	sled_at main.o main run &&
	sled_at util.o twice leaf &&
	readelf -S util.o | grep -q "\.debug_info" &&
	callprof cc --sleds $CFLAGS -o t-two main.o util.o &&
	sled_at t-two main run twice leaf &&
	./t-two
'

test_expect_success 'callprof c++ --sleds: C++, in one call and in two' '
	callprof c++ --sleds $CFLAGS -o t-vec "$WORKLOADS/s-cc-vec.cc" &&
	sled_at t-vec main _Z5totali &&
	no_hooks t-vec &&
	./t-vec &&
	callprof c++ --sleds $CFLAGS -c -o vec.o "$WORKLOADS/s-cc-vec.cc" &&
	sled_at vec.o main _Z5totali &&
	callprof c++ --sleds $CFLAGS -o t-vec2 vec.o &&
	sled_at t-vec2 main _Z5totali &&
	./t-vec2
'

test_expect_success 'callprof cc --sleds -fPIC -shared: a shared library, and a program using it' '
	callprof cc --sleds $CFLAGS -fPIC -shared -o libutil.so "$WORKLOADS/s-cc-util.c" &&
	sled_at libutil.so twice leaf &&
	callprof cc --sleds $CFLAGS -o t-lib "$WORKLOADS/s-cc-main.c" -L. -lutil -Wl,-rpath,"$PWD" &&
	sled_at t-lib main run &&
	./t-lib
'

test_expect_success 'callprof --sleds COMPILER (a launcher) and CC="callprof cc --sleds" make' '
	cc_path=$(command -v "$CC") &&
	env -u CALLPROF_CC callprof --sleds "$cc_path" -v $CFLAGS -o t-path \
		"$WORKLOADS/s-cc-main.c" "$WORKLOADS/s-cc-util.c" 2>err &&
	grep -x "callprof $cc_path: added -g $SLED_ADDS" err &&
	sled_at t-path twice leaf &&
	printf "VPATH = %s\nt-make: s-cc-main.o s-cc-util.o\n\t\$(CC) \$(CFLAGS) -o \$@ s-cc-main.o s-cc-util.o\n" \
		"$WORKLOADS" >Makefile &&
	CC="callprof cc --sleds" CFLAGS="$CFLAGS" make -f Makefile >make.out 2>&1 &&
	cat make.out &&
	sled_at s-cc-util.o twice leaf &&
	sled_at t-make main run twice leaf
'

# logged LOG COMMAND...: COMMAND's output to LOG, shown if it fails.
logged () {
	_log=$1
	shift
	"$@" >"$_log" 2>&1 || { _st=$?; cat "$_log"; return $_st; }
}

if command -v cmake >/dev/null
then
test_expect_success 'CMAKE_C_COMPILER_LAUNCHER="callprof;--sleds": C and C++ targets' '
	mkdir -p cm/src cm/build &&
	cp "$WORKLOADS"/s-cc-main.c "$WORKLOADS"/s-cc-util.c "$WORKLOADS"/s-cc-vec.cc \
		"$WORKLOADS"/s-cc.h "$WORKLOADS"/workload.h cm/src/ &&
	cat >cm/src/CMakeLists.txt <<-\EOT &&
	cmake_minimum_required(VERSION 3.10)
	project(t0545 C CXX)
	add_executable(t-cmake s-cc-main.c s-cc-util.c)
	add_library(cmutil SHARED s-cc-util.c)
	add_executable(t-cmake-vec s-cc-vec.cc)
	EOT
	(
		cd cm/build &&
		logged ../configure.out env -u CALLPROF_CC -u CALLPROF_CXX cmake -G "Unix Makefiles" \
			-DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
			"-DCMAKE_C_COMPILER_LAUNCHER=callprof;--sleds" \
			"-DCMAKE_CXX_COMPILER_LAUNCHER=callprof;--sleds" \
			-DCMAKE_C_FLAGS="$OPT $CP_TEST_CFLAGS" -DCMAKE_CXX_FLAGS="$OPT $CP_TEST_CFLAGS" \
			../src &&
		logged ../build.out env -u CALLPROF_CC -u CALLPROF_CXX make VERBOSE=1
	) &&
	grep "^callprof --sleds /[^ ]*/$CC .*s-cc-util.c$" cm/build.out &&
	sled_at cm/build/t-cmake main run twice leaf &&
	sled_at cm/build/libcmutil.so twice leaf &&
	sled_at cm/build/t-cmake-vec main _Z5totali &&
	cm/build/t-cmake && cm/build/t-cmake-vec
'
else
	test_skip 'CMAKE_C_COMPILER_LAUNCHER="callprof;--sleds": C and C++ targets' \
		'cmake is not installed (tools/install-deps does not install it)'
fi

test_expect_success '--sleds anywhere among the arguments is ours; as -o'"'"'s value it is a name' '
	env CALLPROF_CC=./fakecc callprof cc -c -O1 --sleds "a b.c" -o x.o &&
	printf "%s\n" -g $SLED_ADDS -c -O1 "a b.c" -o x.o >expect &&
	test_cmp expect fakecc.args &&
	env CALLPROF_CC=./fakecc callprof cc --sleds -c x.c -o --sleds &&
	printf "%s\n" -g $SLED_ADDS -c x.c -o --sleds >expect &&
	test_cmp expect fakecc.args &&
	env CALLPROF_CC=./fakecc callprof cc --sleds --sleds -c x.c &&
	printf "%s\n" -g $SLED_ADDS -c x.c >expect &&
	test_cmp expect fakecc.args
'

# The default is the compiler's better kind (cmd-cc.c, default_build):
# sleds with gcc, whose hooks go in before inlining; after-inlining hooks
# with clang.
test_expect_success '--hooks: the hooks flags; without an option, sleds with gcc, hooks with clang' '
	case "$CC" in
	clang*) printf "%s\n" -g -finstrument-functions-after-inlining -c x.c >expect ;;
	*) printf "%s\n" -g -finstrument-functions -finstrument-functions-exclude-file-list= -c x.c >expect ;;
	esac &&
	env CALLPROF_CC=./fakecc callprof cc --hooks -c x.c &&
	sed "s/^\(-finstrument-functions-exclude-file-list=\).*/\1/" fakecc.args >args &&
	test_cmp expect args &&
	case "$CC" in
	clang*) ;;
	*) printf "%s\n" -g $SLED_ADDS -c x.c >expect ;;
	esac &&
	env CALLPROF_CC=./fakecc callprof cc -c x.c &&
	sed "s/^\(-finstrument-functions-exclude-file-list=\).*/\1/" fakecc.args >args &&
	test_cmp expect args &&
	callprof cc -h >help &&
	grep "^              callprof record or attach patches them (the default with gcc)$" help &&
	grep "^              (the default with clang)$" help
'

test_expect_success '--sleds with --hooks: one line, exit 129, no compiler run' '
	rm -f fakecc.args &&
	for opts in "--sleds --hooks" "--hooks -c x.c --sleds"
	do
		test_expect_code 129 env CALLPROF_CC=./fakecc callprof cc $opts -c x.c 2>err &&
		echo "callprof: error: --sleds and --hooks exclude each other: a build is one or the other" >expect &&
		test_cmp expect err || return 1
	done &&
	test_expect_code 129 callprof --hooks --sleds "$(command -v "$CC")" -c x.c 2>err &&
	test_cmp expect err &&
	test_path_is_missing fakecc.args &&
	test_expect_code 129 callprof --sleds 2>err &&
	grep -x "callprof: error: --sleds is callprof cc.s: callprof --sleds COMPILER ARGS..., or callprof cc --sleds ARGS..." err
'

# oldcc MACROS...: a compiler that answers with these macros only.
oldcc () {
	{
		echo "#!/bin/sh"
		echo "case \" \$* \" in *\" -dM \"*) printf \"%s\\\\n\" $*; exit 0 ;; esac"
		echo "printf \"%s\\\\n\" \"\$@\" >fakecc.args"
	} >oldcc &&
	chmod +x oldcc
}

test_expect_success 'a compiler without -fpatchable-function-entry (gcc < 8, clang < 10): one line' '
	rm -f fakecc.args &&
	oldcc "\"#define __GNUC__ 7\"" "\"#define __GNUC_MINOR__ 5\"" &&
	test_expect_code 1 env CALLPROF_CC=./oldcc callprof cc --sleds -c x.c 2>err &&
	echo "callprof: error: '"'"'./oldcc'"'"' is gcc 7: sleds (-fpatchable-function-entry=5,0) need gcc 8 or clang 10; build with callprof cc --hooks" >expect &&
	test_cmp expect err &&
	test_path_is_missing fakecc.args &&
	oldcc "\"#define __GNUC__ 4\"" "\"#define __clang__ 1\"" "\"#define __clang_major__ 9\"" &&
	test_expect_code 1 env CALLPROF_CXX=./oldcc callprof c++ --sleds -c x.cc 2>err &&
	grep -x "callprof: error: .\./oldcc. is clang 9: sleds .* need gcc 8 or clang 10; build with callprof c++ --hooks" err &&
	test_line_count = 1 err &&
	test_path_is_missing fakecc.args &&
	oldcc "\"#define __GNUC__ 4\"" "\"#define __clang__ 1\"" "\"#define __clang_major__ 10\"" &&
	env CALLPROF_CC=./oldcc callprof cc --sleds -c x.c &&
	grep -x -- -fpatchable-function-entry=5,0 fakecc.args &&
	oldcc "\"#define __GNUC__ 8\"" &&
	env CALLPROF_CC=./oldcc callprof cc --sleds -c x.c &&
	grep -x -- -fpatchable-function-entry=5,0 fakecc.args &&
	# the hooks need no version
	oldcc "\"#define __GNUC__ 7\"" &&
	env CALLPROF_CC=./oldcc callprof cc --hooks -c x.c &&
	grep -x -- -finstrument-functions fakecc.args
'

test_expect_success 'your own -fpatchable-function-entry or -finstrument-functions stands' '
	env CALLPROF_CC=./fakecc callprof cc --sleds -fpatchable-function-entry=7,5 -c x.c &&
	printf "%s\n" -g -fpatchable-function-entry=7,5 -c x.c >expect &&
	test_cmp expect fakecc.args &&
	env CALLPROF_CC=./fakecc callprof cc --sleds -finstrument-functions -c x.c &&
	printf "%s\n" -g -finstrument-functions -c x.c >expect &&
	test_cmp expect fakecc.args &&
	env CALLPROF_CC=./fakecc CALLPROF_VERBOSE=1 callprof cc --sleds -E x.c 2>err &&
	printf "%s\n" -E x.c >expect &&
	test_cmp expect fakecc.args &&
	grep -x "callprof cc: added nothing (-E: no code is made)" err
'

# tests/e2e/run's sleds columns (gcc-sleds:-O2 ...) set CP_BUILD_KIND=sleds.
test_expect_success 'build_workload builds the kind of the column ($CP_BUILD_KIND)' '
	build_workload s-nested.c &&
	case "$CP_BUILD_KIND" in
	sleds) sled_at t-nested main a b c && no_hooks t-nested ;;
	*) nm t-nested | grep -q __cyg_profile_func_enter &&
	   ! readelf -SW t-nested | grep __patchable_function_entries ;;
	esac &&
	./t-nested >/dev/null
'

test_expect_success '--sleds with an exclusion list: one line says it does not apply' '
	env CALLPROF_CC=./fakecc callprof cc --sleds -finstrument-functions-exclude-function-list=leaf \
		-c x.c 2>err &&
	echo "callprof cc: -finstrument-functions-exclude-* lists do not apply to sleds: mark the functions to leave out __attribute__((patchable_function_entry(0, 0)))" >expect &&
	test_cmp expect err &&
	printf "%s\n" -g $SLED_ADDS -finstrument-functions-exclude-function-list=leaf \
		-c x.c >expect &&
	test_cmp expect fakecc.args &&
	# and the attribute that does keep a function out
	printf "%s\n" "__attribute__((noinline, patchable_function_entry(0, 0))) int out(int x) { return x * 3; }" \
		"__attribute__((noinline)) int in(int x) { return x * 5; }" >keep.c &&
	callprof cc --sleds $CFLAGS -c -o keep.o keep.c &&
	sled_at keep.o in &&
	! sled_at keep.o out >/dev/null
'

# include/callprof.h's wrappers are static inline: at -O0 they stay out of
# line, and a sled there would count callprof's own API as the program's.
test_expect_success 'the API header'"'"'s wrappers get no sled, out of line at -O0 too' '
	printf "%s\n" "#include <callprof.h>" \
		"__attribute__((noinline)) int work(int x) { return x * 7; }" \
		"int main(int c, char **v) { callprof_pause(); callprof_resume(); (void)v;" \
		"	return work(c) + callprof_dump(0) == 12345; }" >api.c &&
	callprof cc --sleds $CFLAGS -O0 -I"$TOP_DIRECTORY/include" -o t-api api.c &&
	sled_at t-api main work &&
	nm t-api | grep -q " callprof_pause\$" &&
	for f in callprof_pause callprof_resume callprof_dump callprof__api
	do
		! sled_at t-api $f >/dev/null || { echo "$f has a sled"; return 1; }
	done
'

test_expect_success 'callprof cc -h names both kinds; the man page says each' '
	callprof cc -h >help &&
	grep "^usage: callprof cc \[--sleds | --hooks\] " help &&
	grep "^ *--sleds " help &&
	grep "^ *--hooks " help &&
	grep -e "^\*\*--sleds\*\*" "$TOP_DIRECTORY/docs/callprof-cc.1.md" &&
	grep -e "^\*\*--hooks\*\*" "$TOP_DIRECTORY/docs/callprof-cc.1.md"
'

# gcc 12 keeps a caller's values in registers its callee leaves alone
# (-fipa-ra) across a patchable entry in functions with an optimize
# attribute: under record the loop counter came back changed, and the
# program looped for ever.  callprof cc --sleds adds -fno-ipa-ra (gcc).
test_expect_success 'callprof cc --sleds: optimize attributes do not let a caller keep values across a recorded call' '
	cat >ipara.c <<-\EOT &&
	#include <stdio.h>
	#define A __attribute__((noinline, optimize("no-optimize-sibling-calls")))
	A static long step(long x) { return x * 3 + 1; }
	A long compute(int n) { long x = 0; for (int i = 0; i < n; i++) x = step(x); return x; }
	int main(void) { printf("%ld\n", compute(3)); return 0; }
	EOT
	callprof cc --sleds $CFLAGS -o t-ipara ipara.c &&
	./t-ipara >plain.out &&
	echo 13 >expect && test_cmp expect plain.out &&
	timeout 60 callprof record -o ipara.cprof -- ./t-ipara >rec.out &&
	test_cmp expect rec.out &&
	callprof report --flat --fields=calls,name --min-percent=0 ipara.cprof >rows &&
	grep "^ *3  *step\$" rows
'

test_done
