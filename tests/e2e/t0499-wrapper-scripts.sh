#!/bin/sh
# matrix: cc-opt
test_description='wrapper scripts: only processes that ran instrumented code write profiles'
. "$(dirname "$0")/lib.sh"

# A shell pipeline around the program, as a wrapper script or a test
# harness runs it: sh, sed and ls load the runtime too (LD_PRELOAD) but run
# no instrumented code.  The script's status and output are its own.
script='echo a | sed s/a/b/ | ./t-nested; echo out; ls >/dev/null; exit 3'

# only_profiles PREFIX EXPECTED...: the files PREFIX* are exactly those.
only_profiles () {
	_p=$1 &&
	shift &&
	ls -A | grep "^$_p" >files &&
	printf "%s\n" "$@" >expect-files &&
	test_cmp expect-files files
}

test_expect_success 'record of a shell pipeline: the program writes FILE.PID, the shell and sed nothing' '
	build_workload s-nested.c &&
	test_expect_code 3 callprof record -o p.cprof -- sh -c "$script" >out 2>err &&
	echo out >expect && test_cmp expect out &&
	child=$(ls p.cprof.* | grep "^p\.cprof\.[0-9][0-9]*$") &&
	only_profiles p.cprof "$child" &&
	pid=${child#p.cprof.} &&
	grep "^callprof: no profile written to .p.cprof.: sh (pid [0-9]*) ran no instrumented code$" err &&
	grep "^callprof: other processes of the run wrote 1 profile: $child (pid $pid ./t-nested)$" err &&
	test_line_count = 2 err &&
	callprof export -f folded -m calls "$child" >actual &&
	test_cmp "$EXPECT/nested.calls" actual
'

for mode in cpu timing counting coverage; do
	test_expect_success "record --mode=$mode of the pipeline: one profile, the program's" "
		rm -f m.cprof* &&
		test_expect_code 3 callprof record --mode=$mode -o m.cprof -- sh -c \"\$script\" >out 2>err &&
		echo out >expect && test_cmp expect out &&
		child=\$(ls m.cprof.*) &&
		only_profiles m.cprof \"\$child\" &&
		grep \"^callprof: other processes of the run wrote 1 profile: \$child (pid [0-9]* ./t-nested)$\" err
	"
done

test_expect_success 'a wrapper that execs the program (libtool): FILE alone, no FILE.exec1' '
	printf "#!/bin/sh\nexec ./t-nested \"\$@\"\n" >wrapper &&
	chmod +x wrapper &&
	callprof record -o w.cprof -- ./wrapper >out 2>err &&
	test_must_be_empty out &&
	only_profiles w.cprof w.cprof &&
	grep "^callprof: wrote w.cprof: 1 thread, 11 calls, 5 call paths" err &&
	! grep "other processes" err &&
	callprof export -f folded -m calls w.cprof >actual &&
	test_cmp "$EXPECT/nested.calls" actual
'

test_expect_success 'no process ran instrumented code: a warning, no file, the status kept' '
	test_expect_code 4 callprof record -o n.cprof -- sh -c "echo a | sed s/a/b/; ls >/dev/null; exit 4" >out 2>err &&
	echo b >expect && test_cmp expect out &&
	echo "callprof: warning: no process of the run ran instrumented code, so no profile was written: compile the program with -finstrument-functions -g, or sample it (--sample)" >expect &&
	test_cmp expect err &&
	ls -A >listing &&
	! grep "^n\.cprof" listing
'

test_expect_success 'then an earlier FILE goes to FILE.old: FILE is never an older run' '
	callprof record -o n.cprof -- ./t-nested 2>/dev/null &&
	cp n.cprof n.before &&
	test_expect_code 4 callprof record -o n.cprof -- sh -c "exit 4" 2>err &&
	grep "^callprof: moved the previous n.cprof to n.cprof.old$" err &&
	test_path_is_missing n.cprof &&
	test_cmp n.before n.cprof.old
'

# By hand, each mode's runtime: no CALLPROF_ROOT_PID, so the first
# process owns h.cprof; none of them may write, and the script behaves
# as without the runtime.
for lib in libcallprof-cpu.so libcallprof.so libcallprof-counting.so libcallprof-coverage.so; do
	test_expect_success "preloaded by hand ($lib): the shell, sed and ls write nothing" "
		rm -f h.cprof* &&
		test_expect_code 5 env LD_PRELOAD=\"\$CALLPROF_BUILD/$lib\" CALLPROF_OUT=\"\$PWD/h.cprof\" \
			sh -c 'echo a | sed s/a/b/; ls >/dev/null; exit 5' >out 2>err &&
		echo b >expect && test_cmp expect out &&
		test_must_be_empty err &&
		ls -A >listing &&
		! grep '^h\\.cprof' listing &&
		LD_PRELOAD=\"\$CALLPROF_BUILD/$lib\" CALLPROF_OUT=\"\$PWD/h.cprof\" sh -c './t-nested; true' &&
		only_profiles h.cprof h.cprof
	"
done

# A fork child of an instrumented program took its parent's call paths
# over (with no calls): that alone is not code it ran.
test_expect_success 'a fork child that only execs writes no FILE.PID.exec1' '
	build_workload s-forkexec.c &&
	for mode in cpu timing counting coverage; do
		rm -f fe.cprof* &&
		test_expect_code 3 callprof record --mode=$mode -o fe.cprof -- ./t-forkexec exec >out 2>err &&
		echo "done exec" >expect && test_cmp expect out &&
		only_profiles fe.cprof fe.cprof &&
		! grep "other processes" err || return 1
	done
'

# Coverage keeps no stack: a return is no trace there (callprof-record(1)).
test_expect_success 'a fork child that returns into instrumented code writes FILE.PID' '
	for mode in cpu timing counting; do
		rm -f fr.cprof* &&
		test_expect_code 3 callprof record --mode=$mode -o fr.cprof -- ./t-forkexec return >out 2>err &&
		echo "done return" >expect && test_cmp expect out &&
		child=$(ls fr.cprof.*) &&
		only_profiles fr.cprof fr.cprof "$child" &&
		grep "^callprof: other processes of the run wrote 1 profile: $child (pid ${child#fr.cprof.} ./t-forkexec)$" err || return 1
	done
'

test_expect_success 'a program that uses the API writes a profile, instrumented or not' '
	$CC $OPT $CP_TEST_CFLAGS -g -Wall -o u-forkexec "$WORKLOADS/s-forkexec.c" &&
	test_expect_code 3 callprof record -o api.cprof -- ./u-forkexec api >out 2>err &&
	echo "done api" >expect && test_cmp expect out &&
	grep "^callprof: wrote api.cprof: 1 thread, 0 calls" err &&
	callprof report --threads=each api.cprof >report &&
	grep "labelled" report
'

test_done
