#!/bin/sh
# matrix: cc-opt
test_description='samples in PLT stubs are named TARGET@plt in every view: .plt, .plt.sec (IBT), .plt.got, programs and libraries'
. "$(dirname "$0")/lib.sh"

# The profiles are made by hand (tests/mkprofile.c) on the real binaries:
# a sample lands in a stub only now and then, and each stub must be hit.
B=0x555555554000 L=0x7f0000000000

# stub FILE NAME: the address of stub NAME@plt in FILE, as objdump names
# the stubs of .plt, .plt.sec and .plt.got.
stub () {
	objdump -d "$1" | awk -v f="<$2@plt>:" "\$2 == f { print \"0x\" \$1; exit }"
}

# sym FILE NAME: the address of function NAME in FILE.
sym () {
	nm "$1" | awk -v f="$2" "\$3 == f { print \"0x\" \$1; exit }"
}

# craft EXE LIB OUT: a cpu-mode profile of EXE and LIB with samples in
# the stubs of strlen (both), of the hooks (the profiler's; a sleds build
# has none), and of .plt.got (LIB's __cxa_finalize, where the linker made
# one).
craft () {
	s_main=$(stub $1 strlen) && s_hook=$(stub $1 __cyg_profile_func_enter) &&
	s_lib=$(stub $2 strlen) && s_got=$(stub $2 __cxa_finalize) &&
	main=$(sym $1 main) && loop=$(sym $1 pl_main_loop) && lib=$(sym $2 pl_lib_loop) &&
	{ test -n "$s_hook" || test "$CP_BUILD_KIND" = sleds; } &&
	test -n "$s_main" && test -n "$s_lib" &&
	test -n "$main" && test -n "$loop" && test -n "$lib" &&
	{
		cat <<-EOT
		meta mode=4 hz=1000 period=1000000 switches=1
		cmd ./$1
		module $PWD/$1 bias=$B
		module $PWD/$2 bias=$L
		thread tid=1 name=main
		node
		node parent=0 fn=$(printf 0x%x $((B + main))) calls=1
		node parent=1 fn=$(printf 0x%x $((B + loop))) calls=1
		node parent=1 fn=$(printf 0x%x $((L + lib))) calls=1
		line node=2 ip=$(printf 0x%x $((B + s_main + 2))) samples=30
		line node=2 ip=$(printf 0x%x $((B + loop + 1))) samples=10
		line node=3 ip=$(printf 0x%x $((L + s_lib + 4))) samples=20
		EOT
		if test -n "$s_hook"; then
			echo "line node=2 ip=$(printf 0x%x $((B + s_hook))) samples=50"
		fi &&
		if test -n "$s_got"; then
			echo "line node=3 ip=$(printf 0x%x $((L + s_got + 1))) samples=15"
		fi
	} >$3.txt &&
	"$CALLPROF_BUILD/tests/mkprofile" $3 <$3.txt
}

# views P: every view and export of profile P, in views.P.
views () {
	{
		callprof report --min-percent=0 $1 &&
		callprof report --flat $1 &&
		callprof report --callees pl_main_loop $1 &&
		callprof report --lines pl_main_loop $1 &&
		callprof report --lines pl_lib_loop $1 &&
		callprof export -f folded $1 &&
		callprof export -f json $1 &&
		callprof export -f callgrind $1 &&
		callprof export -f speedscope $1
	} >views.$1
}

# check P: the stubs named in every view, the hooks' stubs in none.
check () {
	views $1 &&
	! grep -E "_init|__cyg_profile" views.$1 &&
	callprof export -f folded $1 >folded &&
	grep -q "^main;pl_main_loop;strlen@plt[^;]* 30000000$" folded &&
	grep -q "^main;pl_lib_loop;strlen@plt[^;]* 20000000$" folded &&
	if grep -q "^line node=3 .* samples=15" $1.txt; then
		grep -q "^main;pl_lib_loop;__cxa_finalize@plt[^;]* 15000000$" folded
	fi &&
	for v in "report --flat" "report --lines pl_main_loop" "export -f json" "export -f callgrind"
	do
		callprof $v $1 | grep -q "strlen@plt" || return 1
	done
}

test_expect_success 'setup: a program and a library calling through their PLTs' '
	build_workload_lib s-plt-lib.c libspl.so &&
	build_workload s-plt.c -L. -lspl -Wl,-rpath,"\$ORIGIN" &&
	craft t-plt libspl.so p.cprof
'

test_expect_success '.plt and .plt.got stubs, in the program and in a library' '
	check p.cprof
'

if $CC $OPT -fcf-protection=full -fPIC -shared -Wl,-z,ibtplt -o libibt.so "$WORKLOADS/s-plt-lib.c" \
	-finstrument-functions 2>/dev/null &&
	readelf -SW libibt.so | grep -q "\.plt\.sec"
then
	test_expect_success '.plt.sec stubs (IBT, -fcf-protection), in the program and in a library' '
		cc_kind "$CP_BUILD_KIND" $CC $OPT -g -fcf-protection=full -Wl,-z,ibtplt -o t-ibt \
			"$WORKLOADS/s-plt.c" -L. -libt -Wl,-rpath,"\$ORIGIN" &&
		readelf -SW t-ibt | grep -q "\.plt\.sec" &&
		craft t-ibt libibt.so ibt.cprof &&
		check ibt.cprof
	'
else
	test_skip '.plt.sec stubs (IBT)' "$CC or the linker makes no .plt.sec"
fi

# A C++ function called through the PLT: its stub is named after the
# demangled target, as perf names it, unless --mangled.
case "$CC" in
clang*) CXX=clang++ ;;
*) CXX=g++ ;;
esac
test_expect_success 'C++ targets: the stub is named demangled, TARGET@plt' '
	cat >pl.h <<-\EOT &&
	namespace pl { int grow(const char *s, int n); }
	EOT
	cat >pl-lib.cc <<-\EOT &&
	#include "pl.h"
	int pl::grow(const char *s, int n) { return s[0] + n; }
	EOT
	cat >pl-main.cc <<-\EOT &&
	#include "pl.h"
	volatile int sink;
	int main() { for (int i = 0; i < 1000; i++) sink += pl::grow("x", i); return 0; }
	EOT
	$CXX $OPT $CP_TEST_CFLAGS -g -fPIC -shared -o libpl.so pl-lib.cc &&
	cc_kind "$CP_BUILD_KIND" $CXX $OPT $CP_TEST_CFLAGS -g -I. -o t-plcc pl-main.cc -L. -lpl \
		-Wl,-rpath,"\$ORIGIN" &&
	s_grow=$(stub t-plcc _ZN2pl4growEPKci) && main=$(sym t-plcc main) &&
	test -n "$s_grow" && test -n "$main" &&
	cat >cc.txt <<-EOT &&
	meta mode=4 hz=1000 period=1000000 switches=1
	cmd ./t-plcc
	module $PWD/t-plcc bias=$B
	thread tid=1 name=main
	node
	node parent=0 fn=$(printf 0x%x $((B + main))) calls=1
	line node=1 ip=$(printf 0x%x $((B + s_grow + 2))) samples=30
	EOT
	"$CALLPROF_BUILD/tests/mkprofile" cc.cprof <cc.txt &&
	callprof export -f folded cc.cprof >folded &&
	grep -x "main;pl::grow(char const\*, int)@plt 30000000" folded &&
	callprof report --flat cc.cprof | grep -q " pl::grow(char const\*, int)@plt\$" &&
	callprof export -f folded --mangled cc.cprof >folded.m &&
	grep -x "main;_ZN2pl4growEPKci@plt 30000000" folded.m
'

test_done
