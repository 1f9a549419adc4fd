#!/bin/sh
test_description='the profile file: mode from the umask, symlinks never followed, nothing in secure execution'
. "$(dirname "$0")/lib.sh"

# A file mode in octal: mode_of FILE
mode_of () {
	stat -c %a "$1"
}

test_expect_success 'the profile gets 0666 less the umask (077: 0600, 022: 0644)' '
	build_workload s-nested.c &&
	(umask 077 && callprof record -o private.cprof -- ./t-nested >/dev/null) &&
	test "$(mode_of private.cprof)" = 600 &&
	(umask 022 && callprof record -o shared.cprof -- ./t-nested >/dev/null) &&
	test "$(mode_of shared.cprof)" = 644 &&
	(umask 002 && callprof record -o group.cprof -- ./t-nested >/dev/null) &&
	test "$(mode_of group.cprof)" = 664
'

test_expect_success 'snapshots (.dumpN) get the umask too' '
	build_workload s-api.c &&
	(umask 077 && callprof record -o api.cprof -- ./t-api >/dev/null 2>err) &&
	grep "^dump3=0$" err &&
	test "$(mode_of api.cprof.dump1)" = 600 &&
	test "$(mode_of d1.cprof)" = 600
'

test_expect_success 'a symlink planted at the output path is replaced, its target untouched' '
	echo precious >victim &&
	ln -s victim planted.cprof &&
	ln -s not-there dangling.cprof &&
	callprof record -o planted.cprof -- ./t-nested >/dev/null &&
	callprof record -o dangling.cprof -- ./t-nested >/dev/null &&
	echo precious >expect &&
	test_cmp expect victim &&
	test_path_is_missing not-there &&
	test -f planted.cprof && ! test -h planted.cprof &&
	test -f dangling.cprof && ! test -h dangling.cprof &&
	test "$(readlink planted.cprof.old)" = victim &&
	callprof report planted.cprof >/dev/null
'

test_expect_success 'a symlink planted at a snapshot path (.dump1) is not followed' '
	echo precious >dump-victim &&
	rm -f api.cprof* &&
	ln -s dump-victim api.cprof.dump1 &&
	callprof record -o api.cprof -- ./t-api >/dev/null 2>err &&
	grep "^dump3=0$" err &&
	echo precious >expect &&
	test_cmp expect dump-victim &&
	test -f api.cprof.dump1 && ! test -h api.cprof.dump1 &&
	callprof report api.cprof.dump1 >/dev/null
'

test_expect_success 'record keeps one FILE.old at most, and says when it moved one' '
	rm -f keep.cprof* &&
	callprof record --mode=counting -o keep.cprof -- ./t-nested >/dev/null 2>err &&
	echo "callprof: wrote keep.cprof: 1 thread, 11 calls, 5 call paths (counting)" >expect &&
	test_cmp expect err &&
	test_path_is_missing keep.cprof.old &&
	cp keep.cprof first.cprof &&
	callprof record --mode=counting -o keep.cprof -- ./t-nested >/dev/null 2>err &&
	echo "callprof: wrote keep.cprof: 1 thread, 11 calls, 5 call paths (counting); moved the previous keep.cprof to keep.cprof.old" >expect &&
	test_cmp expect err &&
	test_cmp first.cprof keep.cprof.old &&
	cp keep.cprof second.cprof &&
	callprof record -o keep.cprof -- ./t-nested >/dev/null 2>err &&
	grep "^callprof: wrote keep.cprof: .*; moved the previous keep.cprof to keep.cprof.old$" err &&
	test_cmp second.cprof keep.cprof.old &&
	ls -A >listing &&
	grep "^keep\\.cprof" listing >kept &&
	printf "keep.cprof\nkeep.cprof.old\n" >expect &&
	test_cmp expect kept
'

test_expect_success 'a write that dies half way leaves the previous profile whole' '
	callprof record -o whole.cprof -- ./t-nested >/dev/null &&
	cp whole.cprof whole.before &&
	# At most 2 blocks (1-2 KB) of file, less than the profile: the write gets
	# SIGXFSZ (or EFBIG) part way.
	{ (ulimit -f 2 && command callprof record -o whole.cprof -- ./t-nested >/dev/null 2>err) || :; } &&
	test_cmp whole.before whole.cprof &&
	test_path_is_missing whole.cprof.old
'

