#!/bin/sh
# matrix: cc-opt
test_description='dlopen/dlclose: unloaded plugins keep their names, also when another takes their place'
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	for p in a b
	do
		cc_kind "$CP_BUILD_KIND" $CC $OPT -g -fPIC -shared -DWHICH=$p \
			-o $PWD/libplug-$p.so "$WORKLOADS/s-plug.c" || return 1
	done &&
	build_workload s-dlopen.c -ldl
'

test_expect_success 'both plugins are named, each with its own counts' '
	callprof record -o dl.cprof -- ./t-dlopen $PWD/libplug-a.so $PWD/libplug-b.so >out &&
	cat >expect <<-\EOT &&
	main 1
	main;use_plugin 2
	main;use_plugin;plug_a 1
	main;use_plugin;plug_a;a_inner 3
	main;use_plugin;plug_b 1
	main;use_plugin;plug_b;b_inner 5
	EOT
	callprof export -f folded -m calls dl.cprof >actual &&
	test_cmp expect actual
'

# The case that matters: the second plugin at the first one's addresses.
test_expect_success 'the second plugin was loaded where the first had been' '
	grep -q "^same address$" out
'

test_expect_success 'timing is consistent across the unload' '
	callprof export -f folded -m self dl.cprof >self &&
	callprof export -f folded -m total dl.cprof >total &&
	check_time_relations self total
'

test_done
