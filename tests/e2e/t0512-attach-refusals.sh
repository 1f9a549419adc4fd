#!/bin/sh
# matrix: cc-opt
test_description='callprof attach refuses, in one line, every process it cannot profile, and changes nothing in it'
. "$(dirname "$0")/lib.sh"

# Every process a case starts is listed in $STARTED with its start time
# (/proc/PID/stat field 22), killed by the case at its end (stop_bg) and,
# should a case fail before that, when the script ends: a listed pid is
# killed only while it is still the process we started.  The targets also
# end by themselves after a minute.
STARTED=$TRASH_DIRECTORY.pids
: >"$STARTED"
shared=
kill_started () {
	while read -r _p _t
	do
		test "$(awk '{ print $22 }' /proc/"$_p"/stat 2>/dev/null)" = "$_t" &&
			kill -9 "$_p" 2>/dev/null
	done <"$STARTED"
	rm -f "$STARTED"
	test -z "$shared" || rm -rf "$shared"
}
trap 'kill_started' EXIT
trap 'exit 1' INT TERM HUP

# start_bg CMD...: run CMD in the background (output to bg.out), list it;
# its pid in $bg_pid.
start_bg () {
	"$@" >>bg.out 2>&1 &
	bg_pid=$!
	echo "$bg_pid $(awk '{ print $22 }' /proc/$bg_pid/stat)" >>"$STARTED"
}

# start_target CMD...: start_bg CMD, which writes its pid to the file
# "ready" once it is set up (CMD names that file), and wait for it; the pid
# in $pid.
start_target () {
	rm -f ready &&
	start_bg "$@" &&
	wait_for ready &&
	pid=$(cat ready)
}

# stop_bg PID...: kill the listed processes and unlist them.
stop_bg () {
	for _p
	do
		if grep -q "^$_p " "$STARTED"; then
			kill -9 "$_p" 2>/dev/null
			grep -v "^$_p " "$STARTED" >"$STARTED.new"
			mv "$STARTED.new" "$STARTED"
		fi
	done
	return 0
}

# unlist PID...: a listed process that has ended (and was reaped).
unlist () {
	for _p
	do
		grep -v "^$_p " "$STARTED" >"$STARTED.new"
		mv "$STARTED.new" "$STARTED"
	done
}

# snap PID: what attach must not change: stopped or not, its tracer, how
# many mappings it has.
snap () {
	_state=$(sed 's/.*) //' /proc/"$1"/stat | cut -c1) &&
	case "$_state" in t|T) _state=stopped ;; *) _state=running ;; esac &&
	echo "state $_state" &&
	sed -n 's/^TracerPid:[[:space:]]*/tracer /p' /proc/"$1"/status &&
	if test -r /proc/"$1"/maps && wc -l </proc/"$1"/maps >maps.count 2>/dev/null; then
		echo "maps $(cat maps.count)"
	else
		echo "maps unreadable"
	fi
}

# expect_refusal PID 'MESSAGE' [PREFIX...]: PREFIX callprof attach PID
# exits 1 after the one line "callprof: error: attach: MESSAGE" and prints
# nothing else; PID runs on as before.
expect_refusal () {
	_pid=$1
	_msg=$2
	shift 2
	snap "$_pid" >before &&
	grep -q "^state running" before &&
	test_expect_code 1 "$@" callprof attach "$_pid" >out 2>err &&
	echo "callprof: error: attach: $_msg" >expect &&
	test_cmp expect err &&
	test_must_be_empty out &&
	snap "$_pid" >after &&
	test_cmp before after
}

# no_refusal ERRFILE: the checks let the process through (what attaching
# then does is other tests' business).
no_refusal () {
	if grep -E "belongs to user|mixed user ids|runs as group|undumpable|already traced|ptrace_scope|does not let callprof|32-bit|another machine|already recorded|records itself|statically linked|built with neither|is a thread of|no process|has ended|kernel thread|cannot read" "$1"; then
		echo "no_refusal: the checks refused the process"
		return 1
	fi
}

# Callprof and a target as another user: as root, nobody ($AS_USER, a
# command prefix); else ourselves (no prefix).
AS_USER=
user_skip=
user=$(id -un)
if test "$(id -u)" = 0; then
	if ! command -v setpriv >/dev/null; then
		user_skip="no setpriv (util-linux) to run as nobody"
	elif ! id -u nobody >/dev/null 2>&1; then
		user_skip="no user nobody to run as"
	else
		AS_USER="setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups --inh-caps=-all"
		user=nobody
	fi
