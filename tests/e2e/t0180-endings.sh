#!/bin/sh
# matrix: cc-opt
test_description='every way a process ends: a valid profile, the same exit status, the same disposition'
. "$(dirname "$0")/lib.sh"

# The workload ends itself in every way, a store through NULL included (on
# purpose), and checks that it sees SIG_DFL: ASan's and UBSan's handlers
# and checks would stand in the way.  It is built unsanitized; the tool
# and the runtime's own UBSan checks still run sanitized.
if test -n "$CP_SANITIZE"; then
	echo "# workload built without sanitizers: it crashes on purpose"
	CP_TEST_CFLAGS=
fi

test_expect_success 'setup' '
	build_workload s-end.c &&
	cat >expect.main <<-\EOT &&
	main 1
	main;finish 1
	main;finish;die 1
	main;finish;die;default_disposition 2
	main;work 10
	main;work;leaf 10
	EOT
	cat >expect.thread <<-\EOT
	main 1
	main;work 10
	main;work;leaf 10
	thread_main 1
	thread_main;finish 1
	thread_main;finish;die 1
	thread_main;finish;die;default_disposition 2
	EOT
'

# ending expected-status expectation
for end in "exit 3 main" "return 3 main" "thread 3 thread" "_exit 3 main" \
	   "abort 134 main" "segv 139 main" "term 143 main"
do
	set -- $end
	test_expect_success "$1: status $2, every call completed before the end is in the profile" "
		test_expect_code $2 command callprof record -o $1.cprof -- ./t-end $1 &&
		callprof export -f folded -m calls $1.cprof >actual &&
		test_cmp expect.$3 actual &&
		callprof export -f folded -m self $1.cprof >self &&
		callprof export -f folded -m total $1.cprof >total &&
		check_time_relations self total
	"
done

test_expect_success 'an abnormal end is said so in the report' '
	callprof report segv.cprof >report &&
	grep -q "^# the process ended abnormally" report &&
	callprof report exit.cprof >report &&
	! grep -q "ended abnormally" report
'

# The kernel must still see a death by SIGSEGV with a core dump.  Only
# checked where cores land in the working directory.
if grep -q "^core" /proc/sys/kernel/core_pattern 2>/dev/null
then
	test_expect_success 'a crash still dumps core' '
		(
			ulimit -c unlimited &&
			rm -f core core.* &&
			test_expect_code 139 env LD_PRELOAD="$CALLPROF_BUILD/libcallprof.so" CALLPROF_OUT=core.cprof \
				./t-end segv
		) &&
		ls core core.[0-9]* 2>/dev/null | grep -q core &&
		callprof export -f folded -m calls core.cprof >actual &&
		test_cmp expect.main actual
	'
fi

# SIGKILL, which no code of the process sees: t0250-killed.sh.

test_done
