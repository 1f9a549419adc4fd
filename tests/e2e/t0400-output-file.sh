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

test_expect_success 'a write that dies half way leaves the previous profile whole' '
	callprof record -o whole.cprof -- ./t-nested >/dev/null &&
	cp whole.cprof whole.before &&
	# At most 2 blocks (1-2 KB) of file, less than the profile: the write gets
	# SIGXFSZ (or EFBIG) part way.
	{ (ulimit -f 2 && command callprof record -o whole.cprof -- ./t-nested >/dev/null 2>err) || :; } &&
	test_cmp whole.before whole.cprof &&
	test_path_is_missing whole.cprof.old
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
	$CC $OPT -g -finstrument-functions -Wall -o "$secure_dir/t-secure" "$WORKLOADS/s-secure.c" \
		"$CALLPROF_BUILD/libcallprof.a" -lpthread &&
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