fi

test_expect_success 'setup: targets, a tracer, and a directory every user can use' '
	build_workload s-attach-target.c -ldl &&
	build_workload s-attach-tracer.c &&
	build_workload_lib s-lib.c libattachlib.so &&
	$CC $OPT -g -Wall -o t-plain "$WORKLOADS/s-attach-target.c" -lpthread -ldl &&
	! nm t-plain | grep -q __cyg_profile_func_enter &&
	shared=$(mktemp -d "${TMPDIR:-/tmp}/callprof-attach.XXXXXX") &&
	echo "$shared" >shared &&
	chmod 1777 "$shared" &&
	cp t-attach-target "$shared/" &&
	chmod 755 "$shared/t-attach-target"
'
shared=$(cat shared 2>/dev/null)

if test -z "$user_skip" && ! $AS_USER "$CALLPROF_BUILD/callprof" --version >/dev/null 2>&1; then
	user_skip="$user cannot run $CALLPROF_BUILD/callprof"
fi

test_expect_success 'usage: no pid, not a number, two pids (exit 129)' '
	test_expect_code 129 callprof attach 2>err &&
	grep "^callprof: error: attach needs a process id" err &&
	test_expect_code 129 callprof attach abc 2>err &&
	grep "^callprof: error: attach wants a process id, not .abc." err &&
	test_expect_code 129 callprof attach 1 2 2>err &&
	grep "^callprof: error: attach takes one process id" err
'

test_expect_success 'no such process' '
	test_expect_code 1 callprof attach 2147483647 >out 2>err &&
	echo "callprof: error: attach: no process 2147483647 (ps -e lists the running processes)" >expect &&
	test_cmp expect err &&
	test_must_be_empty out
'

test_expect_success 'a thread id: attach to its process' '
	rm -f ready &&
	start_bg ./t-attach-target ready thread &&
	wait_for ready &&
	read pid tid <ready &&
	test "$pid" = $bg_pid &&
	test -d /proc/$tid &&
	expect_refusal $tid "$tid is a thread of process $pid (t-attach-target): attach to $pid" &&
	stop_bg $pid
'

test_expect_success 'an ended process (a zombie)' '
	rm -f zpid &&
	# the child ends after the exec: sleep, its parent then, never reaps it
	# (one that ended before the exec could be reaped by the shell)
	start_bg sh -c "sleep 0.3 & echo \$! >zpid; exec sleep 60" &&
	wait_for zpid &&
	z=$(cat zpid) &&
	i=0 &&
	while ! grep -q "^State:.*Z" /proc/$z/status && test $i -lt 100
	do
		sleep 0.1 && i=$((i + 1))
	done &&
	test_expect_code 1 callprof attach $z >out 2>err &&
	echo "callprof: error: attach: process $z (sleep) has ended (a zombie its parent has not reaped): nothing to attach to" >expect &&
	test_cmp expect err &&
	stop_bg $bg_pid
'

if test "$(cat /proc/2/comm 2>/dev/null)" = kthreadd; then
	test_expect_success 'a kernel thread' '
		test_expect_code 1 callprof attach 2 >out 2>err &&
		echo "callprof: error: attach: process 2 (kthreadd) is a kernel thread: it runs no program to attach to" >expect &&
		test_cmp expect err
	'
else
	test_skip 'a kernel thread' 'no kthreadd at pid 2 (a pid namespace)'
fi

if test "$(id -u)" = 0 && test -n "$user_skip"; then
	test_skip "another user's process, as root" "$user_skip"
elif test "$(id -u)" = 0; then
	test_expect_success "another user's process: refused even as root" '
		rm -f "$shared/ready" &&
		start_bg $AS_USER "$shared/t-attach-target" "$shared/ready" &&
		wait_for "$shared/ready" &&
		pid=$(cat "$shared/ready") &&
		expect_refusal $pid "process $pid (t-attach-target) belongs to user nobody, not to you (root): run callprof as that user, e.g. sudo -u nobody callprof attach $pid" &&
		stop_bg $pid
	'
	test_expect_success "a process of ours in another group" '
		start_target setpriv --regid="$(id -g nobody)" --keep-groups ./t-attach-target ready &&
		group=$(getent group "$(id -g nobody)" | cut -d: -f1) &&
		expect_refusal $pid "process $pid (t-attach-target) runs as group $group, not your group root (a setgid program, or one that changed its group): callprof attaches only to processes whose user and group ids are all yours" &&
		stop_bg $pid
	'
