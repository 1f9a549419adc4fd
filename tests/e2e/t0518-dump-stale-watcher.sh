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
	true
}
trap cleanup EXIT

# watchers PID: the live watchers of process PID (a pidfd on it), one a line
watchers () {
	for _w in $(pgrep -x callprof-watch)
	do
		grep -q "^State:[[:space:]]*[RSD]" "/proc/$_w/status" 2>/dev/null &&
		grep -l -s "^Pid:[[:space:]]*$1$" /proc/$_w/fdinfo/* >/dev/null &&
		echo $_w
	done
	true
}

# until_true CMD...: until CMD succeeds (at most 20 s)
until_true () {
	_i=0
	until "$@"
	do
		test $_i -lt 1000 || { echo "not true in 20 s: $*"; return 1; }
		sleep 0.02
		_i=$((_i + 1))
	done
}

# asked W: SIGUSR2 is pending for the (stopped) watcher W
asked () {
	_m=$(sed -n "s/^ShdPnd:[[:space:]]*//p" "/proc/$1/status")
	test $((0x$_m & 0x800)) != 0
}

# one_more PID W: PID has a live watcher besides W
one_more () {
	watchers "$1" | grep -v -x "$2" | grep -q .
}

test_expect_success 'setup' '
	build_workload s-grow.c
'

test_expect_success 'a request to a watcher that goes stale is answered by the newer one' '
	rm -f ready grown &&
	{ callprof record -o g.cprof -- ./t-grow ready grown >rec.out 2>&1 & } &&
	wait_for ready &&
	pid=$(cat ready) &&
	until_true test -n "$(watchers $pid)" &&
	w=$(watchers $pid) &&
	test $(echo "$w" | wc -l) = 1 &&
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
	until_true test -s dump.status &&
	test "$(cat dump.status)" = 0 &&
	echo snap.cprof >expect &&
	test_cmp expect dump.out &&
	callprof export -f folded -m calls snap.cprof >snap.f &&
	grep -q "^main;work 1$" snap.f &&
	kill -TERM $pid &&
	rm ready &&
	until_true test -s g.cprof
'

test_done
