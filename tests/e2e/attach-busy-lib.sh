# attach-busy-lib.sh - start a target that waits to be attached to, and
# see it end unharmed: for t0514 and t0516 (workloads/s-attach-busy.c and
# the others that take READY STOP).  Sourced after lib.sh.

# start_target NAME EXE [ARG...]: run EXE NAME.ready NAME.stop ARG... in
# the background, its output in NAME.out and NAME.err, its exit status in
# NAME.status when it ends; wait until it has written its pid to
# NAME.ready and put that in $pid.  $BUSY_PREFIX, if set, is a command
# that runs it.
start_target () {
	_st=$1
	_exe=$2
	shift 2
	rm -f "$_st.ready" "$_st.stop" "$_st.status" &&
	{
		(
			${BUSY_PREFIX:-} "$_exe" "$_st.ready" "$_st.stop" "$@" >"$_st.out" 2>"$_st.err"
			echo $? >"$_st.status.tmp" && mv "$_st.status.tmp" "$_st.status"
		) </dev/null >/dev/null 2>&1 &
	} &&
	wait_for "$_st.ready" &&
	pid=$(cat "$_st.ready")
}

# start_busy NAME [OPTION...]: t-attach-busy, as start_target runs it.
start_busy () {
	_sb=$1
	shift
	start_target "$_sb" ./t-attach-busy "$@"
}

# target_done NAME: tell the target to stop; it must end by itself
# (within 20 s) with status 0 and nothing on stderr.
target_done () {
	touch "$1.stop" &&
	_i=0 &&
	while ! test -s "$1.status"
	do
		test $_i -lt 1000 || { echo "$1 still running 20 s after stop"; return 1; }
		sleep 0.02
		_i=$((_i + 1))
	done &&
	cat "$1.err" &&
	test "$(cat "$1.status")" = 0 &&
	test_must_be_empty "$1.err"
}

# busy_done NAME: t-attach-busy ended as target_done says, with its one
# line of output: nothing went wrong.
busy_done () {
	target_done "$1" &&
	grep -q "^done threads=[0-9]* anomalies=0\$" "$1.out" &&
	test_line_count = 1 "$1.out"
}