elif test "$(sed -n "s/^Uid:[[:space:]]*\([0-9]*\).*/\1/p" /proc/1/status)" != "$(id -u)"; then
	test_expect_success "another user's process (pid 1)" '
		owner=$(sed -n "s/^Uid:[[:space:]]*\([0-9]*\).*/\1/p" /proc/1/status) &&
		name=$(getent passwd $owner | cut -d: -f1) &&
		comm=$(cat /proc/1/comm) &&
		test_expect_code 1 callprof attach 1 >out 2>err &&
		echo "callprof: error: attach: process 1 ($comm) belongs to user ${name:-$owner}, not to you ($user): run callprof as that user, e.g. sudo -u ${name:-$owner} callprof attach 1" >expect &&
		test_cmp expect err
	'
else
	test_skip "another user's process" 'not root, and pid 1 is ours'
fi

if test -n "$user_skip"; then
	test_skip 'an undumpable process' "$user_skip"
else
	test_expect_success 'an undumpable process (prctl PR_SET_DUMPABLE 0)' '
		rm -f "$shared/ready" &&
		start_bg $AS_USER "$shared/t-attach-target" "$shared/ready" undumpable &&
		wait_for "$shared/ready" &&
		pid=$(cat "$shared/ready") &&
		test "$(stat -c %u /proc/$pid/stat)" = 0 &&
		expect_refusal $pid "process $pid (t-attach-target) made itself undumpable (prctl PR_SET_DUMPABLE 0, or a change of its user or group ids): it does not want to be traced; run it under callprof record instead" $AS_USER &&
		stop_bg $pid
	'
fi

test_expect_success 'a process another tracer traces' '
	rm -f ready traced &&
	start_bg ./t-attach-target ready &&
	wait_for ready &&
	pid=$(cat ready) &&
	start_bg ./t-attach-tracer $pid traced &&
	tracer=$bg_pid &&
	i=0 &&
	while ! test -f traced && test $i -lt 100
	do
		sleep 0.1 && i=$((i + 1))
	done &&
	grep "^TracerPid:[[:space:]]*$tracer\$" /proc/$pid/status &&
	expect_refusal $pid "process $pid (t-attach-target) is already traced by process $tracer (t-attach-tracer): a process has one tracer at a time; detach or end that one (a debugger, strace) first" &&
	stop_bg $tracer $pid
'

# Yama: this machine may have none; CALLPROF_TEST_YAMA (a test hook) names
# a file read instead of /proc/sys/kernel/yama/ptrace_scope.
test_expect_success 'Yama ptrace_scope 3: nobody may attach, root neither' '
	echo 3 >"$shared/yama" &&
	start_target ./t-attach-target ready &&
	expect_refusal $pid "process $pid (t-attach-target): ptrace is disabled on this machine (kernel.yama.ptrace_scope = 3, until the next boot), so callprof attach cannot work here; run the program under callprof record" \
		env CALLPROF_TEST_YAMA="$shared/yama" &&
	stop_bg $pid
'

if test -n "$user_skip"; then
	test_skip 'Yama ptrace_scope 1 and 2, as a user' "$user_skip"
else
	test_expect_success 'Yama ptrace_scope 2 and 1, as a user without CAP_SYS_PTRACE' '
		rm -f "$shared/ready" &&
		start_bg $AS_USER "$shared/t-attach-target" "$shared/ready" &&
		wait_for "$shared/ready" &&
		pid=$(cat "$shared/ready") &&
		echo 2 >"$shared/yama" &&
		expect_refusal $pid "process $pid (t-attach-target): only root may use ptrace on this machine (kernel.yama.ptrace_scope = 2): lower it as root with sysctl kernel.yama.ptrace_scope=0, or run the program under callprof record" \
			$AS_USER env CALLPROF_TEST_YAMA="$shared/yama" &&
		echo 1 >"$shared/yama" &&
		expect_refusal $pid "process $pid (t-attach-target) is not a descendant of callprof, and kernel.yama.ptrace_scope = 1 lets a process trace only its descendants: lower it as root with sysctl kernel.yama.ptrace_scope=0, or run the program under callprof record" \
			$AS_USER env CALLPROF_TEST_YAMA="$shared/yama" &&
		echo 0 >"$shared/yama" &&
		test_might_fail $AS_USER env CALLPROF_TEST_YAMA="$shared/yama" \
			callprof attach --duration 0.2 -o "$shared/y0.cprof" $pid 2>err &&
		cat err &&
		no_refusal err &&
		stop_bg $pid
	'
