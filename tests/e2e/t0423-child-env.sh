#!/bin/sh
# matrix: cc-opt
test_description='children started with an environment of their own are profiled'
. "$(dirname "$0")/lib.sh"

# A program that gives its child an environment of its own (posix_spawn's
# envp, execve, execle, ...) would drop LD_PRELOAD and CALLPROF_*: the
# runtime puts them back into a copy of that environment, so the child is
# profiled and sees the rest of what it was given.

# The children get an environment without ASAN_OPTIONS, and a sanitized
# child with the runtime preloaded ahead of libasan refuses to start.
workloads_without_asan 'the children run with an environment of their own, without ASAN_OPTIONS'

test_expect_success 'setup' '
	build_workload s-spawn.c
'

for how in posix_spawn posix_spawnp execve execvpe execle fexecve execveat
do
	test_expect_success "$how with an envp of its own: the child is profiled" '
		test_expect_code 3 ./t-spawn $how >plain 2>plain.err &&
		test_expect_code 3 callprof record -o $how.cprof -- ./t-spawn $how >rec 2>err &&
		cat err &&
		test_cmp plain rec &&
		printf "child: MARK=1\nparent: envp intact\n" >expect &&
		test_cmp expect rec &&
		ls $how.cprof.* >children &&
		test_line_count = 1 children &&
		callprof export -f folded -m calls "$(cat children)" >calls &&
		grep "^main;child_work 1$" calls &&
		grep "^callprof: other processes of the run wrote 1 profile: $how.cprof.[0-9]* (pid [0-9]* ./t-spawn)$" err
	'
done

test_expect_success 'a child given an LD_PRELOAD of its own: not profiled, one warning names it' '
	test_expect_code 3 callprof record -o own.cprof -- ./t-spawn posix_spawn "" >rec 2>err &&
	cat err &&
	printf "child: MARK=1\nparent: envp intact\n" >expect &&
	test_cmp expect rec &&
	test_path_is_missing own.cprof.* &&
	grep "^callprof: not profiling ./t-spawn: the program runs it with an LD_PRELOAD of its own$" err &&
	test $(grep -c "not profiling" err) = 1
'

test_done
