#!/bin/sh
# matrix: cc-opt
test_description='callprof attach in calls inlined with their hooks: the seeded stack is the hooks'"'"' stack'
. "$(dirname "$0")/lib.sh"
test_skip_sleds 'its subject is the hooks of inlined calls, which a sleds build has none of (an inlined function is part of its caller: t0500)'

# The target (workloads/s-attach-inlined.c), started without callprof:
# gcc keeps the -finstrument-functions hooks of a function it inlines (and
# clang does without -finstrument-functions-after-inlining), so one
# physical frame of outer() holds outer > mid > inner of the hooks' world.
# Two gate threads block inside inlined calls until the test lets them
# through (their counts are then exact against the program's own); two
# workers call outer() as fast as they can.  A seeded stack that leaves out
# an inlined call makes an unpaired exit when that call returns (issue 30,
# A5: a key-value server's connSocketEventHandler > readQueryFromClient,
# without the inlined callHandler between them).

cleanup_target () {
	test -s "$TRASH_DIRECTORY/storm.pid" && kill "$(cat "$TRASH_DIRECTORY/storm.pid")" 2>/dev/null
	for _f in "$TRASH_DIRECTORY"/*.pid
	do
		case "$_f" in */storm.pid) continue ;; esac
		test -s "$_f" && kill -9 "$(cat "$_f")" 2>/dev/null
	done
	true
}
trap cleanup_target EXIT

# tgt_start NAME PROG: start ./PROG (no callprof) on NAME.cmd (a FIFO) and
# NAME.reply; wait for "ready PID" (both gates blocked), PID in NAME.pid.
tgt_start () {
	rm -f "$1.cmd" "$1.reply" "$1.pid" &&
	mkfifo "$1.cmd" &&
	{ ./"$2" "$1.cmd" "$1.reply" </dev/null >"$1.out" 2>&1 & } &&
	tgt_wait_lines "$1" 1 &&
	sed -n '1s/^ready \([0-9][0-9]*\)$/\1/p' "$1.reply" >"$1.pid" &&
	test -s "$1.pid"
}

tgt_lines () {
	if test -f "$1.reply"; then wc -l <"$1.reply"; else echo 0; fi
}

# tgt_wait_lines NAME N: until NAME.reply has N lines (at most 20 s); a
# target that ended is said at once, with its output and replies.  Its
# counter is its own: the polling loops below call it.
tgt_wait_lines () {
	_wl=0
	while test "$(tgt_lines "$1")" -lt "$2"
	do
		# ended: but a reply written just before the end ("bye") counts
		if test -s "$1.pid" && tgt_gone "$(cat "$1.pid")" &&
			test "$(tgt_lines "$1")" -lt "$2"; then
			echo "$1: the target ended before reply $2"
			tgt_show "$1"
			return 1
		fi
		test $_wl -lt 1000 || { echo "$1: no reply $2 in 20 s"; tgt_show "$1"; return 1; }
		sleep 0.02
		_wl=$((_wl + 1))
	done
}

