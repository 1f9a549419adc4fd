#!/bin/sh
# matrix: cc-opt
test_description='sleds: a sledded library loaded by dlopen is patched before its first call, again after dlclose and a new dlopen, and never twice'
. "$(dirname "$0")/lib.sh"

test_expect_success 'dlopen by path: the library calls counted exactly, twice loaded' '
	build_kind_lib sleds s-sleds-plugin.c libsledplug.so &&
	build_kind -o t-sleds-dl sleds s-sleds-dl.c -ldl &&
	./t-sleds-dl ./libsledplug.so >plain.out &&
	CALLPROF_SLEDS_VERBOSE=1 callprof record -o p.cprof -- ./t-sleds-dl ./libsledplug.so >rec.out 2>err &&
	test_cmp plain.out rec.out &&
	test "$(grep -c "libsledplug.so: [1-9][0-9]* patched, 0 skipped" err)" = 2 &&
	callprof report --flat --fields=calls p.cprof >flat &&
	grep " 2  *plugin_run$" flat &&
	grep " 201  *plugin_leaf$" flat
'

test_expect_success 'dlopen by bare name from a program without RUNPATH: patched too' '
	LD_LIBRARY_PATH=. callprof record -o b.cprof -- ./t-sleds-dl libsledplug.so >rec.out &&
	test_cmp plain.out rec.out &&
	callprof report --flat --fields=calls b.cprof >flat &&
	grep " 201  *plugin_leaf$" flat
'

# The stub area is mapped with the first module that has sleds: a
# program without any (a plain build) must still get its dlopened
# library patched.
test_expect_success 'a program without sleds dlopens a sledded library: patched all the same' '
	build_kind -o t-plain-dl plain s-sleds-dl.c -ldl &&
	./t-plain-dl ./libsledplug.so >plain2.out &&
	callprof record -o n.cprof -- ./t-plain-dl ./libsledplug.so >rec2.out &&
	test_cmp plain2.out rec2.out &&
	callprof report --flat --fields=calls n.cprof >flat &&
	grep " 201  *plugin_leaf$" flat
'

test_done
