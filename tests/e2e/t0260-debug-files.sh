#!/bin/sh
# matrix: cc-opt
test_description='separate debug files: debuglink, build-id directories, --symfs, wrong builds'
. "$(dirname "$0")/lib.sh"

# split FILE: move FILE's debug data to FILE.debug, strip FILE, link them.
split () {
	objcopy --only-keep-debug "$1" "$1.debug" &&
	strip "$1" &&
	objcopy --add-gnu-debuglink="$1.debug" "$1"
}

# build_id FILE: its GNU build-id in hex.
build_id () {
	readelf -n "$1" | awk '/Build ID:/ { print $3 }'
}

test_expect_success 'setup: a program and its library, stripped, debug data split off' '
	build_workload_lib s-lib.c libslib.so &&
	build_workload s-lib-main.c -L. -lslib "-Wl,-rpath,\$ORIGIN" &&
	callprof record -o plain.cprof -- ./t-lib-main >out &&
	callprof export -f folded -m calls plain.cprof >expect &&
	callprof report --fields=calls,site,name --min-percent=0 --sort=name plain.cprof >expect.sites &&
	grep -q "s-lib.c:[0-9]* *slib_step$" expect.sites &&
	split t-lib-main &&
	split libslib.so &&
	! nm t-lib-main 2>/dev/null | grep -q use_lib &&
	callprof record -o p.cprof -- ./t-lib-main >out
'

test_expect_success 'names and lines through .gnu_debuglink next to the files' '
	callprof export -f folded -m calls p.cprof >actual 2>err &&
	test_cmp expect actual &&
	test_must_be_empty err &&
	callprof report --fields=calls,site,name --min-percent=0 --sort=name p.cprof >sites &&
	test_cmp_report expect.sites sites
'

test_expect_success 'the same from a build-id directory given with --debug-dir' '
	mkdir -p dbg &&
	for f in t-lib-main libslib.so
	do
		id=$(build_id $f) &&
		mkdir -p dbg/.build-id/$(echo $id | cut -c1-2) &&
		mv $f.debug dbg/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug || return 1
	done &&
	callprof export -f folded -m calls p.cprof >nodebug 2>/dev/null &&
	! grep -q use_lib nodebug &&
	callprof export -f folded -m calls --debug-dir dbg p.cprof >actual 2>err &&
	test_cmp expect actual &&
	test_must_be_empty err
'

test_expect_success 'the same after moving the binaries, with --symfs' '
	mkdir -p "symfs$PWD" &&
	mv t-lib-main libslib.so "symfs$PWD/" &&
	callprof export -f folded -m calls --debug-dir dbg p.cprof >moved 2>err &&
	grep -q "cannot open .*t-lib-main" err &&
	! grep -q use_lib moved &&
	callprof export -f folded -m calls --debug-dir dbg --symfs symfs p.cprof >actual 2>err &&
	test_cmp expect actual &&
	callprof report --symfs symfs --debug-dir dbg --srcline --min-percent=0 p.cprof >report &&
	grep -q "s-lib.c:[0-9]* *slib_step$" report &&
	mv "symfs$PWD/t-lib-main" "symfs$PWD/libslib.so" .
'

test_expect_success 'a debug file of another build is not used, and said so' '
	cc_kind "$CP_BUILD_KIND" $CC $OPT -g -fPIC -shared -DOTHER_BUILD -o other.so \
		"$WORKLOADS/s-lib.c" &&
	objcopy --only-keep-debug other.so libslib.so.debug &&
	callprof export -f folded -m calls p.cprof >actual 2>err &&
	grep "^callprof: warning: debug file .*libslib.so.debug. is from another build than .*libslib.so. (build-id $(build_id other.so), module has $(build_id libslib.so)): not used$" err &&
	! grep -q "slib_step" actual &&
	grep -q "slib_compute" actual &&
	grep -q "libslib.so+0x" actual
'

test_expect_success 'a binary changed since recording: MODULE+0xOFFSET names, said so' '
	cc_kind "$CP_BUILD_KIND" $CC $OPT -g -fPIC -shared -DOTHER_BUILD -o libslib.so \
		"$WORKLOADS/s-lib.c" &&
	callprof export -f folded -m calls p.cprof >actual 2>err &&
	grep -q "^callprof: warning: .*libslib.so. changed since recording (build-id" err &&
	! grep -q "slib_" actual &&
	grep -q "libslib.so+0x" actual
'

test_done