# tgt_gone PID: the target ended (a zombie not yet reaped by this shell too)
tgt_gone () {
	! kill -0 "$1" 2>/dev/null || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# tgt_show NAME: the target's output and its replies
tgt_show () {
	echo "--- $1.out:"
	cat "$1.out" 2>/dev/null
	echo "--- $1.reply:"
	cat -n "$1.reply" 2>/dev/null | cut -c1-1000
	echo "---"
}

# tgt_cmd NAME COMMAND: send COMMAND, print its reply
tgt_cmd () {
	_n=$(($(tgt_lines "$1") + 1)) &&
	printf '%s\n' "$2" 1<>"$1.cmd" &&
	tgt_wait_lines "$1" $_n &&
	sed -n "${_n}p" "$1.reply"
}

# stat_of FILE KEY: the value of KEY=VALUE in a stats line
stat_of () {
	tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"
}

# tgt_stats NAME FILE: the stats into FILE
tgt_stats () {
	tgt_cmd "$1" stats >"$2" &&
	grep -q "^stats " "$2"
}

# tgt_settled NAME FILE OUTER: stats into FILE until both gates are blocked
# again and the gate has entered outer OUTER times (at most 10 s)
tgt_settled () {
	_pl=0
	while tgt_stats "$1" "$2" &&
		! { test "$(stat_of "$2" waiting)" = 1 && test "$(stat_of "$2" gate:outer)" = "$3"; }
	do
		test $_pl -lt 500 || { echo "gates not blocked again:"; cat "$2"; return 1; }
		sleep 0.02
		_pl=$((_pl + 1))
	done
}

# attach_bg NAME PID ARGS...: callprof attach in the background, ended by
# SIGINT (attach_end); its pid in NAME.apid
attach_bg () {
	_a=$1 _p=$2
	shift 2
	{ env --default-signal=INT callprof attach "$@" -o "$_a.cprof" "$_p" >"$_a.aout" 2>"$_a.aerr" & } &&
	echo $! >"$_a.apid"
}

# window_open NAME TGT FILE: until the target's hooks are callprof's; that
# stats reply (the first inside the window) into FILE
window_open () {
	_pl=0
	while tgt_stats "$2" "$3" && test "$(stat_of "$3" hooks)" != callprof
	do
		kill -0 "$(cat "$1.apid")" 2>/dev/null || { echo "attach ended:"; cat "$1.aerr"; return 1; }
		test $_pl -lt 1000 || { echo "the hooks never became callprof's"; cat "$1.aerr"; return 1; }
		sleep 0.02
		_pl=$((_pl + 1))
	done
}

# attach_end NAME: SIGINT, and its exit status must be 0
attach_end () {
	kill -INT "$(cat "$1.apid")" &&
	wait "$(cat "$1.apid")" &&
	rm "$1.apid"
}

# path_calls FOLDED PREFIX FUNCTION: calls of FUNCTION summed over the paths
# that begin with PREFIX and end with it
path_calls () {
	awk -v p="$2" -v f="$3" '
		index($1, p) == 1 { n = split($1, a, ";"); if (a[n] == f) s += $2 }
		END { print s + 0 }' "$1"
}

# delta A B KEY: B's KEY less A's
delta () {
	echo $(($(stat_of "$2" "$3") - $(stat_of "$1" "$3")))
}

# exact FOLDED A B: the gates' calls in the window are the program's
# between stats A and B, function by function
exact () {
	for _k in gate:outer gate:mid gate:inner gate:leaf rec:rec rec:step rec:leaf
	do
		_want=$(delta "$2" "$3" "$_k")
		case $_k in
		gate:*) _got=$(path_calls "$1" "gate;" "${_k#gate:}") ;;
		rec:*) _got=$(path_calls "$1" "recgate;" "${_k#rec:}") ;;
		esac
		test "$_got" = "$_want" || { echo "$_k: profile $_got, program $_want"; return 1; }
	done
}

# paths_ok FOLDED: every path is one the program makes (a SIGUSR1 may run
# on_usr1;usr1_work on top of any)
paths_ok () {
	sed -e "s/;on_usr1;usr1_work \([0-9]*\)$/ \1/" -e "s/;on_usr1 \([0-9]*\)$/ \1/" \
		-e "s/^on_usr1;usr1_work /on_usr1 /" "$1" |
	awk "{ print \$1 }" | sort -u >paths &&
	! grep -v -x -e main -e on_usr1 -e worker -e "worker;outer" -e "worker;outer;mid" \
		-e "worker;outer;mid;inner" -e "worker;outer;mid;inner;leaf" -e gate -e "gate;outer" \
		-e "gate;outer;mid" -e "gate;outer;mid;inner" -e "gate;outer;mid;inner;leaf" \
		-e recgate -e "recgate;rec" -e "recgate;rec;leaf" -e "recgate;rec;step" \
		-e "recgate;rec;step;rec" -e "recgate;rec;step;rec;leaf" -e "recgate;rec;step;rec;step" \
		-e "recgate;rec;step;rec;step;rec" paths
}

# unpaired REPORT: the report's count of unpaired exits (0 if it has none)
unpaired () {
	sed -n "s/^# warning: incomplete: .* \([0-9][0-9]*\) unpaired exits.*/\1/p" "$1" | grep . || echo 0
}

test_expect_success 'setup' '
	build_workload s-attach-inlined.c -ldl &&
	objcopy --strip-debug t-attach-inlined t-nodebug
'

# open_marks JSON: "PATH OPEN" for every node with calls open at attach
open_marks () {
	python3 - "$1" <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	names = [f["name"] for f in d["functions"]]
	for t in d["trees"]:
	    nodes = t["nodes"]
	    for n in nodes:
	        if not n.get("open_at_attach"):
	            continue
	        path, p = [], n
	        while p is not None and p.get("function") is not None:
	            path.append(names[p["function"]])
	            p = nodes[p["parent"]] if p.get("parent") is not None else None
	        print(";".join(reversed(path)), n["open_at_attach"])
	EOF
}

