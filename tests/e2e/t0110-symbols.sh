#!/bin/sh
# matrix: cc-opt
test_description='symbols: C++ demangling, call-site lines, stripped binaries'
. "$(dirname "$0")/lib.sh"

case "$CC" in
clang*) CXX=clang++ LAMBDA='main::$_0::operator()(int) const' ;;
*) CXX=g++ LAMBDA='main::{lambda(int)#1}::operator()(int) const' ;;
esac

test_expect_success 'C++ names are printed as c++filt prints them' '
	cc_kind "$CP_BUILD_KIND" $CXX $OPT -g -o t-cxx "$WORKLOADS/s-cxx.cc" &&
	callprof record -o cxx.cprof -- ./t-cxx >out &&
	callprof export -f folded -m calls cxx.cprof >actual &&
	cat >expect <<-EOT &&
	main 1
	main;double shapes::twice<double>(double) 1
	main;int shapes::twice<int>(int) 1
	main;$LAMBDA 1
	main;shapes::Circle::area() const 1
	main;shapes::Circle::grow(double) 1
	main;shapes::Circle::grow(int) 1
	main;shapes::operator<(shapes::Circle const&, shapes::Circle const&) 1
	EOT
	test_cmp expect actual
'

test_expect_success '--mangled shows the raw symbols, exports and report alike' '
	callprof export --mangled -f folded -m calls cxx.cprof >mangled &&
	grep "^main;_ZN6shapes6Circle4growEi 1$" mangled &&
	grep "^main;_ZN6shapes5twiceIiEET_S1_ 1$" mangled &&
	callprof report --mangled --fields=calls,name --min-percent=0 cxx.cprof >report &&
	grep -q " _ZNK6shapes6Circle4areaEv$" report
'

test_expect_success '--name-width shortens long names in the report only' '
	callprof report --name-width=30 --fields=calls,name --min-percent=0 cxx.cprof >report &&
	grep -q " shapes::operator<(...)$" report &&
	grep -q " double shapes::twice<...>(...)$" report &&
	grep -q " int shapes::twice<int>(int)$" report &&
	# the rows of the functions called (not "-": code a sample landed in)
	sed 1d report | awk "\$1 != \"-\"" | sed "s/^ *[0-9][0-9]*  *//" >names &&
	test_line_count = 8 names &&
	awk "length(\$0) > 30 { print; bad = 1 } END { exit bad }" names &&
	callprof export -f folded -m calls cxx.cprof | grep -q "shapes::Circle const&, shapes::Circle const&" &&
	test_expect_code 129 callprof report --name-width=3 cxx.cprof 2>err &&
	grep -q "name-width wants a number" err
'

test_expect_success '--addresses: MODULE+0xOFFSET next to every name, as nm says' '
	callprof report --addresses --fields=calls,name --min-percent=0 cxx.cprof >report &&
	off=$(nm t-cxx | awk "\$3 == \"_ZN6shapes6Circle4growEi\" { sub(/^0*/, \"\", \$1); print \$1 }") &&
	grep -q " shapes::Circle::grow(int) \[t-cxx+0x$off\]$" report
'

test_expect_success 'the same names as nm | c++filt gives for the binary' '
	nm t-cxx | awk "\$3 ~ /^_Z.*6shapes/ { print \$3 }" | c++filt | LC_ALL=C sort >nm-names &&
	sed -n "s/^main;\(.*shapes.*\) 1$/\1/p" actual | LC_ALL=C sort >our-names &&
	test_cmp nm-names our-names
'

test_expect_success 'call sites show the file and line of the call' '
	build_workload s-sites.c &&
	callprof record -o sites.cprof -- ./t-sites >out &&
	callprof report --fields=calls,site,name --sort=name --min-percent=0 sites.cprof >report &&
	sed 1d report | awk "\$1 != \"-\" { \$1 = \$1; print }" | grep -v " main$" >actual &&
	cat >expect <<-\EOT &&
	1 s-sites.c:25 leaf
	1 s-sites.c:23 mid
	1 s-sites.c:17 leaf
	EOT
	test_cmp expect actual
'

test_expect_success 'a stripped PIE keeps exported names via .dynsym' '
	build_workload s-sites.c -rdynamic &&
	strip -s t-sites &&
	callprof record -o stripped.cprof -- ./t-sites >out &&
	callprof export -f folded -m calls stripped.cprof >actual &&
	cat >expect <<-\EOT &&
	main 1
	main;leaf 1
	main;mid 1
	main;mid;leaf 1
	EOT
	test_cmp expect actual
'

# main alone is found without symbols: glibc's _start passes its address.
test_expect_success 'functions without any symbol are named MODULE+0xOFFSET, main from _start' '
	build_workload s-sites.c &&
	strip -s t-sites &&
	callprof record -o nosym.cprof -- ./t-sites >out &&
	callprof export -f folded -m calls nosym.cprof >actual &&
	test $(wc -l <actual) = 4 &&
	grep "^main 1$" actual &&
	! grep -v "^main\(;t-sites+0x[0-9a-f]*\)* 1$" actual &&
	callprof record -o nosym2.cprof -- ./t-sites >out &&
	callprof export -f folded -m calls nosym2.cprof >actual2 &&
	test_cmp actual actual2
'

test_done
