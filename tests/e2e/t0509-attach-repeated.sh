#!/bin/sh
# matrix: cc-opt
test_description='attached to again and again: the process keeps the first runtime copy and no session'"'"'s memory'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/attach-busy-lib.sh"

# Each attach loads a copy of the runtime, which maps its session's memory
# (thread trees; in a process with sleds the stub area and plan, 90 MB of
# address space; a few hundred KB resident) and, with a watcher, shares its
# own data pages.
# The release at the end gives that memory back, and the unload (dlclose)
# the copy itself, but for the first copy: its TLS block is lent to the
# later ones (engine/attach-ptrace.c, find_donor, unload).  Before, a
# process kept every attach's copy and session: per attach 91 MB of address
# space and 0.75 MB resident on t0513's program built with sleds, 0.84 MB
# and 0.49 MB on this one built with hooks (404 MB resident after 431
# attaches of t0513's program).

cleanup () {
	test -s "$TRASH_DIRECTORY/rep.ready" && kill -9 "$(cat "$TRASH_DIRECTORY/rep.ready")" 2>/dev/null
	true
}
trap cleanup EXIT

test_expect_success 'setup: threads that call, wait and check their state' '
	build_workload s-attach-kill.c
'

# snap N: what the process has of ours after attach N, and its size.
snap () {
	grep callprof /proc/"$pid"/maps | sort >maps.$1 &&
	awk "/callprof-attach/ { print \$5 }" maps.$1 | sort -u >copies.$1 &&
	# address space with access (a thread's first malloc reserves 64 MB, ---p)
	python3 -c "import sys
print(sum(int(b, 16) - int(a, 16) for a, b, p in
	  (l.split()[0].split(\"-\") + [l.split()[1]] for l in open(sys.argv[1]))
	  if p != \"---p\") // 1024)" /proc/"$pid"/maps >vm.$1 &&
	awk "/^(RssAnon|RssShmem):/ { n += \$2 } END { print n }" /proc/"$pid"/status >rss.$1
}

test_expect_success 'six attaches, each a profile of its window' '
	start_target rep ./t-attach-kill &&
	for i in 1 2 3 4 5 6
	do
		callprof attach --duration 0.1 -o "$PWD/a$i.cprof" "$pid" 2>a$i.err &&
		grep -q "wrote .*a$i.cprof" a$i.err &&
		callprof report a$i.cprof | grep -q fib &&
		snap $i || return 1
	done &&
	for i in 1 2 3 4 5 6
	do
		echo "after $i: $(cat vm.$i) KB mapped, $(cat rss.$i) KB resident, $(wc -l <maps.$i) mappings of ours"
	done
'

test_expect_success 'one copy stays (the first), the same mappings of ours after the sixth as after the first' '
	test_line_count = 1 copies.1 &&
	test_cmp copies.1 copies.6 &&
	test_cmp maps.1 maps.6 &&
	! grep callprof-stubs maps.6
'

test_expect_success 'the process grew by less than 1 MB of address space and 256 KB resident from the second attach to the sixth' '
	test $(( $(cat vm.6) - $(cat vm.2) )) -lt 1024 &&
	test $(( $(cat rss.6) - $(cat rss.2) )) -lt 256
'

test_expect_success 'and it ends as without callprof' '
	target_done rep &&
	echo "done threads=4 anomalies=0" >expect &&
	test_cmp expect rep.out
'

test_done
