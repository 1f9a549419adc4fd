#!/bin/sh
# matrix: cc-opt
test_description='naming functions: every option takes unqualified names, names without parameters and globs, and suggests on no match'
. "$(dirname "$0")/lib.sh"

# One matcher (report/names.c) behind --callers, --callees, --lines,
# --focus, --hide (report, export, tui), the tui's search, and
# record's --include, --exclude, --exclude-tree and --start.  A name that
# names several functions shows each; one that names none says so in one
# line, with the closest names, and prints nothing else.

case "$CC" in
clang*) CXX=clang++ ;;
*) CXX=g++ ;;
esac

# rows: the rows with calls of a report, "CALLS NAME", the headings and
# banner left out.
rows () {
	grep -v "^#" | awk '$1 ~ /^([0-9]+|-)$/' | sed "s/^ *//; s/  */ /"
}

test_expect_success 'setup: C++ workloads, recorded' '
	cc_kind "$CP_BUILD_KIND" $CXX $OPT $CP_TEST_CFLAGS -g -o t-cxx "$WORKLOADS/s-cxx.cc" &&
	cc_kind "$CP_BUILD_KIND" $CXX $OPT $CP_TEST_CFLAGS -g -o t-longnames \
		"$WORKLOADS/s-longnames.cc" -lpthread &&
	callprof record -o cxx.cprof -- ./t-cxx >/dev/null &&
	callprof record -o long.cprof -- ./t-longnames 300 >/dev/null
'

test_expect_success '--callers and --callees: unqualified, without parameters, with them, or a glob' '
	for name in area Circle::area shapes::Circle::area "area()" "area() const" \
		"shapes::Circle::area() const" "*::area*" "*rea*" "Circle::*a"
	do
		callprof report --callers "$name" --fields=calls,name cxx.cprof | rows >actual &&
		printf "%s\n" "1 shapes::Circle::area() const" "1 <- main" >expect &&
		test_cmp expect actual || { echo "as $name"; return 1; }
	done &&
	callprof report --callers "twice<int>" --fields=calls,name cxx.cprof | rows >actual &&
	printf "%s\n" "1 int shapes::twice<int>(int)" "1 <- main" >expect &&
	test_cmp expect actual &&
	callprof report --callers "grow(double)" --fields=calls,name cxx.cprof | rows >actual &&
	printf "%s\n" "1 shapes::Circle::grow(double)" "1 <- main" >expect &&
	test_cmp expect actual &&
	callprof report --callees main --fields=calls,name cxx.cprof | rows >actual &&
	grep -x "1 main" actual &&
	grep -x "1 -> shapes::Circle::area() const" actual
'

test_expect_success 'a name of several functions: each shown, and the banner says so' '
	callprof report --callers grow cxx.cprof >out &&
	grep "^# .grow. names 2 functions: each is shown with its callers" out &&
	callprof report --callers grow --fields=calls,name cxx.cprof | rows | sort >actual &&
	printf "%s\n" "1 <- main" "1 <- main" "1 shapes::Circle::grow(double)" \
		"1 shapes::Circle::grow(int)" >expect &&
	test_cmp expect actual &&
	callprof report --callers shapes::twice --fields=calls,name cxx.cprof | rows >actual &&
	grep -x "1 double shapes::twice<double>(double)" actual &&
	grep -x "1 int shapes::twice<int>(int)" actual
'

test_expect_success 'no function named: one line with the closest names, nothing on stdout, exit 1' '
	test_expect_code 1 callprof report --callers Aera cxx.cprof >out 2>err &&
	test_must_be_empty out &&
	echo "callprof: error: no function named '"'"'Aera'"'"' in profile '"'"'cxx.cprof'"'"'; the closest: shapes::Circle::area() const" >expect &&
	test_cmp expect err &&
	test_expect_code 1 callprof report --callees "*Seek*" cxx.cprof >out 2>err &&
	test_must_be_empty out &&
	echo "callprof: error: no function named '"'"'*Seek*'"'"' in profile '"'"'cxx.cprof'"'"'" >expect &&
	test_cmp expect err &&
	test_expect_code 1 callprof report --lines twise long.cprof >out 2>err &&
	test_must_be_empty out &&
	test_line_count = 1 err &&
	test_expect_code 1 callprof report --focus grwo cxx.cprof >out 2>err &&
	test_must_be_empty out &&
	grep -x "callprof: error: --focus .grwo. matches no function in profile .cxx.cprof.; the closest: shapes::Circle::grow(double), shapes::Circle::grow(int)" err
'

test_expect_success '--lines: a member of a class template by its last parts' '
	callprof report --lines RegistryWithAVeryLongName::mix_one_value_into_the_running_checksum \
		long.cprof >by-class &&
	callprof report --lines mix_one_value_into_the_running_checksum long.cprof >by-name &&
	test_cmp by-class by-name &&
	grep -q "s-longnames.cc:[0-9]" by-name &&
	grep "^callprof_test::a_rather_long_namespace_name::RegistryWithAVeryLongName<.*>::mix_one_value_into_the_running_checksum(unsigned long, unsigned long): [0-9]* samples" by-name
