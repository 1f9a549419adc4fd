#!/bin/sh
# matrix: cc-opt
test_description='callprof cc / c++ / COMPILER: instrumented builds in one command'
. "$(dirname "$0")/lib.sh"

case "$CC" in
clang*) CXX=clang++ ;;
*) CXX=g++ ;;
esac
CFLAGS="$OPT $CP_TEST_CFLAGS -Wall -I$WORKLOADS"
export CALLPROF_CC="$CC" CALLPROF_CXX="$CXX"
unset CALLPROF_VERBOSE

# s-cc-main.c + s-cc-util.c, every call counted.
cat >expect.c <<-\EOT
main 1
main;run 1
main;run;twice 3
main;run;twice;leaf 6
EOT

# calls_of PROG PROFILE: record PROG, counting, into PROFILE and print
# its folded calls.  Under ASan, gcc adds to each file a constructor and a
# destructor that register its globals (_sub_I_00099_1, _sub_D_00099_0);
# a sleds build has entries in them as in any function, so they are
# counted: real calls, but not the program's, left out here.
calls_of () {
	callprof record --mode=counting -o "$2" -- "$1" >/dev/null 2>&1 &&
	callprof export -f folded -m calls "$2" >"$2.folded" &&
	if sanitized address
	then
		grep -v "^_sub_[DI]_[0-9]*_[0-9]* " "$2.folded" || :
	else
		cat "$2.folded"
	fi
}

# fakecc: a compiler that answers callprof's question as the real one
# does, and otherwise writes its arguments, one a line, to fakecc.args
# and exits with $FAKECC_STATUS.
cat >fakecc <<EOF
#!/bin/sh
case " \$* " in *" -dM "*) exec $CC "\$@" ;; esac
printf "%s\\n" "\$@" >fakecc.args
exit \${FAKECC_STATUS:-0}
EOF
chmod +x fakecc

# added: the flags callprof cc adds for $CC by default, one a line (gcc:
# sleds, clang: after-inlining hooks); added.hooks: those of --hooks.
case "$CC" in
clang*)
	printf "%s\n" -g -finstrument-functions-after-inlining >added.hooks &&
	cp added.hooks added
	;;
*)
	printf "%s\n" -g -finstrument-functions -finstrument-functions-exclude-file-list= >added.hooks &&
	printf "%s\n" -g -fpatchable-function-entry=5,0 -fno-ipa-ra >added
	;;
esac

test_expect_success 'CC="callprof cc" make: a program of two files, every call counted' '
	printf "VPATH = %s\nt-make: s-cc-main.o s-cc-util.o\n\t\$(CC) \$(CFLAGS) -o \$@ s-cc-main.o s-cc-util.o\n" \
		"$WORKLOADS" >Makefile &&
	CC="callprof cc" CFLAGS="$CFLAGS" make -f Makefile >make.out 2>&1 &&
	cat make.out &&
	grep "^callprof cc .*-c -o s-cc-util.o .*s-cc-util.c$" make.out &&
	calls_of ./t-make make.cprof >actual &&
	test_cmp expect.c actual &&
	readelf -S s-cc-util.o | grep -q "\.debug_info"
'

test_expect_success 'callprof cc links alone (objects in, a program out)' '
	callprof cc $CFLAGS -o t-link s-cc-main.o s-cc-util.o &&
	calls_of ./t-link link.cprof >actual &&
	test_cmp expect.c actual
'

test_expect_success 'callprof cc compiles and links in one call' '
	callprof cc $CFLAGS -o t-one "$WORKLOADS/s-cc-main.c" "$WORKLOADS/s-cc-util.c" &&
	calls_of ./t-one one.cprof >actual &&
	test_cmp expect.c actual
'

test_expect_success 'callprof COMPILER (a path, as a launcher gets it) is the same' '
	cc_path=$(command -v "$CC") &&
	env -u CALLPROF_CC callprof "$cc_path" $CFLAGS -o t-path "$WORKLOADS/s-cc-main.c" \
		"$WORKLOADS/s-cc-util.c" &&
	calls_of ./t-path path.cprof >actual &&
	test_cmp expect.c actual
'

