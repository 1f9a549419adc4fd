#!/bin/sh
# matrix: cc-opt
# suite: thread
test_description='run-time control API: regions, snapshots, reset, labels, pause; dump from outside'
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	build_workload s-api.c &&
	cat >expect.all <<-\EOT &&
	main 1
	main;all 1
	main;all;[setup] 2
	main;all;[setup];[load] 1
	main;all;[setup];[load];leaf 1
	main;all;[setup];inner 2
	main;all;[setup];inner;leaf 5
	main;all;tick 10
	worker 1
	worker;inner 1
	worker;inner;leaf 4
	EOT
	printf "all 30\n" >expect.out &&
	printf "dump1=-1 Function not implemented\ndump2=-1 Function not implemented\ndump3=-1 Function not implemented\n" >expect.err.plain
'

test_expect_success 'without callprof: builds and runs the same, PIE or not, static' '
	$CC $OPT -Wall -o plain-pie "$WORKLOADS/s-api.c" -lpthread &&
	$CC $OPT -Wall -no-pie -o plain-nopie "$WORKLOADS/s-api.c" -lpthread &&
	$CC $OPT -Wall -static -o plain-static "$WORKLOADS/s-api.c" -lpthread &&
	cc_kind "$CP_BUILD_KIND" $CC $OPT $CP_TEST_CFLAGS -g -Wall -no-pie -o instr-nopie "$WORKLOADS/s-api.c" -lpthread &&
	for p in plain-pie plain-nopie plain-static t-api
	do
		./$p >out 2>err &&
		test_cmp expect.out out &&
		test_cmp expect.err.plain err || return 1
	done
'

test_expect_success 'regions nest with calls, with exact counts; labels name threads' '
	callprof record -o p.cprof -- ./t-api >out 2>err &&
	test_cmp expect.out out &&
	grep "^dump1=0$" err && grep "^dump2=0$" err && grep "^dump3=0$" err &&
	callprof export -f folded -m calls p.cprof >actual &&
	test_cmp expect.all actual &&
	callprof report --threads=each p.cprof >report &&
	grep "^== api-main (1 thread" report &&
	grep "^== worker-label (1 thread" report &&
	callprof export -f json p.cprof >p.json &&
	grep "\"unpaired_exits\": *1" p.json
'

test_expect_success 'non-PIE under record: the API finds the preloaded runtime' '
	callprof record -o np.cprof -- ./instr-nopie >out 2>err &&
	grep "^dump1=0$" err &&
	callprof export -f folded -m calls np.cprof >actual &&
	grep "^main;all;\[setup\] 2$" actual
'

test_expect_success 'two snapshots differ exactly by the calls between them' '
	callprof export -f folded -m calls d1.cprof >d1 &&
	callprof export -f folded -m calls d2.cprof >d2 &&
	grep "^main;all;tick 3$" d1 &&
	grep "^main;all;tick 10$" d2 &&
	grep -v "^main;all;tick " d1 >d1.rest &&
	grep -v "^main;all;tick " d2 >d2.rest &&
	test_cmp d1.rest d2.rest &&
	test_path_is_file p.cprof.dump1 &&
	callprof report p.cprof.dump1 >/dev/null
'

test_expect_success 'merge keeps regions' '
	callprof merge -o m.cprof p.cprof d2.cprof &&
	callprof export -f folded -m calls m.cprof >actual &&
	grep "^main;all;\[setup\];\[load\] 2$" actual &&
	grep "^main;all;\[setup\];inner;leaf 10$" actual
'

test_expect_success 'reset: the profile counts only what came after' '
	callprof record -o r.cprof -- ./t-api reset >out &&
	echo "reset 9" >expect &&
	test_cmp expect out &&
	callprof export -f folded -m calls r.cprof >actual &&
	grep "^main;reset;after 4$" actual &&
	grep "^main;reset;after;leaf 4$" actual &&
	! grep "^main;reset;before [1-9]" actual &&
	callprof export -f folded -m self r.cprof >self &&
	callprof export -f folded -m total r.cprof >total &&
	check_time_relations self total
'

test_expect_success 'pause: calls made while paused are not recorded (needs main'"'"'s control.c)' '
	callprof record -o pa.cprof -- ./t-api pause >out &&
	callprof export -f folded -m calls pa.cprof >actual &&
	grep "^main;pause_mode;resumed_fn 2$" actual &&
	grep "^main;pause_mode;spans_pause 1$" actual &&
	grep "^main;pause_mode;spans_pause;leaf 1$" actual &&
	! grep "paused_fn" actual
'

test_expect_success 'reset: calls left unrecorded before it are not counted after it' '
	callprof record -o rp.cprof -- ./t-api reset-pause >out &&
	echo "reset-pause 6" >expect &&
	test_cmp expect out &&
	callprof export -f folded -m calls rp.cprof >actual &&
	grep "^main;reset_pause;resumed_fn 1$" actual &&
	! grep paused_fn actual &&
	callprof report rp.cprof >report &&
	grep "^# 4 calls began while recording was paused (callprof_pause) and were not recorded$" report
'

test_expect_success 'record --dump-on=SIGUSR2: kill -USR2 writes a snapshot, the program runs on' '
	rm -f ready stop &&
	{ callprof record --dump-on=SIGUSR2 -o s.cprof -- ./t-api serve ready >out 2>err & } &&
	wait_for ready &&
	pid=$(cat ready) &&
	kill -USR2 $pid &&
	wait_for s.cprof.dump1 &&
	kill -0 $pid &&
	callprof export -f folded -m calls s.cprof.dump1 >snap &&
	grep "^main;serve;tick [1-9]" snap &&
	touch stop &&
	wait &&
	echo served >expect &&
	test_cmp expect out &&
	grep "^callprof: wrote s.cprof: 1 thread" err &&
	callprof export -f folded -m calls s.cprof >final &&
	grep "^main;serve;tick [1-9]" final
'

test_expect_success 'callprof dump PID: a snapshot of a running daemon, moved with -o' '
	rm -f ready stop &&
	{ callprof record -o d.cprof -- ./t-api serve ready >out 2>err & } &&
	wait_for ready &&
	pid=$(cat ready) &&
	callprof dump $pid >path &&
	test_path_is_file "$(cat path)" &&
	callprof dump -o snap.cprof $pid >path2 &&
	echo snap.cprof >expect &&
	test_cmp expect path2 &&
	callprof export -f folded -m calls snap.cprof >snap &&
	grep "^main;serve;tick [1-9]" snap &&
	touch stop &&
	wait &&
	test_path_is_file d.cprof
'

test_expect_success 'callprof dump: clear errors for no process, or one callprof does not record' '
	test_expect_code 1 callprof dump 999999999 2>err &&
	echo "callprof: error: no process 999999999" >expect &&
	test_cmp expect err &&
	{ sleep 5 & } &&
	other=$! &&
	test_expect_code 1 callprof dump $other 2>err &&
	echo "callprof: error: process $other is not recorded by callprof (no callprof-watch for it)" >expect &&
	test_cmp expect err &&
	kill $other
'

test_done
