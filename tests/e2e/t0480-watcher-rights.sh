#!/bin/sh
test_description='the watcher never has more rights than the program has now'
. "$(dirname "$0")/lib.sh"

# A root program drops to nobody after its first call, writes a path of
# its choosing over the output path in the memory it shares with its
# watcher, and kills itself.  The watcher must write the profile where it
# was asked, as nobody, or nothing: never create the file of the attack.

# The program reads all of its writable memory, redzones included.
test_skip_sanitized address 'the attacking program scans its own memory, which ASan reports'

if test "$(id -u)" != 0; then
	test_skip 'the watcher takes the rights of a program that dropped them' 'needs root'
	test_done
fi

test_expect_success 'setup: an open directory, a root-only one, the program' '
	build_workload s-droppriv.c &&
	base=$(mktemp -d /tmp/cp-rights.XXXXXX) &&
	echo "$base" >base &&
	chmod 755 "$base" &&
	mkdir "$base/open" "$base/rootonly" &&
	chmod 1777 "$base/open" &&
	chmod 700 "$base/rootonly" &&
	cp t-droppriv "$base/" && chmod 755 "$base/t-droppriv"
'

test_expect_success 'rewritten output path: not followed; the profile is written as nobody' '
	base=$(cat base) &&
	out=$base/open/p.cprof evil=$base/rootonly/pwned &&
	test_expect_code 137 command callprof record -o "$out" -- "$base/t-droppriv" "$out" "$evil" 2>err &&
	cat err &&
	test_path_is_missing "$evil" &&
	ls "$base/rootonly" >left &&
	test_must_be_empty left &&
	test_path_is_file "$out" &&
	test "$(stat -c %u "$out")" = 65534 &&
	callprof report --min-percent=0 "$out" >rep &&
	grep "the process was killed" rep &&
	grep -E "^ +2 .* work$" rep
'

test_expect_success 'an output only root may write: nothing written, one line saying why' '
	base=$(cat base) &&
	out=$base/rootonly/p.cprof evil=$base/open/pwned &&
	test_expect_code 137 command callprof record -o "$out" -- "$base/t-droppriv" "$out" "$evil" 2>err &&
	cat err &&
	test_path_is_missing "$out" &&
	test_path_is_missing "$evil" &&
	grep "no profile written to .*watcher could not write it: Permission denied" err &&
	! grep "did not load the runtime" err
'

# callprof dump finds a program's watcher by the memory it shares with the
# program, which no other process has: a process of another user that takes
# a watcher's name and a pidfd on the program is not asked.  And what the
# watcher (the program's, with the program's rights) answers does not make
# root read or remove what the program could not.

test_expect_success 'setup: a root program, fakes run as nobody' '
	base=$(cat base) &&
	build_workload s-api.c &&
	build_workload s-fakewatch.c &&
	cp t-fakewatch "$base/" && chmod 755 "$base/t-fakewatch" &&
	echo secret >"$base/secret" && chmod 600 "$base/secret" &&
	echo "do not remove" >"$base/victim" && chmod 644 "$base/victim"
'

test_expect_success 'a process named callprof-watch with a pidfd on the program is not its watcher' '
	base=$(cat base) &&
	rm -f ready stop &&
	{ callprof record -o d.cprof -- ./t-api serve ready >out 2>err & } &&
	wait_for ready &&
	pid=$(cat ready) &&
	{ setpriv --reuid=nobody --regid=nogroup --clear-groups "$base/t-fakewatch" outside $pid "$base/victim" >fake.out & } &&
	echo $! >>pids &&
	wait_for fake.out &&
	callprof dump $pid >path 2>dump.err &&
	cat dump.err &&
	grep "/d\.cprof\.dump1$" path &&
	callprof export -f folded -m calls "$(cat path)" >snap &&
	grep "^main;serve;tick [1-9]" snap &&
	test_path_is_file "$base/victim"
'

test_expect_success 'root dumps the program of another user: its watcher answers' '
	base=$(cat base) &&
	rm -f "$base/open/u.cprof"* &&
	cp t-api "$base/" && chmod 755 "$base/t-api" &&
	{ setpriv --reuid=nobody --regid=nogroup --clear-groups callprof record -o "$base/open/u.cprof" -- "$base/t-api" serve "$base/open/ready" >out 2>err & } &&
	wait_for "$base/open/ready" &&
	pid=$(cat "$base/open/ready") &&
	(cd "$base/open" && callprof dump -o "$TRASH_DIRECTORY/u.cprof" $pid >"$TRASH_DIRECTORY/path") &&
	echo "$TRASH_DIRECTORY/u.cprof" >expect &&
	test_cmp expect path &&
	callprof export -f folded -m calls u.cprof >snap &&
	grep "^main;serve;tick [1-9]" snap &&
	test "$(stat -c %u "$base/open/u.cprof.dump1")" = "$(id -u nobody)"
'

# A leader that ended by pthread_exit keeps the rights it had: root's here,
# while the thread that runs on dropped to nobody.  The watcher took the
# leader's for the program's and wrote the snapshot as root.
test_expect_success 'the leader ended, the running thread dropped to nobody: the snapshot is written as nobody' '
	base=$(cat base) &&
	build_workload s-leaderdrop.c &&
	cp t-leaderdrop "$base/" && chmod 755 "$base/t-leaderdrop" &&
	rm -f "$base/open/ld.cprof"* &&
	{ callprof record -o "$base/open/ld.cprof" -- "$base/t-leaderdrop" "$base/open/ld.ready" "$base/open/ld.stop" >ld.out 2>ld.err & } &&
	wait_for "$base/open/ld.ready" &&
	pid=$(cat "$base/open/ld.ready") &&
	echo $pid >>pids &&
	grep "^State:.*Z" /proc/$pid/status &&
	grep "^Uid:[[:space:]]*0[[:space:]]" /proc/$pid/status &&
	callprof dump $pid >path 2>dump.err &&
	cat dump.err &&
	echo "$base/open/ld.cprof.dump1" >expect &&
	test_cmp expect path &&
	test "$(stat -c %u "$base/open/ld.cprof.dump1")" = "$(id -u nobody)" &&
	touch "$base/open/ld.stop" &&
	wait &&
	callprof report --min-percent=0 "$base/open/ld.cprof" >rep &&
	grep -E "^ +[1-9][0-9]* .* work$" rep
'

for file in secret victim
do
	test_expect_success "a hostile program answers with $file: not copied, not removed" '
		base=$(cat base) &&
		rm -f fake.out &&
		{ setpriv --reuid=nobody --regid=nogroup --clear-groups callprof record -o "$base/open/h.cprof" -- "$base/t-fakewatch" inside "$base/$file" >fake.out 2>fake.err & } &&
		wait_for fake.out &&
		pid=$(sed -n "s/^ready \([0-9]*\) .*/\1/p" fake.out) &&
		sed -n "s/^ready //p" fake.out >>pids &&
		test_expect_code 1 callprof dump -o stolen.cprof $pid 2>dump.err &&
		cat dump.err &&
		grep "is not a regular file of the program.s user" dump.err &&
		test_path_is_missing stolen.cprof &&
		test_path_is_file "$base/$file"
	'
done

test_expect_success 'cleanup' '
	touch stop "$(cat base)/open/stop" &&
	for pid in $(cat pids 2>/dev/null) $(sed -n "s/^ready [0-9]* //p" fake.out 2>/dev/null)
	do
		kill $pid 2>/dev/null
	done &&
	sleep 1 &&
	rm -rf "$(cat base)"
'

test_done