# gcc gives a hook to every function, inlined or not, std::vector's
# operator[] included (t-plain proves it), unless its header is on the
# exclusion list callprof c++ --hooks adds.  clang's after-inlining flag
# leaves out what was inlined: operator[] at -O2, not at -O0 (a real call).
test_expect_success 'callprof c++ --hooks: no hooks in functions of system headers, inlined or not' '
	$CXX $OPT $CP_TEST_CFLAGS -g -finstrument-functions -I"$WORKLOADS" -o t-plain \
		"$WORKLOADS/s-cc-vec.cc" &&
	calls_of ./t-plain plain.cprof >plain &&
	grep "^main;total(int);std::vector<int, std::allocator<int> >::operator\[\](unsigned long) 3000$" plain &&
	callprof c++ --hooks $CFLAGS -o t-vec "$WORKLOADS/s-cc-vec.cc" &&
	calls_of ./t-vec vec.cprof >actual &&
	cat actual &&
	grep "^main;total(int) 3$" actual &&
	case "$CC,$OPT" in
	clang*,-O0) grep -q "operator\[\]" actual ;;
	clang*) ! grep "operator\[\]" actual ;;
	*) ! grep "std::" actual ;;
	esac
'

# The default: sleds with gcc, which no list keeps out of a header's
# functions: what remains out of line is recorded, operator[] at -O0 (a real
# call) and not at -O2 (inlined), as clang's hooks (docs/limitations.md).
test_expect_success 'callprof c++: the functions of system headers left out of line are counted' '
	callprof c++ $CFLAGS -o t-vecd "$WORKLOADS/s-cc-vec.cc" &&
	calls_of ./t-vecd vecd.cprof >actual &&
	cat actual &&
	grep "^main;total(int) 3$" actual &&
	case "$OPT" in
	-O0) grep "^main;total(int);std::vector<int, std::allocator<int> >::operator\[\](unsigned long) 3000$" actual ;;
	*) ! grep "operator\[\]" actual ;;
	esac
'

# logged LOG COMMAND...: COMMAND's output to LOG, shown if it fails.
logged () {
	_log=$1
	shift
	"$@" >"$_log" 2>&1 || { _st=$?; cat "$_log"; return $_st; }
}

if command -v cmake >/dev/null
then
test_expect_success 'CMAKE_C_COMPILER_LAUNCHER=callprof: C and C++ targets' '
	mkdir -p cm/src cm/build &&
	cp "$WORKLOADS"/s-cc-main.c "$WORKLOADS"/s-cc-util.c "$WORKLOADS"/s-cc-vec.cc \
		"$WORKLOADS"/s-cc.h "$WORKLOADS"/workload.h cm/src/ &&
	cat >cm/src/CMakeLists.txt <<-\EOT &&
	cmake_minimum_required(VERSION 3.10)
	project(t0500 C CXX)
	add_executable(t-cmake s-cc-main.c s-cc-util.c)
	add_executable(t-cmake-vec s-cc-vec.cc)
	EOT
	(
		cd cm/build &&
		logged ../configure.out env -u CALLPROF_CC -u CALLPROF_CXX cmake -G "Unix Makefiles" \
			-DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
			-DCMAKE_C_COMPILER_LAUNCHER=callprof -DCMAKE_CXX_COMPILER_LAUNCHER=callprof \
			-DCMAKE_C_FLAGS="$OPT $CP_TEST_CFLAGS" -DCMAKE_CXX_FLAGS="$OPT $CP_TEST_CFLAGS" \
			../src &&
		logged ../build.out env -u CALLPROF_CC -u CALLPROF_CXX make VERBOSE=1
	) &&
	grep "^callprof /[^ ]*/$CC .*s-cc-util.c$" cm/build.out &&
	grep "^callprof /[^ ]*/$CXX .*s-cc-vec.cc$" cm/build.out &&
	calls_of cm/build/t-cmake cmake.cprof >actual &&
	test_cmp expect.c actual &&
	calls_of cm/build/t-cmake-vec cmake-vec.cprof >actual &&
	grep "^main;total(int) 3$" actual
'
else
	test_skip 'CMAKE_C_COMPILER_LAUNCHER=callprof: C and C++ targets' \
		'cmake is not installed (tools/install-deps does not install it)'
fi

