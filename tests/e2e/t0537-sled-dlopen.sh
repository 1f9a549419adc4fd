#!/bin/sh
# matrix: cc-opt
test_description='sleds: dlopen of sledded libraries, dlclose, another library at the same address, dlopen again'
. "$(dirname "$0")/lib.sh"

# The runtime patches a library's sleds at dlopen; after dlclose another
# library may be mapped at the same addresses with other functions, whose
# calls must carry their own names.  held(): a dlclose from a call back
# into the program while a frame of the library is live, the library kept
# mapped by a second reference.  (A dlclose that unmaps a library with a
# live frame crashes the program without callprof too: its return lands
# in unmapped memory.  Not tested.)

test_expect_success 'setup: plugins and program in each kind' '
	for kind in $SLED_KINDS
	do
		build_kind_lib $kind s-sled-plug.c $PWD/libplug1.$kind.so -DWHICH=1 &&
		build_kind_lib $kind s-sled-plug.c $PWD/libplug2.$kind.so -DWHICH=2 &&
		build_kind $kind s-sled-dlopen.c -ldl || return 1
	done
'

for kind in $SLED_KINDS
do
	test_expect_success "$kind: output, status and counts as alone" '
		run_both_ways t-sled-dlopen.$kind $PWD/libplug1.$kind.so $PWD/libplug2.$kind.so 10 &&
		grep "^count	plug_one_inner	66$" t-sled-dlopen.$kind.rec.out &&
		sled_check_counts t-sled-dlopen.$kind.rec.out t-sled-dlopen.$kind.cprof
	'

	test_expect_success "$kind: each library under its own names, also at the same address" '
		callprof export -f folded -m calls t-sled-dlopen.$kind.cprof >folded.all &&
		without_asan_ctors <folded.all >folded &&
		grep "plug\|held" folded >actual &&
		cat >expect <<-\EOT &&
		main;held 1
		main;held;plug_run 2
		main;held;plug_run;host_callback 1
		main;held;plug_run;host_callback;host_leaf 1
		main;held;plug_run;host_callback_close 1
		main;held;plug_run;host_callback_close;host_leaf 1
		main;held;plug_run;plug_one_inner 6
		main;use;plug_run 30
		main;use;plug_run;host_callback 30
		main;use;plug_run;host_callback;host_leaf 30
		main;use;plug_run;plug_one_inner 60
		main;use;plug_run;plug_two_inner 50
		EOT
		test_cmp expect actual
	'
done

# What makes the names case matter (as in t0190).
test_expect_success 'the second plugin was mapped where the first had been' '
	for kind in $SLED_KINDS
	do
		grep -x "same address" t-sled-dlopen.$kind.plain.out || return 1
	done
'

test_done
