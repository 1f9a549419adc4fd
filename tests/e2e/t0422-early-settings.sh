#!/bin/sh
# matrix: cc-opt
test_description='the runtime reads the settings the process was started with, however early it starts'
. "$(dirname "$0")/lib.sh"

# Instrumented code from .preinit_array runs before the C library has set
# environ and before any constructor: the runtime starts there.  It must
# still write where CALLPROF_OUT says, and a program that changes its
# environment before the runtime looks must not move the profile.

# In a sleds build nothing calls the runtime before its constructor
# patches the sleds, so the calls made from .preinit_array are not
# counted (docs/limitations.md); the settings must hold all the same.
test_expect_success 'setup: the workload, and what its profile holds' '
	build_workload s-preinit.c &&
	if test "$CP_BUILD_KIND" = sleds
	then
		printf "%s\n" "main 1" "main;early 1" >expect
	else
		printf "%s\n" "main 1" "main;early 1" "pre 1" "pre;early 1" >expect
	fi
'

test_expect_success '.preinit_array code under record: the profile is at -o' '
	test_expect_code 3 callprof record -o p.cprof -- ./t-preinit >out 2>err &&
	cat err &&
	echo "main ran" >expect-out &&
	test_cmp expect-out out &&
	test_path_is_missing callprof.out &&
	grep "^callprof: wrote p.cprof:" err &&
	callprof export -f folded -m calls p.cprof >actual &&
	test_cmp expect actual
'

test_expect_success 'a program that sets CALLPROF_OUT itself first does not move the profile' '
	test_expect_code 3 callprof record -o set.cprof -- ./t-preinit setenv >out 2>err &&
	cat err &&
	test_path_is_missing hijacked &&
	test_path_is_missing callprof.out &&
	callprof export -f folded -m calls set.cprof >actual &&
	test_cmp expect actual
'

test_expect_success 'the runtime linked in (libcallprof.a), dynamic program' '
	cc_kind "$CP_BUILD_KIND" $CC $OPT -g -I"$WORKLOADS" -o t-preinit-a "$WORKLOADS/s-preinit.c" \
		$CP_RUNTIME_A -lpthread &&
	mkdir a && (cd a &&
	test_expect_code 3 env CALLPROF_OUT=../a.cprof ../t-preinit-a setenv >out &&
	test_path_is_missing hijacked &&
	test_path_is_missing callprof.out) &&
	callprof export -f folded -m calls a.cprof >actual &&
	test_cmp expect actual
'

if $CC -static -o t-static-probe "$WORKLOADS/s-tiny.c" 2>/dev/null; then
	test_expect_success 'the runtime linked in, static program' '
		cc_kind "$CP_BUILD_KIND" $CC $OPT -g -static -I"$WORKLOADS" -o t-preinit-s \
			"$WORKLOADS/s-preinit.c" $CP_RUNTIME_A -lpthread &&
		mkdir s && (cd s &&
		test_expect_code 3 env CALLPROF_OUT=../s.cprof ../t-preinit-s >out &&
		test_path_is_missing callprof.out) &&
		callprof export -f folded -m calls s.cprof >actual &&
		test_cmp expect actual
	'
else
	test_skip 'the runtime linked in, static program' 'no static C library'
fi

test_done