test_expect_success 'the flags added come first; every argument follows in its order' '
	env CALLPROF_CC=./fakecc callprof cc -c -O1 "a b.c" -o x.o -DX=1 &&
	{ cat added && printf "%s\n" -c -O1 "a b.c" -o x.o -DX=1; } >expect &&
	test_cmp expect fakecc.args &&
	env CALLPROF_CC=./fakecc callprof cc --hooks -c -O1 "a b.c" -o x.o -DX=1 &&
	sed "s/^\(-finstrument-functions-exclude-file-list=\).*/\1/" fakecc.args >args &&
	{ cat added.hooks && printf "%s\n" -c -O1 "a b.c" -o x.o -DX=1; } >expect &&
	test_cmp expect args &&
	# the exclusion list of --hooks: the compiler'"'"'s own headers and the system'"'"'s
	case "$CC" in
	clang*) ;;
	*) grep -x -- "-finstrument-functions-exclude-file-list=.*$($CC -print-file-name=include).*" fakecc.args &&
	   grep -x -- "-finstrument-functions-exclude-file-list=.*/usr/include\(,.*\)*" fakecc.args ;;
	esac
'

test_expect_success 'your -g and -finstrument-functions* are kept, none added over them' '
	env CALLPROF_CC=./fakecc callprof cc -g3 -finstrument-functions -c x.c &&
	printf "%s\n" -g3 -finstrument-functions -c x.c >expect &&
	test_cmp expect fakecc.args &&
	env CALLPROF_CC=./fakecc callprof cc -finstrument-functions-after-inlining -c x.c &&
	printf "%s\n" -g -finstrument-functions-after-inlining -c x.c >expect &&
	test_cmp expect fakecc.args &&
	env CALLPROF_CC=./fakecc callprof cc -ggdb -c x.c &&
	{ sed 1d added && printf "%s\n" -ggdb -c x.c; } >expect &&
	test_cmp expect fakecc.args
'

# The overhead verdict of a hooks build advises
# -finstrument-functions-exclude-function-list (t0495 follows it): an
# exclusion list narrows our instrumentation, it does not replace it.
test_expect_success 'an exclusion list of yours: ours are added all the same, yours follow' '
	for opt in -finstrument-functions-exclude-function-list=leaf \
		-finstrument-functions-exclude-file-list=s-cc-util.c
	do
		env CALLPROF_CC=./fakecc callprof cc --hooks $opt -c x.c 2>err &&
		sed "s/^\(-finstrument-functions-exclude-file-list=\).*/\1/" fakecc.args >args &&
		{ cat added.hooks && printf "%s\n" $opt -c x.c | sed "s/^\(-finstrument-functions-exclude-file-list=\).*/\1/"; } >expect &&
		test_cmp expect args || return 1
	done &&
	case "$CC" in
	clang*)
		test_expect_code 1 callprof cc $CFLAGS -finstrument-functions-exclude-function-list=leaf \
			-o t-ex "$WORKLOADS/s-cc-main.c" "$WORKLOADS/s-cc-util.c" 2>err &&
		grep "^callprof cc: clang has no -finstrument-functions-exclude-\* lists" err &&
		grep "unknown argument" err
		;;
	*)
		callprof cc --hooks $CFLAGS -finstrument-functions-exclude-function-list=leaf \
			-o t-ex "$WORKLOADS/s-cc-main.c" "$WORKLOADS/s-cc-util.c" &&
		calls_of ./t-ex ex.cprof >actual &&
		grep -v leaf expect.c >expect &&
		test_cmp expect actual &&
		# the default, sleds: the list does not apply, and callprof says so
		callprof cc $CFLAGS -finstrument-functions-exclude-function-list=leaf \
			-o t-exs "$WORKLOADS/s-cc-main.c" "$WORKLOADS/s-cc-util.c" 2>err &&
		grep "^callprof cc: -finstrument-functions-exclude-\* lists do not apply to sleds" err &&
		calls_of ./t-exs exs.cprof >actual &&
		test_cmp expect.c actual
		;;
	esac
'