fi

if test "$(id -u)" = 0; then
	test_expect_success 'Yama ptrace_scope 1 and 2 let root (CAP_SYS_PTRACE) through' '
		start_target ./t-attach-target ready &&
		echo 2 >"$shared/yama" &&
		test_might_fail env CALLPROF_TEST_YAMA="$shared/yama" \
			callprof attach --duration 0.2 -o y2.cprof $pid 2>err &&
		cat err &&
		no_refusal err &&
		echo 1 >"$shared/yama" &&
		test_might_fail env CALLPROF_TEST_YAMA="$shared/yama" \
			callprof attach --duration 0.2 -o y1.cprof $pid 2>err &&
		cat err &&
		no_refusal err &&
		stop_bg $pid
	'
fi

# A tiny 32-bit program that pauses in a loop (i386 pause is system call 29).
cat >w32.s <<\EOF
	.globl _start
_start:
1:	movl $29, %eax
	int $0x80
	jmp 1b
EOF
w32_skip=
if ! as --32 -o w32.o w32.s 2>w32.err || ! ld -m elf_i386 -o t-w32 w32.o 2>>w32.err; then
	w32_skip="as --32 and ld -m elf_i386 cannot make a 32-bit program here: $(head -1 w32.err)"
else
	./t-w32 &
	w32_probe=$!
	sleep 0.2
	kill -0 $w32_probe 2>/dev/null ||
		w32_skip="the kernel does not run 32-bit programs (no IA32 emulation)"
	kill -9 $w32_probe 2>/dev/null
	wait $w32_probe 2>/dev/null
fi
if test -n "$w32_skip"; then
	test_skip 'a 32-bit process' "$w32_skip"
else
	test_expect_success 'a 32-bit process' '
		start_bg ./t-w32 &&
		pid=$bg_pid &&
		i=0 &&
		while test "$(cat /proc/$pid/comm)" != t-w32 && test $i -lt 100
		do
			sleep 0.1 && i=$((i + 1))
		done &&
		expect_refusal $pid "process $pid (t-w32) is a 32-bit program: callprof attaches to 64-bit (x86-64) programs only; rebuild it as a 64-bit program" &&
		stop_bg $pid
	'
fi

if $CC $OPT -g -static -finstrument-functions -o t-static "$WORKLOADS/s-attach-target.c" \
	-lpthread >static.err 2>&1; then
	test_expect_success 'a statically linked process' '
		start_target ./t-static ready &&
		expect_refusal $pid "process $pid (t-static) is statically linked: it has no dynamic loader to load the callprof runtime with; run it under callprof record (with libcallprof.a linked in)" &&
		stop_bg $pid
	'
	test_expect_success 'static with libcallprof.a linked in: it records itself' '
		$CC $OPT -g -static -finstrument-functions -o t-static-rt \
			"$WORKLOADS/s-attach-target.c" "$CALLPROF_BUILD/libcallprof.a" -lpthread &&
		start_target env CALLPROF_OUT="$PWD/static-rt.cprof" ./t-static-rt ready &&
		expect_refusal $pid "process $pid (t-static-rt) records itself: t-static-rt has the callprof runtime linked in (libcallprof.a), and writes its profile when it exits" &&
		stop_bg $pid
	'
else
	test_skip 'a statically linked process' "$CC -static fails here (no static libc?): $(head -1 static.err)"
fi

test_expect_success 'a program built with neither hooks nor sleds' '
	start_target ./t-plain ready &&
	expect_refusal $pid "process $pid (t-plain) was built with neither -finstrument-functions nor -fpatchable-function-entry: neither t-plain nor a library it loaded calls __cyg_profile_func_enter or has patchable entries; rebuild it with callprof cc (sleds, or --hooks), or profile it as it is with callprof record --sample" &&
	stop_bg $pid