# Every command that writes a file refuses, in one line, before any work,
# an output that would destroy something: one of its inputs, an
# executable, for a profile anything but a profile, for an export a profile.
test_expect_success 'export -o INPUT: refused, the input untouched, no .old' '
	build_workload s-fsize.c &&
	callprof record -o in.cprof -- ./t-nested >/dev/null 2>&1 &&
	cp in.cprof in.before &&
	for f in json folded callgrind svg; do
		test_expect_code 1 callprof export -f $f -o in.cprof in.cprof 2>err &&
		echo "callprof: error: cannot write '"'"'in.cprof'"'"': it is one of the inputs (choose another output name)" >expect &&
		test_cmp expect err &&
		test_cmp in.before in.cprof &&
		test_path_is_missing in.cprof.old || return 1
	done &&
	ln in.cprof hard.cprof &&
	test_expect_code 1 callprof export -f json -o hard.cprof in.cprof 2>err &&
	grep "one of the inputs" err &&
	test_cmp in.before in.cprof
'

test_expect_success 'merge -o INPUT: refused before reading, the input untouched' '
	cp in.cprof in2.cprof &&
	test_expect_code 1 callprof merge -q -o in2.cprof in.cprof in2.cprof 2>err &&
	test_line_count = 1 err &&
	grep "cannot write '"'"'in2.cprof'"'"': it is one of the inputs" err &&
	test_cmp in.before in2.cprof &&
	test_path_is_missing in2.cprof.old
'

test_expect_success 'record -o PROGRAM: refused, the program neither run nor moved' '
	cp t-fsize t-copy &&
	test_expect_code 1 callprof record -o t-copy -- ./t-copy >out 2>err &&
	test_must_be_empty out &&
	test_line_count = 1 err &&
	grep "cannot write '"'"'t-copy'"'"'" err &&
	cmp t-fsize t-copy &&
	test_path_is_missing t-copy.old &&
	# another executable that is not the program: refused all the same
	test_expect_code 1 callprof record -o t-copy -- ./t-fsize >out 2>err &&
	test_must_be_empty out &&
	grep "it is an executable file" err &&
	cmp t-fsize t-copy &&
	test_expect_code 7 callprof record -o t-copy.cprof -- ./t-copy >out 2>err &&
	grep "^sum=" out
'

test_expect_success 'a profile never replaces a file that is not a profile; an export never a profile' '
	echo "my notes" >notes.txt &&
	test_expect_code 1 callprof record -o notes.txt -- ./t-fsize >out 2>err &&
	test_must_be_empty out &&
	grep "cannot write '"'"'notes.txt'"'"': it is not a callprof profile" err &&
	test_expect_code 1 callprof merge -q -o notes.txt in.cprof 2>err &&
	grep "it is not a callprof profile" err &&
	echo "my notes" >expect &&
	test_cmp expect notes.txt &&
	test_path_is_missing notes.txt.old &&
	cp in.cprof other.cprof &&
	test_expect_code 1 callprof export -f json -o other.cprof in.cprof 2>err &&
	grep "cannot write '"'"'other.cprof'"'"': it is a callprof profile" err &&
	test_cmp in.before other.cprof
'

test_expect_success 'the runtime itself never replaces a file that is not a profile (CALLPROF_OUT)' '
	echo "my notes" >notes2.txt &&
	test_expect_code 7 env LD_PRELOAD="$CALLPROF_BUILD/libcallprof.so" \
		CALLPROF_OUT="$PWD/notes2.txt" ./t-fsize >out 2>err &&
	grep "^sum=120$" out &&
	echo "callprof: cannot write profile '"'"'$PWD/notes2.txt'"'"': File exists" >expect &&
	test_cmp expect err &&
	echo "my notes" >expect &&
	test_cmp expect notes2.txt &&
	test_path_is_missing notes2.txt.old
'

test_expect_success 'what may be replaced still is: a profile, an empty file, a previous export' '
	callprof record -o other.cprof -- ./t-nested >/dev/null 2>&1 &&
	test_path_is_file other.cprof.old &&
	: >empty.cprof &&
	callprof record -o empty.cprof -- ./t-nested >/dev/null 2>&1 &&
	callprof report empty.cprof >/dev/null &&
	callprof merge -q -o other.cprof in.cprof empty.cprof &&
	callprof export -f json -o in.json in.cprof &&
	callprof export -f json -o in.json in.cprof &&
	callprof export -f folded -o in.json in.cprof &&
	test -s in.json
'

# 255 characters (NAME_MAX) less 20 of temporaries: 235 is the longest
# profile name, 236 the shortest refused.
long_name () {
	printf "%0$1d" 0
}

