#!/bin/sh
test_description='untrusted profiles: FIFOs for files, huge outputs, wrapping counts, odd times'
. "$(dirname "$0")/lib.sh"

mkprofile () {
	"$CALLPROF_BUILD/tests/mkprofile" "$@"
}

# bounded CMD...: run the tool with a time limit, so a hang fails the case
# (timeout's status 124) instead of stopping the suite.
bounded () {
	timeout 60 "$@"
}

test_expect_success 'setup: a program and a library, recorded, debug data split off' '
	build_workload_lib s-lib.c libslib.so &&
	build_workload s-lib-main.c -L. -lslib "-Wl,-rpath,\$ORIGIN" &&
	callprof record -o p.cprof -- ./t-lib-main >out &&
	callprof export -f folded -m calls p.cprof >expect &&
	grep -q slib_step expect
'

test_expect_success 'a FIFO in place of a module: refused by name, no hang' '
	mv libslib.so libslib.so.real &&
	mkfifo libslib.so &&
	for cmd in "report --min-percent=0" "export -f folded" "diff --all p.cprof"
	do
		bounded callprof $cmd p.cprof >actual 2>err ||
		{ echo "callprof $cmd: exit $?"; return 1; }
		grep "^callprof: warning: .*cannot open .*libslib.so.: not a regular file" err &&
		grep -q "libslib.so+0x" actual || return 1
	done &&
	rm libslib.so &&
	mv libslib.so.real libslib.so
'

test_expect_success 'a FIFO in place of a debug file: not searched, said so, no hang' '
	objcopy --only-keep-debug libslib.so libslib.so.debug &&
	strip libslib.so &&
	objcopy --add-gnu-debuglink=libslib.so.debug libslib.so &&
	bounded callprof export -f folded -m calls p.cprof >actual 2>err &&
	test_cmp expect actual &&
	rm libslib.so.debug &&
	mkfifo libslib.so.debug &&
	bounded callprof export -f folded -m calls p.cprof >actual 2>err &&
	grep "^callprof: warning: debug file .*libslib.so.debug. is not a regular file" err &&
	! grep -q slib_step actual &&
	grep -q "libslib.so+0x" actual
'

test_expect_success 'a FIFO in a build-id directory: not searched, no hang' '
	rm libslib.so.debug &&
	id=$(readelf -n libslib.so | awk "/Build ID:/ { print \$3 }") &&
	mkdir -p dbg/.build-id/$(echo $id | cut -c1-2) &&
	mkfifo dbg/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug &&
	bounded callprof export -f folded -m calls --debug-dir dbg p.cprof >actual 2>err &&
	grep "^callprof: warning: debug file .*\.build-id/.* is not a regular file" err &&
	grep -q "libslib.so+0x" actual
'

test_expect_success 'counts near 2^64 saturate in merge and sums, said once' '
	cat >big.txt <<-\EOF &&
	meta clock=3 tps=1000000000
	thread
	node calls=1 ticks=1000
	node parent=0 fn=0x1000 calls=0xF000000000000000 ticks=1000
	node parent=1 fn=0x2000 calls=0x9000000000000000 ticks=500
	EOF
	mkprofile big.cprof <big.txt &&
	callprof export -f folded -m calls big.cprof >one 2>err &&
	grep -x "\[unknown\]+0x1000 17293822569102704640" one &&
	callprof merge -o m.cprof big.cprof big.cprof 2>err &&
	test $(grep -c "^callprof: warning: a sum of counts or times is too large: shown as the largest value (18446744073709551615, saturated), not wrapped$" err) = 1 &&
	callprof export -f folded -m calls m.cprof >two 2>err &&
	grep -x "\[unknown\]+0x1000 18446744073709551615" two &&
	grep -x "\[unknown\]+0x1000;\[unknown\]+0x2000 18446744073709551615" two &&
	callprof report --fields=calls,name m.cprof >report 2>err &&
	grep -q "^18446744073709551615 *\[unknown\]+0x1000$" report &&
	grep -q "saturated" err
'

