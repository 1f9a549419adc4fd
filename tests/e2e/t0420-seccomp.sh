#!/bin/sh
# matrix: cc-opt
test_description='a seccomp filter installed mid-run: the runtime never makes a call it forbids'
. "$(dirname "$0")/lib.sh"

# t-seccomp installs a filter after its first call, then starts threads:
# each must run as without callprof (same output, same exit status) in
# every mode, the runtime doing without what the filter forbids
# (runtime/seccomp.c) and saying so.

# The allowlist admits the calls of the program itself, not ASan's.
workloads_without_asan 'the allowlist filter admits only the program'"'"'s own calls'

test_expect_success 'setup: the workload runs its filters without callprof' '
	build_workload s-seccomp.c &&
	cat >expect.calls <<-\EOT &&
	main 1
	main;install 1
	main;work 1
	thread_main 4
	thread_main;work 4
	EOT
	test_expect_code 3 ./t-seccomp kill-process >plain &&
	grep "^sum [0-9]*$" plain
'

# run FILTER [RECORD OPTIONS]: the same output and status as without
# callprof, every call in the profile.
run () {
	_f=$1
	shift
	test_expect_code 3 ./t-seccomp $_f >$_f.plain &&
	test_expect_code 3 callprof record "$@" -o $_f.cprof -- ./t-seccomp $_f >$_f.out 2>$_f.err &&
	cat $_f.err &&
	test_cmp $_f.plain $_f.out &&
	callprof export -f folded -m calls $_f.cprof >$_f.calls &&
	test_cmp expect.calls $_f.calls
}

for f in kill-process kill-thread errno tsync allowlist
do
	test_expect_success "$f: as without callprof, every call counted" "
		run $f
	"
	test_expect_success "$f with --time=clock and --time=none" "
		run $f --time=clock &&
		run $f --time=none
	"
done

test_expect_success 'the filter forbids perf_event_open: said once, and the threads counted' '
	run kill-process &&
	grep "^callprof: the program.s seccomp filter forbids calls callprof makes: perf_event_open: threads started from here have no CPU time and no wait/inactive split$" kill-process.err &&
	grep "^callprof: warning: no CPU time for 4 threads: the program.s seccomp filter forbids perf_event_open$" kill-process.err &&
	callprof report kill-process.cprof >rep &&
	grep "^# the program.s seccomp filter forbade system calls callprof makes" rep
'

test_expect_success 'the filter forbids writing the profile: the watcher writes it' '
	callprof report allowlist.cprof >rep &&
	grep "^# the program.s seccomp filter forbade writing the profile: callprof.s watcher wrote it when the program had ended," rep &&
	! grep "killed" rep &&
	! grep "^callprof: the program" allowlist.err
'

test_expect_success 'exec under the filter: the new image records without what it forbids' '
	test_expect_code 3 ./t-seccomp kill-process exec >plain &&
	test_expect_code 3 callprof record -o ex.cprof -- ./t-seccomp kill-process exec >out 2>err &&
	cat err &&
	test_cmp plain out &&
	callprof export -f folded -m calls ex.cprof.exec1 >old &&
	grep "^main;work 1$" old &&
	callprof export -f folded -m calls ex.cprof >new &&
	printf "main 1\nmain;work 1\n" >expect &&
	test_cmp expect new &&
	grep "^callprof: warning: no CPU time for 1 thread: the program.s seccomp filter forbids perf_event_open$" err
'

test_expect_success 'exec under a filter that forbids starting: nothing recorded, record says why' '
	test_expect_code 3 ./t-seccomp no-getcwd exec >plain &&
	test_expect_code 3 callprof record -o nx.cprof -- ./t-seccomp no-getcwd exec >out 2>err &&
	cat err &&
	test_cmp plain out &&
	grep "^callprof: the program.s seccomp filter forbids what callprof needs to start: programs it runs from here are not profiled$" err &&
	grep "^callprof: warning: no profile written to .nx.cprof.: the program exec.d under a seccomp filter that forbids what callprof needs to start" err &&
	test_path_is_file nx.cprof.exec1
'

# (The death is SIGSEGV, or SIGSYS where a sanitizer's handler makes a call.)
# A library with sleds loaded after a filter that forbids what patching it
# needs (here the memfd of the return stubs: the program itself has no
# sleds in a hooks column, so the stubs are mapped at that dlopen): it
# runs unpatched, said once; the memfd_create killed the process.
test_expect_success 'a sleds library loaded under a filter that forbids patching it: runs unrecorded, said' '
	build_kind_lib sleds s-lib.c libslib.so &&
	test_expect_code 3 ./t-seccomp no-memfd dlopen ./libslib.so >lib.plain &&
	echo "compute 29524" >expect &&
	test_cmp expect lib.plain &&
	test_expect_code 3 callprof record -o lib.cprof -- ./t-seccomp no-memfd dlopen ./libslib.so >lib.out 2>lib.err &&
	cat lib.err &&
	test_cmp expect lib.out &&
	grep "^callprof: the program.s seccomp filter forbids calls callprof makes: writing code: the functions of libraries loaded from here are not recorded (their sleds stay NOPs)$" lib.err &&
	callprof export -f folded -m calls lib.cprof >lib.calls &&
	grep "^main;work 1$" lib.calls &&
	! grep "slib" lib.calls
'

test_expect_success 'a fatal signal under a filter that forbids raising it again: the same death' '
	sh -c "./t-seccomp allowlist segv 2>/dev/null; echo \$? >plain.status" &&
	grep "^1[35]9$" plain.status &&
	sh -c "command callprof record -o segv.cprof -- ./t-seccomp allowlist segv 2>/dev/null; echo \$? >rec.status" &&
	test_cmp plain.status rec.status &&
	callprof report segv.cprof >rep &&
	grep "^# the process was killed" rep
'

test_done