test_expect_success 'threads blocked inside inlined calls: seeded whole, their calls exact' '
	tgt_start t t-attach-inlined &&
	tgt_stats t t.P &&
	test "$(stat_of t.P hooks)" = glibc &&
	attach_bg w "$(cat t.pid)" --time=none &&
	window_open w t w.A &&
	test "$(stat_of w.A waiting)" = 1 &&
	tgt_cmd t "release 3" >w.rel &&
	tgt_settled t w.B $(($(stat_of w.A gate:outer) + 3)) &&
	test "$(stat_of w.B hooks)" = callprof &&
	attach_end w &&
	tgt_stats t w.C &&
	test "$(stat_of w.C hooks)" = glibc &&
	callprof report w.cprof >w.rep &&
	test "$(unpaired w.rep)" = 0 &&
	callprof export -f folded -m calls w.cprof >w.f &&
	paths_ok w.f &&
	exact w.f w.A w.B &&
	callprof export -f json -o w.json w.cprof &&
	open_marks w.json >w.open &&
	for p in gate gate\;outer gate\;outer\;mid gate\;outer\;mid\;inner recgate recgate\;rec \
		recgate\;rec\;step recgate\;rec\;step\;rec recgate\;rec\;step\;rec\;step \
		recgate\;rec\;step\;rec\;step\;rec
	do
		grep -q -x "$p 1" w.open || { echo "$p: not open at attach once"; cat w.open; return 1; }
	done
'

test_expect_success 'twelve windows in the hot loop, signals landing anywhere: nothing unpaired' '
	target=$(cat t.pid) &&
	{ ( while kill -USR1 "$target" 2>/dev/null; do sleep 0.002; done ) & } &&
	storm=$! && echo $storm >storm.pid &&
	i=0 &&
	while test $i -lt 12
	do
		callprof attach --duration 0.1 --time=none -o hot$i.cprof "$target" 2>err$i &&
		callprof report hot$i.cprof >rep$i &&
		test "$(unpaired rep$i)" = 0 &&
		callprof export -f folded -m calls hot$i.cprof >f$i &&
		paths_ok f$i &&
		o=$(path_calls f$i "worker;" outer) && m=$(path_calls f$i "worker;" mid) &&
		n=$(path_calls f$i "worker;" inner) && l=$(path_calls f$i "worker;" leaf) &&
		test "$o" -gt 0 &&
		# per worker, a call open at either edge of the window
		test $((m - o)) -le 2 && test $((o - m)) -le 2 &&
		test $((n - m)) -le 2 && test $((m - n)) -le 2 &&
		test $((l - 3 * n)) -le 6 && test $((3 * n - l)) -le 6 &&
		i=$((i + 1)) || break
	done &&
	test $i = 12 &&
	kill "$storm" && rm storm.pid &&
	cat f* | grep -q ";on_usr1;usr1_work " &&
	tgt_cmd t quit >t.bye &&
	grep -q "^bye$" t.bye &&
	rm t.pid
'

# Without debug information the tool cannot see the inlined calls: their
# exits are unpaired.  Where an older call of the same function is on the
# stack (rec's own copy, below the rec inlined in step), such an exit must
# not be taken for that call's, which would close the calls between: the
# leaf calls made after it would land under recgate itself.
test_expect_success 'no debug information: inlined calls unseen, their exits counted as unpaired, nothing misplaced' '
	tgt_start s t-nodebug &&
	attach_bg v "$(cat s.pid)" --time=none &&
	window_open v s v.A &&
	tgt_cmd s "release 1" >v.rel &&
	tgt_settled s v.B $(($(stat_of v.A gate:outer) + 1)) &&
	attach_end v &&
	callprof report v.cprof >v.rep &&
	test "$(unpaired v.rep)" -ge 2 &&
	callprof export -f folded -m calls v.cprof >v.f &&
	! grep -e "^recgate;leaf " -e "^recgate;step" -e "^gate;leaf " v.f &&
	exact v.f v.A v.B &&
	tgt_cmd s quit >s.bye &&
	grep -q "^bye$" s.bye &&
	rm s.pid
'

test_done