test_expect_success 'an output name too long for its temporaries fails before the program runs' '
	name=$(long_name 236) &&
	test_expect_code 1 callprof record -o $name -- ./t-fsize >out 2>err &&
	test_must_be_empty out &&
	test_line_count = 1 err &&
	grep "file name too long" err &&
	test_expect_code 1 callprof merge -q -o $name in.cprof 2>err &&
	grep "file name too long" err &&
	test_expect_code 1 callprof export -f json -o $(long_name 240) in.cprof 2>err &&
	test_line_count = 1 err &&
	grep "file name too long" err &&
	ls >listing &&
	! grep 0000000000 listing &&
	name=$(long_name 235) &&
	test_expect_code 7 callprof record -o $name -- ./t-fsize >out 2>/dev/null &&
	grep "^sum=" out &&
	callprof report $name >/dev/null &&
	callprof export -f json -o $(long_name 236) $name &&
	test -s $(long_name 236)
'

test_expect_success 'record: the program gets the signal dispositions callprof got' '
	test_expect_code 7 callprof record -o fsize.cprof -- ./t-fsize >out 2>/dev/null &&
	printf "pipe=dfl xfsz=dfl\nsum=120\n" >expect &&
	test_cmp expect out &&
	test_expect_code 7 callprof record --sample -o fsize.cprof -- ./t-fsize >out 2>/dev/null &&
	test_cmp expect out &&
	# ignored when callprof starts: ignored for the program too
	(trap "" PIPE XFSZ &&
	 test_expect_code 7 callprof record -o fsize.cprof -- ./t-fsize >out 2>/dev/null) &&
	printf "pipe=ign xfsz=ign\nsum=120\n" >expect &&
	test_cmp expect out
'

# run_fsize WATCH: t-fsize lowers its file size limit below its profile's size.
run_fsize () {
	rm -f lim.cprof* &&
	CALLPROF_WATCH=$1 test_expect_code 7 callprof record -o lim.cprof -- ./t-fsize 600 >out 2>err &&
	printf "pipe=dfl xfsz=dfl\nsum=120\n" >expect &&
	test_cmp expect out &&
	grep "^callprof: cannot write profile .*lim.cprof.: File too large$" err &&
	test "$(grep -c "lim.cprof" err)" -le 2 &&
	ls -A >listing &&
	! grep "^lim\.cprof" listing
}

test_expect_success 'a program that lowers RLIMIT_FSIZE: its status and output unchanged, the write fails in one line' '
	run_fsize 1
'

test_expect_success 'the same without the watcher: no temporary left' '
	run_fsize 0
'

# A sleds build's return stubs live in memory the runtime maps at start:
# sized as a file (a memfd), they raised SIGXFSZ under a limit below their
# size, which killed the program before main.
test_expect_success 'a sleds build started under a small file size limit: its status and output unchanged' '
	build_kind sleds s-fsize.c &&
	rm -f lim2.cprof* &&
	(ulimit -f 2 && test_expect_code 7 callprof record -o lim2.cprof -- ./t-fsize.sleds >out 2>err) &&
	printf "pipe=dfl xfsz=dfl\nsum=120\n" >expect &&
	test_cmp expect out &&
	! grep -i "killed\|signal" err
'

# The outputs must outgrow the limit.  An svg draws the contexts that have
# time: t-nested is too short to be sampled, so its svg is the clocked
# profile's (--time=clock), where every context has some.
test_expect_success 'callprof under a file size limit: an error, not SIGXFSZ, and no temporary' '
	callprof record --time=clock -o clocked.cprof -- ./t-nested >/dev/null &&
	for f in svg json; do
		case $f in svg) p=clocked ;; *) p=whole ;; esac &&
		callprof export -f $f -o whole.$f $p.cprof &&
		test $(wc -c <whole.$f) -gt 1100 &&
		rm whole.$f &&
		(ulimit -f 1 && test_expect_code 1 callprof export -f $f -o whole.$f $p.cprof 2>err) &&
		test_line_count = 1 err &&
		ls -A >listing &&
		! grep "^whole\.$f" listing || return 1
	done &&
	(ulimit -f 1 && test_expect_code 1 callprof export -f svg -o whole.svg clocked.cprof 2>err) &&
	grep "cannot write '"'"'whole.svg'"'"': File too large" err &&
	(ulimit -f 1 && test_expect_code 1 callprof merge -q -o big-merge.cprof whole.cprof 2>err) &&
	grep "File too large" err &&
	ls -A >listing &&
	! grep "^big-merge" listing
'

mkprofile () {
	"$CALLPROF_BUILD/tests/mkprofile" "$@"
}

