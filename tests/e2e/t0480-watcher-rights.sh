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

test_expect_success 'cleanup' '
	rm -rf "$(cat base)"
'

test_done
