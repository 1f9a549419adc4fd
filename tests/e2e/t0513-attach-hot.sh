#!/bin/sh
# matrix: cc-opt
test_description='attach and detach while threads are hot in calls, in signal handlers, and coming and going: every window a consistent tree'
. "$(dirname "$0")/lib.sh"

# The target: started without callprof, killed at the end whatever happens.
cleanup_target () {
	test -s "$TRASH_DIRECTORY/storm.pid" && kill "$(cat "$TRASH_DIRECTORY/storm.pid")" 2>/dev/null
	test -s "$TRASH_DIRECTORY/target.pid" && kill -9 "$(cat "$TRASH_DIRECTORY/target.pid")" 2>/dev/null
	true
}
trap cleanup_target EXIT

test_expect_success 'setup: two workers in a tight loop of calls, a thread spawner, a USR1 handler' '
	build_workload s-hotloop.c &&
	{ ./t-hotloop & } &&
	target=$! && echo $target >target.pid &&
	sleep 0.3 &&
	kill -0 "$target"
'

# paths_ok FOLDED: every path is one the program makes (the USR1 handler,
# on_usr1;h, may run on top of any, and on a thread that has not reached
# its start function yet).  A seeded call in the wrong place would show as
# worker;a;a, or a;b at the root; an enter counted twice as worker;a;b;b.
paths_ok () {
	sed -e "s/;on_usr1;h \([0-9]*\)$/ \1/" -e "s/;on_usr1 \([0-9]*\)$/ \1/" "$1" |
	awk "{ print \$1 }" | sort -u >paths &&
	! grep -v -x -e worker -e "worker;a" -e "worker;a;b" -e brief -e "brief;a" \
		-e "brief;a;b" -e main -e spawner -e on_usr1 -e "on_usr1;h" paths
}

# complete_enough REPORT: nothing unpaired, no call in an unrecorded path.
# Events may be dropped: a USR1 handler that interrupts a hook is not
# recorded under attach (record wraps handlers; attach leaves them alone).
complete_enough () {
	! grep "warning: incomplete" "$1" | grep -v ": 0 calls in unrecorded paths, [0-9]* events dropped, 0 unpaired exits, 0 threads not set up$"
}

# calls_of FOLDED PATH
calls_of () {
	awk -v p="$2" "\$1 == p { n += \$2 } END { print n + 0 }" "$1"
}

test_expect_success 'twelve windows, each a whole tree: no seeded call twice, none missing, nothing unpaired' '
	target=$(cat target.pid) &&
	{ ( while kill -USR1 "$target" 2>/dev/null; do sleep 0.002; done ) & } &&
	storm=$! && echo $storm >storm.pid &&
	i=0 &&
	while test $i -lt 12
	do
		callprof attach --duration 0.1 --time=none -o hot$i.cprof "$target" 2>err$i &&
		# the window lasts the duration at least (more on a loaded machine)
		w=$(sed -n "s/^callprof: attached to $target (t-hotloop) for \([0-9.]*\) s: .*/\1/p" err$i) &&
		awk -v w="$w" "BEGIN { exit !(w >= 0.1) }" &&
		callprof report hot$i.cprof >rep$i &&
		complete_enough rep$i &&
		# a sleds call open at attach returns unseen by design: not "abandoned"
		{ test "$CP_BUILD_KIND" != sleds || ! grep "frames were abandoned" rep$i; } &&
		callprof export -f folded -m calls hot$i.cprof >f$i &&
		paths_ok f$i &&
		a=$(calls_of f$i "worker;a") && b=$(calls_of f$i "worker;a;b") &&
		test "$a" -gt 0 &&
		# a call of a open at either edge makes its b calls one side of it
		test $((b - 2 * a)) -le 4 && test $((2 * a - b)) -le 4 &&
		i=$((i + 1)) || break
	done &&
	test $i = 12 &&
	kill "$storm" && rm storm.pid &&
	cat f* | grep -q ";on_usr1;h "
'

test_expect_success 'clock mode too: every window whole, times from the attach' '
	target=$(cat target.pid) &&
	# no storm now, even when the case before failed and left it running
	# (a handler that interrupts a hook is dropped: "incomplete" below)
	{ ! test -s storm.pid || { kill "$(cat storm.pid)"; rm storm.pid; }; } &&
	callprof attach --duration 0.2 --time=clock -o clock.cprof "$target" 2>err &&
	callprof report clock.cprof >rep &&
	! grep -q "warning: incomplete" rep &&
	callprof export -f folded -m calls clock.cprof >f &&
	paths_ok f
'

test_expect_success 'callprof dump while attached: a snapshot of the window so far; the window goes on' '
	target=$(cat target.pid) &&
	# the watchers of the windows before end within a quarter of a second
	# (one not gone yet leaves the answer to the newer one: cmd-dump.c)
	until_true no_watcher $target &&
	{ callprof attach --duration 3 -o win.cprof "$target" 2>win.err & } &&
	apid=$! &&
	# the window is on once its watcher is (the first call after the attach)
	until_true has_watcher $target &&
	sleep 0.3 &&
	callprof dump -o snap.cprof "$target" >dump.out &&
	wait $apid &&
	callprof export -f folded -m calls snap.cprof >snap.f &&
	paths_ok snap.f &&
	callprof export -f folded -m calls win.cprof >win.f &&
	snap=$(calls_of snap.f "worker;a") && win=$(calls_of win.f "worker;a") &&
	test "$snap" -gt 0 && test "$win" -gt "$snap"
'

test_expect_success 'record-time selection: --exclude-tree and --max-depth apply to the window' '
	target=$(cat target.pid) &&
	callprof attach --duration 0.2 --time=none --exclude-tree b -o sel.cprof "$target" 2>err &&
	callprof export -f folded -m calls sel.cprof >sel.f &&
	grep -q "^worker;a " sel.f && ! grep -q ";b " sel.f &&
	callprof attach --duration 0.2 --time=none --max-depth 2 -o depth.cprof "$target" 2>err &&
	callprof export -f folded -m calls depth.cprof >depth.f &&
	grep -q "^worker;a " depth.f && ! grep -q "^worker;a;b " depth.f
'

test_expect_success 'after: running, untraced, its hooks the C library'"'"'s again' '
	target=$(cat target.pid) &&
	kill -0 "$target" &&
	state=$(sed "s/.*) //" /proc/$target/stat | cut -d" " -f1) &&
	test "$state" != T && test "$state" != t &&
	grep -q "^TracerPid:[[:space:]]*0$" /proc/$target/status &&
	! grep -q "perf_event" /proc/$target/maps &&
	kill -9 "$target" && rm target.pid
'

test_done