'

test_expect_success 'not instrumented, but an instrumented library it loaded is: accepted' '
	start_target ./t-plain ready dlopen "$PWD/libattachlib.so" &&
	test_might_fail callprof attach --duration 0.2 -o lib.cprof $pid 2>err &&
	cat err &&
	no_refusal err &&
	stop_bg $pid
'

if test "$(id -u)" = 0; then
	test_expect_success 'the instrumented library was replaced on disk: read as mapped (root)' '
		cp libattachlib.so libgone.so &&
		start_target ./t-plain ready dlopen "$PWD/libgone.so" &&
		rm libgone.so &&
		grep -q "libgone.so (deleted)" /proc/$pid/maps &&
		test_might_fail callprof attach --duration 0.2 -o gone.cprof $pid 2>err &&
		cat err &&
		no_refusal err &&
		stop_bg $pid
	'
fi
if test -z "$user_skip" && test "$(id -u)" = 0; then
	test_expect_success 'the instrumented library was replaced on disk: said, when unreadable' '
		cp t-plain libattachlib.so "$shared/" &&
		rm -f "$shared/ready" &&
		start_bg $AS_USER "$shared/t-plain" "$shared/ready" dlopen "$shared/libattachlib.so" &&
		wait_for "$shared/ready" &&
		pid=$(cat "$shared/ready") &&
		rm "$shared/libattachlib.so" &&
		expect_refusal $pid "process $pid (t-plain) was built with neither -finstrument-functions nor -fpatchable-function-entry: neither t-plain nor a library it loaded calls __cyg_profile_func_enter or has patchable entries ($shared/libattachlib.so was replaced on disk since it was loaded, and not checked); rebuild it with callprof cc (sleds, or --hooks), or profile it as it is with callprof record --sample" $AS_USER &&
		stop_bg $pid
	'
fi

test_expect_success 'a process callprof record records' '
	rm -f ready &&
	start_bg "$CALLPROF_BUILD/callprof" record --mode=counting -o rec.cprof -- ./t-attach-target ready &&
	rec=$bg_pid &&
	wait_for ready &&
	pid=$(cat ready) &&
	echo "$pid $(awk "{ print \$22 }" /proc/$pid/stat)" >>"$STARTED" &&
	expect_refusal $pid "process $pid (t-attach-target) is already recorded by callprof (libcallprof-counting.so is loaded): use callprof dump $pid for a snapshot" &&
	stop_bg $pid &&
	{ wait $rec || :; } &&
	unlist $rec
'

test_expect_success 'a program with libcallprof.a linked in records itself' '
	$CC $OPT -g -finstrument-functions -o t-linked "$WORKLOADS/s-attach-target.c" \
		"$CALLPROF_BUILD/libcallprof.a" -lpthread -ldl &&
	start_target env CALLPROF_OUT="$PWD/linked.cprof" ./t-linked ready &&
	expect_refusal $pid "process $pid (t-linked) records itself: t-linked has the callprof runtime linked in (libcallprof.a), and writes its profile when it exits" &&
	stop_bg $pid
'

test_expect_success 'the runtime copy of an attach that has ended is no refusal' '
	cp "$CALLPROF_BUILD/libcallprof.so" callprof-attach-12345.so &&
	start_target ./t-attach-target ready dlopen "$PWD/callprof-attach-12345.so" &&
	grep -q callprof-attach-12345.so /proc/$pid/maps &&
	test_might_fail callprof attach --duration 0.2 -o copy.cprof $pid 2>err &&
	cat err &&
	no_refusal err &&
	stop_bg $pid
'

test_expect_success 'an instrumented dynamic program passes the checks, twice in a row' '
	start_target ./t-attach-target ready &&
	test_might_fail callprof attach --duration 0.2 -o ok.cprof $pid 2>err &&
	cat err &&
	no_refusal err &&
	test_might_fail callprof attach --duration 0.2 -o ok2.cprof $pid 2>err &&
	cat err &&
	no_refusal err &&
	stop_bg $pid
'

test_expect_success 'every process started is gone' '
	test_must_be_empty "$STARTED"
'

test_done
