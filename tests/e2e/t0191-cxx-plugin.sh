#!/bin/sh
# matrix: cc-opt
test_description='a C program that dlopens a C++ plugin which throws and catches'
. "$(dirname "$0")/lib.sh"

# The plugin's libstdc++ and libgcc_s are loaded with it, in its own scope.
# The runtime interposes __cxa_begin_catch and _Unwind_RaiseException, and
# the plugin's calls bind to them (the preloaded runtime is in the global
# scope); the real ones were looked up with RTLD_NEXT only, which does not
# look in the plugin's scope: the throw failed, std::terminate's catch
# called a null pointer and the program died of SIGSEGV under record,
# whatever the plugin's build (2026-12-01).  Now they are looked up in the
# modules loaded (runtime/interpose.c, cp_next_loaded).  The plugin built
# plain and of the column's kind; the counts exact either way.

test_expect_success 'setup' '
	build_workload s-cxx-host.c -ldl &&
	build_kind_lib plain s-cxx-plugin.cc libplain.so &&
	build_workload_lib s-cxx-plugin.cc libplug.so &&
	./t-cxx-host ./libplain.so 100 >alone.out &&
	echo "sum 4950" >expect &&
	test_cmp expect alone.out
'

test_expect_success 'an uninstrumented C++ plugin: its throws and catches work, status 0' '
	callprof record -o plain.cprof -- ./t-cxx-host ./libplain.so 100 >plain.out 2>plain.err &&
	test_cmp expect plain.out &&
	callprof export -f json plain.cprof >plain.json &&
	python3 "$TEST_DIRECTORY/check-select.py" paths plain.json >plain.paths &&
	grep -x "main;run_plugin 1" plain.paths
'

test_expect_success 'an instrumented C++ plugin: exact counts, the code after a catch under its catcher' '
	callprof record -o plug.cprof -- ./t-cxx-host ./libplug.so 100 >plug.out 2>plug.err &&
	test_cmp expect plug.out &&
	callprof export -f json plug.cprof >plug.json &&
	python3 "$TEST_DIRECTORY/check-select.py" paths plug.json >plug.paths &&
	grep -x "main;run_plugin;plug_catch 1" plug.paths &&
	grep -x "main;run_plugin;plug_catch;plug_middle 100" plug.paths &&
	grep -x "main;run_plugin;plug_catch;plug_middle;plug_thrower 100" plug.paths &&
	grep -x "main;run_plugin;plug_catch;plug_after 50" plug.paths &&
	! grep "plug_thrower;plug_after\|plug_middle;plug_after" plug.paths
'

test_done