# A profile whose export takes a while: 600000 sibling calls.
test_expect_success 'setup: a large profile' '
	{
		echo "meta exe=prog" &&
		echo "thread tid=1 name=main" &&
		echo "node calls=1 ticks=1000" &&
		awk "BEGIN { for (i = 1; i <= 600000; i++) printf \"node parent=0 fn=0x%x calls=1 ticks=5\\n\", 4096 + i * 16 }"
	} >large.txt &&
	mkprofile large.cprof <large.txt
'

# kill_while_writing SIGNUM OUT CMD...: start CMD (signals at their
# defaults), send SIGNUM once OUT's temporary exists; CMD must die of it,
# leaving no temporary and no OUT.
kill_while_writing () {
	sig=$1 out=$2 &&
	shift 2 &&
	rm -f "$out" "$out".tmp.* &&
	{ env --default-signal=HUP,INT,QUIT,TERM "$@" & } &&
	pid=$! &&
	n=0 &&
	while ! ls "$out".tmp.* >/dev/null 2>&1; do
		n=$((n + 1)) &&
		test $n -lt 3000 || { echo "no temporary seen"; kill $pid; return 1; }
		kill -0 $pid 2>/dev/null || { echo "ended before its temporary was seen"; return 1; }
		sleep 0.01
	done &&
	kill -$sig $pid &&
	{ wait $pid; status=$?; } &&
	test $status = $((128 + sig)) &&
	ls -A >listing &&
	! grep "^$out" listing
}

for sig in TERM:15 INT:2 HUP:1; do
	test_expect_success "export killed by SIG${sig%:*} while writing: no temporary left" "
		kill_while_writing ${sig#*:} large.json \"\$CALLPROF_BUILD/callprof\" export -f json -o large.json large.cprof
	"
done

test_expect_success 'merge killed by SIGTERM while writing: no temporary left' '
	kill_while_writing 15 merged.cprof "$CALLPROF_BUILD/callprof" merge -q -o merged.cprof large.cprof large.cprof
'

# Secure execution: a setuid-root copy of a program linked with the static
# runtime, run by an unprivileged user who sets CALLPROF_OUT.  It needs
# root (to make the copy), setpriv, a user to be, and a file system that
# honours the setuid bit: without one of them the case is skipped, saying
# which.
secure_dir=
secure_skip=
if test "$(id -u)" != 0; then
	secure_skip="not root: cannot install a setuid-root program"
elif ! command -v setpriv >/dev/null; then
	secure_skip="no setpriv (util-linux)"
elif ! id -u nobody >/dev/null 2>&1; then
	secure_skip="no user nobody to run as"
else
	# The trash directory is private (mktemp -d): the other user gets one
	# of its own, reachable by all, and a directory it may write in.
	secure_dir=$(mktemp -d "${TMPDIR:-/tmp}/callprof-secure.XXXXXX") &&
	chmod 755 "$secure_dir" &&
	mkdir "$secure_dir/w" && chmod 1777 "$secure_dir/w" || secure_skip="cannot make a shared directory"
fi
as_nobody () {
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$@"
}

if test -z "$secure_skip"; then
	cc_kind "$CP_BUILD_KIND" $CC $OPT -g -Wall -o "$secure_dir/t-secure" "$WORKLOADS/s-secure.c" \
		$CP_RUNTIME_A -lpthread &&
	chmod 4755 "$secure_dir/t-secure" &&
	as_nobody "$secure_dir/t-secure" >"$secure_dir/probe" 2>/dev/null &&
	grep -q " euid=0 " "$secure_dir/probe" ||
		secure_skip="the setuid bit is not honoured here (nosuid mount, no_new_privs?)"
fi

if test -n "$secure_skip"; then
	test_skip 'setuid program: CALLPROF_OUT ignored, nothing written' "$secure_skip"
else
	test_expect_success 'setuid program: CALLPROF_OUT ignored, nothing written' '
		cd "$secure_dir/w" &&
		CALLPROF_OUT=$secure_dir/w/evil.cprof as_nobody ../t-secure >out 2>err &&
		grep "^uid=[0-9]* euid=0 sum=145$" out &&
		grep "secure execution" err &&
		ls -A >listing &&
		printf "err\nlisting\nout\n" >expect &&
		test_cmp expect listing &&
		chmod u-s ../t-secure &&
		CALLPROF_OUT=$secure_dir/w/control.cprof as_nobody ../t-secure >out 2>err &&
		test_must_be_empty err &&
		test -s control.cprof
	'
fi
test -z "$secure_dir" || rm -rf "$secure_dir"

test_done
