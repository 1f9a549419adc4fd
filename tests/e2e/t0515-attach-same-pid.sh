#!/bin/sh
test_description='two attaches by callprof processes of the same pid: each loads a runtime of its own'
. "$(dirname "$0")/lib.sh"

# The process loads attach's runtime copy as /proc/CALLPROFPID/fd/N, and
# the loader returns a library it has loaded under the name asked for.
# Every attach leaves its copy loaded, so an attach by a callprof whose
# pid an earlier one had (pids wrap: 32768 here) and whose copy got the
# same descriptor was handed the earlier, inert copy and ended "its
# symbols cannot be found" (1 attach in 200 of a loop of attaches to one
# process).  Here the pid is made the same: both attaches run in a pid
# namespace of their own, with ns_last_pid set before each.

cleanup () {
	test -s "$TRASH_DIRECTORY/ns.pid" && kill -9 "$(cat "$TRASH_DIRECTORY/ns.pid")" 2>/dev/null
	true
}
trap cleanup EXIT

if ! unshare --pid --fork --mount-proc sh -c 'echo 10 >/proc/sys/kernel/ns_last_pid' 2>/dev/null; then
	echo "# SKIP (all): no pid namespace of our own here (unshare --pid --mount-proc, ns_last_pid: root)"
	test_done
fi

test_expect_success 'setup: a program that keeps calling' '
	build_workload s-attach-target.c -ldl
'

# In the namespace: the program (one thread: no thread of it takes a pid
# meanwhile), then two attaches, each callprof pid 200.
cat >twice.sh <<\EOF
./t-attach-target ready & t=$!
while ! test -s ready; do sleep 0.05; done
for i in 1 2
do
	echo 199 >/proc/sys/kernel/ns_last_pid || exit 1
	callprof attach --duration 0.1 --time=none -o a$i.cprof "$t" 2>err$i & c=$!
	wait $c
	echo "attach $i: exit $? pid $c" >>status
done
kill -9 "$t"
EOF

test_expect_success 'the second attach, by a callprof of the first one'"'"'s pid, records its window' '
	unshare --pid --fork --kill-child --mount-proc sh twice.sh & echo $! >ns.pid &&
	wait $! &&
	rm ns.pid &&
	cat err1 err2 &&
	grep -q "^callprof: attached to " err1 &&
	grep -q "^callprof: attached to " err2 &&
	printf "attach 1: exit 0 pid 200\nattach 2: exit 0 pid 200\n" >expect &&
	test_cmp expect status &&
	callprof export -f folded -m calls a2.cprof >f2 &&
	grep -q "^main;work " f2
'

test_done
