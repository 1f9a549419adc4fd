#!/bin/sh
# matrix: cc-opt
test_description='record names the processes of the run that run on after it returns'
. "$(dirname "$0")/lib.sh"

# A program that daemonizes: record returns with the parent, and the daemon
# writes FILE.PID when it ends.  record says so, with the pid, and how to
# get a snapshot now.

test_expect_success 'setup' '
	build_workload s-daemon.c
'

test_expect_success 'record returns with the parent and names the daemon, its file and callprof dump' '
	test_expect_code 0 callprof record -o d.cprof -- ./t-daemon fork "$PWD/ready" "$PWD/stop" >out 2>err &&
	cat err &&
	echo "daemon started" >expect &&
	test_cmp expect out &&
	pid=$(cat ready) &&
	kill -0 $pid &&
	grep "^callprof: wrote d.cprof: " err &&
	grep "^callprof: 1 process of the run runs on: t-daemon (pid $pid) will write d.cprof.$pid; .callprof dump PID. writes a snapshot now$" err
'

test_expect_success 'callprof dump takes a snapshot of the daemon' '
	pid=$(cat ready) &&
	callprof dump $pid >path &&
	echo "$PWD/d.cprof.$pid.dump1" >expect &&
	test_cmp expect path &&
	callprof export -f folded -m calls "$(cat path)" >snap &&
	grep ";work 1$" snap
'

test_expect_success 'the daemon writes FILE.PID when it ends' '
	pid=$(cat ready) &&
	touch stop &&
	wait_for d.cprof.$pid &&
	while kill -0 $pid 2>/dev/null; do sleep 0.1; done &&
	callprof export -f folded -m calls d.cprof.$pid >calls &&
	grep ";work 2$" calls
'

test_expect_success 'a program that leaves nothing running: no such line' '
	callprof record -o plain.cprof -- ./t-daemon >out 2>err &&
	cat err &&
	! grep "of the run runs\{0,1\} on" err
'

test_done
