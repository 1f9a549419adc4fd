#!/bin/sh
test_description='callprof dump PID while the program'"'"'s profile memory grows: the newest watcher answers'
. "$(dirname "$0")/lib.sh"

# A watcher sees the runtime's arena as it was when it was cloned; a new
# piece (the trees grew) gets a newer watcher, and the older one, stale,
# ends itself.  A request that reached the older one just then was
# dropped: callprof dump waited its whole 10 s and failed ("no snapshot
# after 10 s"; t0513's dump case under load, issue 30).  Here the race is
# made certain: the watcher is stopped, asked, made stale, and let go.

cleanup () {
	test -s "$TRASH_DIRECTORY/stopped" && kill -CONT "$(cat "$TRASH_DIRECTORY/stopped")" 2>/dev/null
	test -s "$TRASH_DIRECTORY/ready" && kill -TERM "$(cat "$TRASH_DIRECTORY/ready")" 2>/dev/null
	test -s "$TRASH_DIRECTORY/target.pid" && kill -9 "$(cat "$TRASH_DIRECTORY/target.pid")" 2>/dev/null
	true
}
trap cleanup EXIT

# asked W: SIGUSR2 is pending for the (stopped) watcher W
asked () {
	_m=$(sed -n "s/^ShdPnd:[[:space:]]*//p" "/proc/$1/status")
	test $((0x$_m & 0x800)) != 0
}

# dump_stopped SUB: the callprof dump that subshell SUB runs has stopped itself
dump_stopped () {
	_d=$(pgrep -P "$1" -x callprof) &&
	grep -q "^State:[[:space:]]*T" "/proc/$_d/status"
}

# one_more PID W: PID has a live watcher besides W
one_more () {
	watchers_of "$1" | grep -v -x "$2" | grep -q .
}

# grow_started OUT: t-grow recorded into OUT, its pid in pid, its one
# watcher in w
grow_started () {
	rm -f ready grown dump.status &&
	{ callprof record -o "$1" -- ./t-grow ready grown >"$1.rec" 2>&1 & } &&
	wait_for ready &&
	pid=$(cat ready) &&
	until_true has_watcher $pid &&
	w=$(watchers_of $pid) &&
	test $(echo "$w" | wc -l) = 1
}

# grow_dumped SNAP OUT: the callprof dump in the background succeeded and
# wrote SNAP, a snapshot of the quiet program; then t-grow ends and writes OUT
grow_dumped () {
	until_true test -s dump.status &&
	cat dump.err &&
	test "$(cat dump.status)" = 0 &&
	echo "$1" >expect &&
	test_cmp expect dump.out &&
	callprof export -f folded -m calls "$1" >snap.f &&
	grep -q "^main;work 1$" snap.f &&
	kill -TERM $pid &&
	rm ready &&
	until_true test -s "$2"
}

test_expect_success 'setup' '
	build_workload s-grow.c &&
	build_workload s-hotloop.c
'

test_expect_success 'a request to a watcher that goes stale is answered by the newer one' '
	grow_started g.cprof &&
	kill -STOP $w &&
	echo $w >stopped &&
	{ { callprof dump -o snap.cprof $pid >dump.out 2>dump.err; echo $? >dump.status; } & } &&
	until_true asked $w &&
	kill -USR1 $pid &&
	until_true one_more $pid $w &&
	# the snapshot of a quiet program: one while threads end is another matter
	until_true test -s grown &&
	kill -CONT $w &&
	rm stopped &&
	grow_dumped snap.cprof g.cprof
'

# A watcher that answered, then went stale (or its attach window closed),
# ended at once, and the requester, which copies the snapshot through the
# watcher's descriptor (/proc/WATCHER/fd/N), found nothing there: "cannot
# find the snapshot" (t0513's dump case, 1 run in 10).  It now waits for
# its reader to end first.  The race made certain: callprof dump stops
# itself between the answer and the copy (CALLPROF_TEST_DUMP_STOP), the
# watcher is made stale, given time to end, and the dump let go.
test_expect_success 'a watcher that goes stale after answering keeps the snapshot for its reader' '
	grow_started g2.cprof &&
	{ { CALLPROF_TEST_DUMP_STOP=1 command callprof dump -o snap2.cprof $pid >dump.out 2>dump.err
	    echo $? >dump.status; } & } &&
	sub=$! &&
	until_true dump_stopped $sub &&
	kill -USR1 $pid &&
	until_true one_more $pid $w &&
	until_true test -s grown &&
	# a stale watcher looks every 250 ms: it would be gone by now
	sleep 0.8 &&
	kill -CONT $(pgrep -P $sub -x callprof) &&
	grow_dumped snap2.cprof g2.cprof
'

# The watcher of a callprof attach window that has closed answers -ESRCH
# (its session is over) until it ends, a quarter of a second later.  A
# request that reached it just as the next window opened was answered
# "no snapshot: it is ending" (t0513's dump case under load): the newer
# window's watcher answers.  The race made certain: the first window's
# watcher is stopped, asked, the next window opened, and it is let go.
test_expect_success 'a request to the watcher of a closed attach window is answered by the next one' '
	{ ./t-hotloop & } &&
	target=$! && echo $target >target.pid &&
	sleep 0.3 &&
	{ callprof attach --duration 1 --time=none -o w1.cprof $target 2>w1.err & } &&
	a1=$! &&
	until_true has_watcher $target &&
	w=$(watchers_of $target) &&
	test $(echo "$w" | wc -l) = 1 &&
	kill -STOP $w &&
	echo $w >stopped &&
	wait $a1 &&
	# a newer watcher of the first window (its tree grew) ends as it closes
	until_true no_watcher $target &&
	rm -f dump.status &&
	{ { callprof dump -o snap.cprof $target >dump.out 2>dump.err; echo $? >dump.status; } & } &&
	until_true asked $w &&
	{ callprof attach --duration 4 --time=none -o w2.cprof $target 2>w2.err & } &&
	a2=$! &&
	until_true one_more $target $w &&
	kill -CONT $w &&
	rm stopped &&
	until_true test -s dump.status &&
	cat dump.err &&
	test "$(cat dump.status)" = 0 &&
	wait $a2 &&
	callprof export -f folded -m calls snap.cprof >snap.f &&
	grep -q "^worker;a;b " snap.f &&
	kill -9 $target &&
	rm target.pid
'

test_done
