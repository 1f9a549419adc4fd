#!/bin/sh
# matrix: cc-opt
# suite: thread
test_description='SIGKILL: the watcher writes the profile of a killed program'
. "$(dirname "$0")/lib.sh"

# watcher_fds PID: fail unless the watcher of process PID exists (a
# callprof-watch process holding a pidfd on PID: it is not PID's child) and
# holds nothing of the program's: only /dev/null, its pidfd, the program's
# /proc directory (its credentials), its signalfd (snapshot requests) and
# record's status file.
watcher_fds () {
	_w=
	for _c in /proc/[0-9]*/comm
	do
		test "$(cat "$_c" 2>/dev/null)" = callprof-watch || continue
		_p=${_c%/comm}
		grep -qs "^Pid:[[:space:]]*$1\$" "$_p"/fdinfo/* && _w=${_p#/proc/} && break
	done
	test -n "$_w" &&
	! grep -qs "^PPid:[[:space:]]*$1\$" /proc/$_w/status &&
	for _fd in /proc/$_w/fd/*
	do
		_t=$(readlink "$_fd") || return 1
		case "$_t" in
		/dev/null|"anon_inode:[pidfd]"|"anon_inode:[signalfd]"|/proc/$1) ;;
		"${TMPDIR:-/tmp}"/callprof-status.*) ;;
		*) echo "the watcher holds $_t"; return 1 ;;
		esac
	done
}

test_expect_success 'setup' '
	build_workload s-kill.c &&
	cat >expect.self <<-\EOT &&
	main 1
	main;doomed 1
	main;work 5
	main;work;leaf 5
	EOT
	cat >expect.wait <<-\EOT &&
	main 1
	main;wait_mode 1
	main;wait_mode;park 1
	main;wait_mode;work 100
	main;wait_mode;work;leaf 100
	thread_main 1
	thread_main;park 1
	thread_main;work 50
	thread_main;work;leaf 50
	EOT
	cat >expect.parent <<-\EOT &&
	main 1
	main;work 3
	main;work;leaf 3
	EOT
	cat >expect.child <<-\EOT &&
	main 0
	main;doomed 1
	main;work 7
	main;work;leaf 7
	EOT
	cat >expect.exec1 <<-\EOT
	main 1
	main;work 4
	main;work;leaf 4
	EOT
'

test_expect_success 'killed by its own SIGKILL: status 137, the exact profile, said so' '
	test_expect_code 137 command callprof record -o self.cprof -- ./t-kill self 2>err &&
	grep "^callprof: wrote self.cprof: 1 thread, 12 calls, 4 call paths, CPU time from [0-9]* samples at 3989 Hz" err &&
	callprof export -f folded -m calls self.cprof >actual &&
	test_cmp expect.self actual &&
	callprof report self.cprof >report &&
	grep -q "^# the process was killed (SIGKILL or the like)" report &&
	callprof export -f folded -m self self.cprof >self &&
	callprof export -f folded -m total self.cprof >total &&
	check_time_relations self total
'

test_expect_success 'kill -9 from outside: every thread, its name, the calls still open' '
	rm -f ready &&
	{ command callprof record -o wait.cprof -- ./t-kill wait ready >out 2>err & } &&
	rpid=$! &&
	i=0 &&
	while ! test -s ready && test $i -lt 300
	do
		sleep 0.1 && i=$((i + 1))
	done &&
	pid=$(cat ready) &&
	watcher_fds $pid &&
	kill -9 $pid &&
	test_expect_code 137 wait $rpid &&
	grep "^callprof: wrote wait.cprof: 2 threads, 305 calls, 9 call paths, CPU time from [0-9]* samples at 3989 Hz" err &&
	callprof export -f folded -m calls wait.cprof >actual &&
	test_cmp expect.wait actual &&
	callprof report --threads=each wait.cprof >report &&
	grep -q "kworker" report &&
	callprof export -f folded -m self wait.cprof >self &&
	callprof export -f folded -m total wait.cprof >total &&
	check_time_relations self total
'

test_expect_success 'a fork child killed: its own profile; the parent counts only its own calls' '
	callprof record -o child.cprof -- ./t-kill child 2>err &&
	ls child.cprof* >files &&
	test_line_count = 2 files &&
	callprof export -f folded -m calls child.cprof >actual &&
	test_cmp expect.parent actual &&
	callprof export -f folded -m calls $(grep "^child\.cprof\.[0-9]*$" files) >actual &&
	test_cmp expect.child actual
'

# A child reaped at once: its watcher cannot read its credentials any more
# (CALLPROF_WATCH_DELAY_MS makes sure it looks only after the reaping).  It
# writes the profile only if the child could not have changed them (no
# capability, all ids equal): as root, it cannot tell, and writes nothing.
test_expect_success 'a fork child killed and reaped at once: a profile unless it had rights' '
	rm -f reaped.cprof* &&
	CALLPROF_WATCH_DELAY_MS=300 callprof record -o reaped.cprof -- ./t-kill child-reaped 2>err &&
	ls reaped.cprof* >files &&
	callprof export -f folded -m calls reaped.cprof >actual &&
	test_cmp expect.parent actual &&
	if test "$(id -u)" = 0
	then
		test_line_count = 1 files
	else
		test_line_count = 2 files
	fi
'

# The watchers are record's children (a subreaper), but record waits only
# for those whose program has ended: a process the run leaves behind keeps
# its watcher, which writes its profile when it ends.
test_expect_success 'a process left running: record ends without it, its profile comes later' '
	build_workload s-leave.c &&
	rm -f left.cprof* child.pid go &&
	callprof record -o left.cprof -- ./t-leave child.pid go 2>err &&
	wait_for child.pid &&
	kill -0 $(cat child.pid) &&
	ls left.cprof* >files &&
	echo left.cprof >expect &&
	test_cmp expect files &&
	touch go &&
	wait_for left.cprof.$(cat child.pid) &&
	callprof export -f folded -m calls left.cprof.$(cat child.pid) >actual &&
	printf "main 0\nmain;work 2\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'killed after exec: the new image'"'"'s watcher writes; the old one keeps quiet' '
	test_expect_code 137 command callprof record -o exec.cprof -- ./t-kill exec 2>err &&
	ls exec.cprof* >files &&
	printf "exec.cprof\nexec.cprof.exec1\n" >expect &&
	test_cmp expect files &&
	callprof export -f folded -m calls exec.cprof.exec1 >actual &&
	test_cmp expect.exec1 actual &&
	callprof export -f folded -m calls exec.cprof >actual &&
	test_cmp expect.self actual
'

test_expect_success 'CALLPROF_WATCH=0: no watcher, no profile, said clearly' '
	CALLPROF_WATCH=0 &&
	export CALLPROF_WATCH &&
	test_expect_code 137 command callprof record -o off.cprof -- ./t-kill self 2>err &&
	grep -q "no profile written to .off.cprof." err &&
	test_path_is_missing off.cprof
'

test_done