test_expect_success 'no code made (preprocessing, dependencies, queries): nothing added, nothing asked' '
	for opt in -E --preprocess -M --dependencies -MM --user-dependencies --version \
		-dumpmachine -print-file-name=include
	do
		env CALLPROF_CC=./fakecc CALLPROF_VERBOSE=1 callprof cc $opt x.c 2>err &&
		printf "%s\n" $opt x.c >expect &&
		test_cmp expect fakecc.args &&
		echo "callprof cc: added nothing ($opt: no code is made)" >expect &&
		test_cmp expect err || return 1
	done &&
	callprof cc $CFLAGS -E -o pp.i "$WORKLOADS/s-cc-util.c" &&
	$CC $CFLAGS -E -o pp-plain.i "$WORKLOADS/s-cc-util.c" &&
	test_cmp pp-plain.i pp.i &&
	callprof cc $CFLAGS -MM "$WORKLOADS/s-cc-util.c" >deps &&
	$CC $CFLAGS -MM "$WORKLOADS/s-cc-util.c" >deps-plain &&
	test_cmp deps-plain deps
'

test_expect_success 'code made (-c, -S, -MD with -c, -###, a link): the flags are added' '
	for opts in "-c x.c" "-S x.c" "-MD -c x.c" "-MMD -MF x.d -c x.c" "-### -c x.c" "-o p x.o"
	do
		env CALLPROF_CC=./fakecc callprof cc $opts &&
		{ cat added && printf "%s\n" $opts; } >expect &&
		test_cmp expect fakecc.args || return 1
	done &&
	case "$CC" in
	clang*) made=__cyg_profile_func_enter ;;
	*) made=__patchable_function_entries ;;
	esac &&
	callprof cc $CFLAGS -S -o util.s "$WORKLOADS/s-cc-util.c" &&
	grep -q $made util.s &&
	callprof cc $CFLAGS -MMD -c -o util.o "$WORKLOADS/s-cc-util.c" &&
	test -s util.d &&
	{ nm util.o && readelf -SW util.o; } | grep -q $made
'

# -x c++ in callprof cc: gcc is asked about C++ (its C++ include
# directories are then on the list).
test_expect_success '-x c++: the compiler is asked about the language given' '
	cat >askcc <<-EOF &&
	#!/bin/sh
	case " \$* " in *" -dM "*) printf "%s\\n" "\$*" >askcc.asked; exec $CC "\$@" ;; esac
	exit 0
	EOF
	chmod +x askcc &&
	env CALLPROF_CC=./askcc callprof cc -x c++ -c x.cc &&
	grep -e "-x c++ /dev/null" askcc.asked &&
	env CALLPROF_CC=./askcc callprof cc -c x.c &&
	grep -e "-x c /dev/null" askcc.asked &&
	env CALLPROF_CXX=./askcc callprof c++ -xc -c x.c &&
	grep -e "-x c /dev/null" askcc.asked
'

test_expect_success '@FILE: read to decide, passed on as it is' '
	printf "%s\n" "-E \"x.c\"" >pp.rsp &&
	env CALLPROF_CC=./fakecc CALLPROF_VERBOSE=1 callprof cc @pp.rsp 2>err &&
	echo "@pp.rsp" >expect &&
	test_cmp expect fakecc.args &&
	grep -x "callprof cc: added nothing (-E: no code is made)" err &&
	# nested, with quotes: -g3 and -finstrument-functions are the user'"'"'s
	printf "%s\n" "'"'"'-finstrument-functions'"'"' @inner.rsp" >outer.rsp &&
	printf "%s\n" "-g3 -c" >inner.rsp &&
	env CALLPROF_CC=./fakecc callprof cc @outer.rsp x.c &&
	printf "%s\n" @outer.rsp x.c >expect &&
	test_cmp expect fakecc.args &&
	# one that cannot be read is an argument of the compiler'"'"'s
	env CALLPROF_CC=./fakecc callprof cc -c @no-such.rsp &&
	sed "s/^\(-finstrument-functions-exclude-file-list=\).*/\1/" fakecc.args >args &&
	{ cat added && printf "%s\n" -c @no-such.rsp; } >expect &&
	test_cmp expect args &&
	# a real compile from a response file
	printf "%s\n" "$CFLAGS -o t-rsp" "$WORKLOADS/s-cc-main.c $WORKLOADS/s-cc-util.c" >build.rsp &&
	callprof cc @build.rsp &&
	calls_of ./t-rsp rsp.cprof >actual &&
	test_cmp expect.c actual
