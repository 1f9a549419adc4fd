#!/bin/sh
# matrix: cc-opt
# suite: thread
test_description='SIGKILL: the watcher writes the profile of a killed program'
. "$(dirname "$0")/lib.sh"

# watcher_fds PID: fail unless the watcher of process PID exists and holds
# nothing of the program's but /dev/null, its pidfd, its signalfd (snapshot
# requests) and record's pipe.
watcher_fds () {
	_w=$(grep -l "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2>/dev/null | head -n 1) &&
	_w=${_w#/proc/} && _w=${_w%/status} &&
	test -n "$_w" &&
	test "$(cat /proc/$_w/comm)" = callprof-watch &&
	for _fd in /proc/$_w/fd/*
	do
		_t=$(readlink "$_fd") || return 1
		case "$_t" in
		/dev/null|"anon_inode:[pidfd]"|"anon_inode:[signalfd]"|pipe:*) ;;
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
	grep "^callprof: wrote self.cprof: 1 thread, 12 calls, 4 call paths$" err &&
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
	grep "^callprof: wrote wait.cprof: 2 threads, 305 calls, 9 call paths$" err &&
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
