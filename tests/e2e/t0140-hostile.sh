#!/bin/sh
test_description='hostile environments: daemons, symlinks, the previous profile'
. "$(dirname "$0")/lib.sh"

cat >expect-daemon <<\EOT
main 1
main;detach 1
main;work 2
EOT

test_expect_success 'a daemon that closes every fd and chdirs to / still leaves its profile' '
	build_workload s-daemon.c &&
	callprof record -o daemon.cprof -- ./t-daemon >out 2>err &&
	echo detaching >expect && test_cmp expect out &&
	callprof export -f folded -m calls daemon.cprof >actual &&
	test_cmp expect-daemon actual
'

test_expect_success 'static runtime, relative CALLPROF_OUT: fixed at start-up, not after chdir' '
	cc_kind "$CP_BUILD_KIND" $CC $OPT -g -o t-daemon-static "$WORKLOADS/s-daemon.c" \
		$CP_RUNTIME_A -lpthread &&
	CALLPROF_OUT=static.cprof ./t-daemon-static >out &&
	test -f static.cprof &&
	test_path_is_missing /static.cprof &&
	callprof export -f folded -m calls static.cprof >actual &&
	test_cmp expect-daemon actual
'

test_expect_success 'the output is never written through a symlink' '
	echo "precious" >victim &&
	ln -s victim link.cprof &&
	callprof record -o link.cprof -- ./t-daemon >out &&
	echo precious >expect && test_cmp expect victim &&
	test -f link.cprof && ! test -h link.cprof &&
	callprof export -f folded -m calls link.cprof >actual &&
	test_cmp expect-daemon actual
'

test_expect_success 'the previous profile is kept as FILE.old' '
	callprof record -o again.cprof -- ./t-daemon >out 2>err1 &&
	callprof report again.cprof | sed -n "s/^# pid \([0-9]*\),.*/\1/p" >pid1 &&
	callprof record -o again.cprof -- ./t-daemon >out 2>err2 &&
	callprof report again.cprof.old | sed -n "s/^# pid \([0-9]*\),.*/\1/p" >pid-old &&
	callprof report again.cprof | sed -n "s/^# pid \([0-9]*\),.*/\1/p" >pid2 &&
	test -s pid1 && test_cmp pid1 pid-old &&
	! test_cmp pid1 pid2 &&
	ls again.cprof* >files &&
	printf "again.cprof\nagain.cprof.old\n" >expect && test_cmp expect files
'

test_done