'

test_expect_success '--focus and --hide in report and export: the same names' '
	# (code without hooks sampled below grow, "-": the kernel, the loader;
	# rows of equal calls come in the order of their CPU samples: sorted)
	callprof report --focus grow --min-percent=0 --fields=calls,name cxx.cprof | rows |
		grep -v "^- " | LC_ALL=C sort >actual &&
	printf "%s\n" "1 main" "1 shapes::Circle::grow(double)" "1 shapes::Circle::grow(int)" >expect &&
	test_cmp expect actual &&
	callprof report --hide "Circle::grow" --min-percent=0 --fields=calls,name cxx.cprof | rows >actual &&
	! grep grow actual &&
	grep -x "1 shapes::Circle::area() const" actual &&
	callprof export -f folded -m calls --focus area cxx.cprof >folded &&
	echo "main;shapes::Circle::area() const 1" >expect &&
	grep -v -e "^main 1\$" -e " 0\$" folded >actual &&
	test_cmp expect actual
'

# A crafted cpu-mode profile of t-cxx (tests/mkprofile.c): main calls area
# and grow(int); 20 samples of area's context and 5 of grow's were in the
# kernel, 30 in area's code: [kernel] is a row under both.
B=0x555555554000
test_expect_success '[kernel] can be named: --callers, --focus, --hide' '
	addr () { nm -C t-cxx | awk -v f="$1" "{ s = \$0; sub(/^[0-9a-f]* [tTwW] /, \"\", s); if (s == f) { print \"0x\" \$1; exit } }"; } &&
	main=$(addr main) && area=$(addr "shapes::Circle::area() const") &&
	grow=$(addr "shapes::Circle::grow(int)") &&
	test -n "$main" && test -n "$area" && test -n "$grow" &&
	cat >k.txt <<-EOT &&
	meta mode=4 hz=1000 period=1000000 switches=1
	cmd ./t-cxx
	module $PWD/t-cxx bias=$B
	thread tid=1 name=main
	node
	node parent=0 fn=$(printf 0x%x $((B + main))) calls=1
	node parent=1 fn=$(printf 0x%x $((B + area))) calls=1
	node parent=1 fn=$(printf 0x%x $((B + grow))) calls=1
	line node=2 ip=0x0 samples=20
	line node=2 ip=$(printf 0x%x $((B + area + 1))) samples=30
	line node=3 ip=0x0 samples=5
	EOT
	"$CALLPROF_BUILD/tests/mkprofile" k.cprof <k.txt &&
	callprof report --callers "[kernel]" --fields=calls,name k.cprof | rows >actual &&
	printf "%s\n" "- [kernel]" "- <- shapes::Circle::area() const" "- <- shapes::Circle::grow(int)" >expect &&
	test_cmp expect actual &&
	callprof export -f folded --focus "[kernel]" k.cprof >folded &&
	printf "%s\n" "main 0" "main;shapes::Circle::area() const 0" \
		"main;shapes::Circle::area() const;[kernel] 20000000" \
		"main;shapes::Circle::grow(int) 0" "main;shapes::Circle::grow(int);[kernel] 5000000" >expect &&
	sort folded >actual &&
	test_cmp expect actual &&
	callprof report --hide "[kernel]" --min-percent=0 --fields=calls,name k.cprof | rows >actual &&
	! grep kernel actual &&
	grep -x "1 shapes::Circle::area() const" actual
'

test_expect_success 'record --exclude, --include and --start: the same names' '
	callprof record --exclude grow -o ex.cprof -- ./t-cxx >/dev/null &&
	callprof report --flat --fields=calls,name ex.cprof | rows >actual &&
	! grep grow actual &&
	grep -x "1 shapes::Circle::area() const" actual &&
	callprof record --include "Circle::*" --include main -o in.cprof -- ./t-cxx >/dev/null &&
	callprof report --flat --fields=calls,name in.cprof | rows | grep -v "^-" | sort >actual &&
	printf "%s\n" "1 main" "1 shapes::Circle::area() const" "1 shapes::Circle::grow(double)" \
		"1 shapes::Circle::grow(int)" >expect &&
	test_cmp expect actual &&
	test_expect_code 1 callprof record --start Aera -o no.cprof -- ./t-cxx >out 2>err &&
	test_path_is_missing no.cprof &&
	grep -x "callprof: error: --start .Aera. matches no function of ./t-cxx or the instrumented libraries it links; the closest: shapes::Circle::area() const" err &&
	callprof record --exclude grwo -o ex2.cprof -- ./t-cxx >/dev/null 2>err &&
	grep "^callprof: warning: --exclude .grwo. matches no function of ./t-cxx or the instrumented libraries it links; the closest: shapes::Circle::grow(double), shapes::Circle::grow(int)\$" err &&
	callprof record --start "grow(int)" -o st.cprof -- ./t-cxx >/dev/null &&
	callprof report --flat --fields=calls,name st.cprof | rows | grep -v "^-" >actual &&
	echo "1 shapes::Circle::grow(int)" >expect &&
	test_cmp expect actual
'

test_done