'

# A pipe is read once: callprof must leave it to the compiler.
test_expect_success '@FILE that is a pipe: not read by callprof' '
	rm -f fifo.rsp && mkfifo fifo.rsp &&
	{ printf "%s\n" "-E x.c" >fifo.rsp & } &&
	env CALLPROF_CC=./fakecc callprof cc -c @fifo.rsp &&
	timeout 20 cat fifo.rsp >left &&
	wait &&
	echo "-E x.c" >expect &&
	test_cmp expect left &&
	sed "s/^\(-finstrument-functions-exclude-file-list=\).*/\1/" fakecc.args >args &&
	{ cat added && printf "%s\n" -c @fifo.rsp; } >expect &&
	test_cmp expect args
'

test_expect_success '-v: one line says what was added; the compiler gets -v too' '
	callprof cc -v $CFLAGS -c -o v.o "$WORKLOADS/s-cc-util.c" 2>err &&
	echo "callprof cc: added $(tr "\n" " " <added)" | sed "s/ $//" >expect &&
	grep "^callprof cc: " err | sed "s/^\(.*-finstrument-functions-exclude-file-list=\).*/\1/" >said &&
	test_cmp expect said &&
	grep "^Target: " err &&
	callprof cc $CFLAGS -c -o v.o "$WORKLOADS/s-cc-util.c" 2>err &&
	test_must_be_empty err &&
	env CALLPROF_VERBOSE=1 callprof cc $CFLAGS -c -o v.o "$WORKLOADS/s-cc-util.c" 2>err &&
	grep "^callprof cc: added -g " err &&
	test_line_count = 1 err
'

test_expect_success 'the exit status and messages are the compiler'"'"'s' '
	printf "int main(void) { return syntax error; }\n" >bad.c &&
	test_expect_code 1 callprof cc -c bad.c 2>err &&
	grep "bad.c:1:.*error" err &&
	! grep "^callprof" err &&
	test_path_is_missing bad.o &&
	test_expect_code 7 env CALLPROF_CC=./fakecc FAKECC_STATUS=7 callprof cc -c x.c
'

test_expect_success 'a compiler that is not there: one line naming it, exit status 127' '
	test_expect_code 127 env CALLPROF_CC=no-such-cc callprof cc -c x.c 2>err &&
	echo "callprof: error: compiler '"'"'no-such-cc'"'"' not found (from \$CALLPROF_CC)" >expect &&
	test_cmp expect err &&
	test_expect_code 127 env CALLPROF_CXX=no-such-cxx callprof c++ -c x.cc 2>err &&
	grep -x "callprof: error: compiler .no-such-cxx. not found (from \$CALLPROF_CXX)" err &&
	test_expect_code 127 callprof /no/such/gcc-99 -c x.c 2>err &&
	echo "callprof: error: compiler '"'"'/no/such/gcc-99'"'"' not found" >expect &&
	test_cmp expect err
'

test_expect_success 'a compiler that is neither gcc nor clang: said, nothing run' '
	printf "#!/bin/sh\necho \"\$@\" >ran\n" >othercc && chmod +x othercc &&
	test_expect_code 1 env CALLPROF_CC=./othercc callprof cc -c x.c 2>err &&
	grep "^callprof: error: .*othercc. is neither gcc nor clang" err &&
	test_line_count = 1 err &&
	! grep -v "dM" ran
'

test_expect_success 'callprof cc -h: the usage; a name that is no compiler is no command' '
	callprof cc -h >help &&
	grep "^usage: callprof cc " help &&
	for name in no-such-arch-gcc-99 /no/such/clang++-14.0 /no/such/cc nosuch-linux-g++ \
		/no/such/c++ clang-99
	do
		test_expect_code 127 callprof $name -c x.c 2>err &&
		grep -x "callprof: error: compiler .$name. not found" err || return 1
	done &&
	for name in gccx mycc /no/such/gcc-x clang+ ./prog
	do
		test_expect_code 129 callprof $name -c x.c 2>err &&
		grep -x "callprof: error: .$name. is not a callprof command; see .callprof --help." err ||
		return 1
	done
'

test_done
