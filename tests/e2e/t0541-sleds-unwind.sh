#!/bin/sh
# matrix: cc-opt
test_description='sleds: unwinders see the real return addresses: C++ exceptions thrown, caught and rethrown through sledded frames and through the C library, backtrace()'
. "$(dirname "$0")/lib.sh"

test_expect_success 'C++: same output and exit status as the unprofiled run' '
	build_kind -o t-sleds-core-cc sleds s-sleds-core.cc &&
	{ ./t-sleds-core-cc >plain.out; echo "exit $?" >>plain.out; } &&
	{ callprof record -o x.cprof -- ./t-sleds-core-cc >rec.out; echo "exit $?" >>rec.out; } &&
	test_cmp plain.out rec.out &&
	grep "^caught 45$" rec.out && grep "^exit 0$" rec.out
'

test_expect_success 'C++: counts are the program own, through throws, rethrows and catches' '
	callprof report --flat --fields=calls x.cprof >flat &&
	grep -v "^caught\|^backtrace\|^exit" rec.out | LC_ALL=C sort >want &&
	awk "NR == FNR { want[\$1] = 1; next } (\$2 in want) { print \$2, \$1 }" want flat |
		LC_ALL=C sort >got &&
	test_cmp want got
'

test_expect_success 'C++: backtrace() names the sledded functions it names unprofiled' '
	grep "^backtrace" plain.out >want &&
	grep "^backtrace show$" want && test_line_count = 3 want &&
	grep "^backtrace" rec.out >got &&
	test_cmp want got
'

test_expect_success 'C++: calls after a catch nest under their true caller' '
	callprof export -f folded -m calls x.cprof >folded &&
	grep "^main;after 30$" folded &&
	grep "^main;catcher;rethrower;middle;thrower 30$" folded &&
	grep "^main;sorter 5$" folded &&
	grep "^main;show2;show1;show 1$" folded
'

test_expect_success 'C++: every return of a call not unwound is seen (nothing unpaired)' '
	callprof export -f json x.cprof | grep -o "\"unpaired_exits\":[0-9]*" >u &&
	echo "\"unpaired_exits\":0" >want &&
	test_cmp want u
'

test_done