# chain N: a chain of N nested contexts, each with 1 ns of its own.
chain () {
	awk -v n="$1" 'BEGIN {
		print "meta clock=3 tps=1000000000"; print "thread"
		print "node calls=1 ticks=" n + 1
		for (i = 0; i < n; i++)
			printf "node parent=%d fn=%d calls=1 ticks=%d\n", i, 4096 + 16 * (i % 50), n - i
	}'
}

test_expect_success 'speedscope of deep chains: linear in the depth, valid' '
	chain 25000 | mkprofile c25.cprof &&
	chain 50000 | mkprofile c50.cprof &&
	bounded callprof export -f speedscope -o c25.json c25.cprof &&
	bounded callprof export -f speedscope -o c50.json c50.cprof &&
	s25=$(wc -c <c25.json) && s50=$(wc -c <c50.json) &&
	echo "sizes $s25 $s50" &&
	test $s50 -lt $((s25 * 5 / 2)) &&
	test $(grep -o "\"type\":\"O\"" c50.json | wc -l) = 50000 &&
	npm_install &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-speedscope.js" c50.json >got &&
	echo "all threads 50000" >expect &&
	test_cmp expect got
'

test_expect_success 'a callee longer than its caller: accepted, said so once with a count' '
	cat >lift.txt <<-\EOF &&
	meta clock=3 tps=1000000000
	thread
	node calls=1 ticks=20000000
	node parent=0 fn=0x1000 calls=1 ticks=1000
	node parent=1 fn=0x2000 calls=1 ticks=5000000
	node parent=0 fn=0x3000 calls=1 ticks=2000000
	node parent=3 fn=0x4000 calls=1 ticks=9000000
	node parent=0 fn=0x5000 calls=1 ticks=2000000
	node parent=5 fn=0x6000 calls=1 ticks=2000100
	EOF
	mkprofile lift.cprof <lift.txt &&
	callprof report --fields=calls,total,name lift.cprof >report 2>err &&
	grep "^callprof: warning: profile .lift.cprof.: 2 call paths have a callee that took longer than the caller (by over 1 ms and 10%): its time is raised to its callees. sum$" err &&
	test_line_count = 1 err &&
	grep -q "5.00ms *\[unknown\]+0x1000$" report &&
	# within rounding (100 ns over): no warning
	sed -n "1,3p;8,9p" lift.txt | sed "s/parent=5/parent=1/" | mkprofile near.cprof &&
	callprof report --fields=calls,total,name near.cprof >report &&
	grep -q "2.00ms *\[unknown\]+0x6000$" report &&
	callprof report near.cprof >report 2>err &&
	test_must_be_empty err
'

test_expect_success 'folded, pprof, plist of a deep chain: refused with a size, no file left' '
	for f in folded pprof plist
	do
		test_must_fail callprof export -f $f -o out.$f c50.cprof 2>err &&
		grep "^callprof: error: -f $f of .c50.cprof. would \(write\|need\) about [0-9.]* GiB (every calling context with its whole path), over --max-size (4.0 GiB): " err &&
		test_line_count = 1 err &&
		test_path_is_missing out.$f &&
		! ls out.$f.tmp* 2>/dev/null || return 1
	done &&
	test_must_fail callprof export -f folded --max-size=1M c25.cprof >out 2>err &&
	grep -q "over --max-size (1.0 MiB)" err &&
	test_must_be_empty out &&
	test_expect_code 129 callprof export -f folded --max-size=lots c25.cprof 2>err &&
	grep -q "max-size wants a number" err
'

test_expect_success 'the estimate is close: a chain of 2,000 written, within 10% of it' '
	chain 2000 | mkprofile c2k.cprof &&
	callprof export -f folded c2k.cprof >folded &&
	size=$(wc -c <folded) &&
	test_must_fail callprof export -f folded --max-size=$((size * 9 / 10)) c2k.cprof 2>err &&
	callprof export -f folded --max-size=$((size * 11 / 10)) c2k.cprof >again &&
	test_cmp folded again &&
	callprof export -f plist -o c2k.plist c2k.cprof &&
	size=$(wc -c <c2k.plist) &&
	test_must_fail callprof export -f plist -o x.plist --max-size=$((size * 9 / 10)) c2k.cprof 2>err &&
	callprof export -f plist -o x.plist --max-size=$((size * 11 / 10)) c2k.cprof
'

test_done
