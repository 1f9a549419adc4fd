#!/bin/sh
# matrix: cc-opt
test_description='record: output file, static runtime, stdin and arguments'
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	build_workload s-nested.c &&
	build_workload s-cat.c &&
	printf "one\ntwo\nthree\n" >input
'

test_expect_success 'the default output is ./callprof.out' '
	mkdir default &&
	(
		cd default &&
		callprof record -- ../t-nested &&
		test_path_is_file callprof.out &&
		callprof export -f folded -m calls >../actual
	) &&
	test_cmp "$EXPECT/nested.calls" actual
'

test_expect_success '-o FILE writes FILE and nothing else' '
	mkdir named &&
	(
		cd named &&
		callprof record -o my.cprof -- ../t-nested &&
		ls -A >../listing
	) &&
	echo my.cprof >expect.listing &&
	test_cmp expect.listing listing &&
	callprof export -f folded -m calls named/my.cprof >actual &&
	test_cmp "$EXPECT/nested.calls" actual
'

test_expect_success '"--" is optional before the program' '
	callprof record -o nodash.cprof ./t-nested &&
	callprof export -f folded -m calls nodash.cprof >actual &&
	test_cmp "$EXPECT/nested.calls" actual
'

test_expect_success 'static runtime: CALLPROF_OUT without callprof record' '
	cc_kind "$CP_BUILD_KIND" $CC $OPT -g -o t-static "$WORKLOADS/s-nested.c" \
		$CP_RUNTIME_A -lpthread &&
	mkdir static &&
	(
		cd static &&
		CALLPROF_OUT=p.cprof ../t-static &&
		ls -A >../listing
	) &&
	echo p.cprof >expect.listing &&
	test_cmp expect.listing listing &&
	callprof export -f folded -m calls static/p.cprof >actual &&
	test_cmp "$EXPECT/nested.calls" actual
'

test_expect_success 'stdin passes through (redirected file)' '
	callprof record -o cat.cprof -- ./t-cat <input >output &&
	test_cmp input output &&
	callprof export -f folded -m calls cat.cprof >actual &&
	test_cmp "$EXPECT/cat.calls" actual
'

test_expect_success 'stdin passes through (pipe)' '
	cat input | callprof record -o cat2.cprof -- ./t-cat >output2 &&
	test_cmp input output2 &&
	callprof export -f folded -m calls cat2.cprof >actual &&
	test_cmp "$EXPECT/cat.calls" actual
'

test_expect_success 'export -o writes the file instead of stdout' '
	callprof export -f folded -m calls -o out.folded cat.cprof >stdout &&
	test_must_be_empty stdout &&
	test_cmp "$EXPECT/cat.calls" out.folded
'

test_done
