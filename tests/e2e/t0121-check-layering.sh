#!/bin/sh
test_description='tools/check-layering: elfutils only in symbolize/, one-way includes, curses only in tui/, exported names'
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$TEST_DIRECTORY/../.." && pwd)

# tests/run-all runs the script on the tree and its build (make check,
# make test); here it runs on a scratch tree with the script and the
# Makefile, and on build directories of small binaries made to order, to
# show that each rule fails when broken.
test_expect_success 'set up a scratch tree' '
	mkdir -p tree/tools tree/cli tree/sample tree/symbolize tree/tui good bad &&
	cp "$TOP/tools/check-layering" tree/tools/ &&
	cp "$TOP/Makefile" tree/ &&
	printf "#include <gelf.h>\n#include <elfutils/libdwfl.h>\n" >tree/symbolize/ok.c &&
	printf "#include \"symbolize/elffile.h\"\n" >tree/sample/ok.c &&
	printf "#include <curses.h>\n#include \"report/tui.h\"\n" >tree/tui/ok.c &&
	printf "int main(void) { return 0; }\n" >main.c &&
	printf "void __cyg_profile_func_enter(void *f, void *s) {}\nvoid __cyg_profile_func_exit(void *f, void *s) {}\nvoid *callprof__get_api(void) { return 0; }\nvoid cp_x(void) {}\n" >rt.c &&
	$CC -o good/callprof main.c &&
	$CC -shared -fPIC -o good/libcallprof.so rt.c &&
	$CC -c -o rt.o rt.c && ar rcs good/libcallprof.a rt.o &&
	CALLPROF_BUILD=$PWD/good tree/tools/check-layering >out &&
	cat out &&
	grep "^7 passed, 0 failed$" out
'

test_expect_success 'an elfutils header outside symbolize/ is one line naming file and line' '
	printf "#include <stdio.h>\n  #  include <gelf.h>\n#include <dwarf.h>\n" >tree/cli/x.c &&
	test_must_fail env CALLPROF_BUILD=$PWD/good tree/tools/check-layering >out &&
	cat out &&
	grep "^not ok - no file outside symbolize/ includes an elfutils header$" out &&
	grep "^# cli/x.c:2: #  include <gelf.h> (elfutils outside symbolize/)$" out &&
	grep "^# cli/x.c:3: #include <dwarf.h>" out &&
	! grep "symbolize/ok.c" out &&
	grep "^6 passed, 1 failed$" out &&
	rm tree/cli/x.c
'

test_expect_success 'an include against the layering is named with what is allowed' '
	printf "#include \"report/internal.h\"\n" >tree/sample/bad.c &&
	test_must_fail env CALLPROF_BUILD=$PWD/good tree/tools/check-layering >out &&
	cat out &&
	grep "^# sample/bad.c:1: sample/ may not include report/ (may: sample symbolize format util)$" out &&
	! grep "sample/ok.c" out &&
	rm tree/sample/bad.c
'

test_expect_success 'the terminal browser may not include the commands above it' '
	printf "#include \"cli/options.h\"\n" >tree/tui/bad.c &&
	test_must_fail env CALLPROF_BUILD=$PWD/good tree/tools/check-layering >out &&
	cat out &&
	grep "^# tui/bad.c:1: tui/ may not include cli/ (may: tui report symbolize format util)$" out &&
	! grep "tui/ok.c" out &&
	rm tree/tui/bad.c
'

test_expect_success 'a curses header outside tui/ is one line naming file and line' '
	printf "#include <stdio.h>\n#include <ncursesw/curses.h>\n" >tree/cli/x.c &&
	printf " # include \"term.h\"\n" >tree/sample/x.c &&
	test_must_fail env CALLPROF_BUILD=$PWD/good tree/tools/check-layering >out &&
	cat out &&
	grep "^not ok - no file outside tui/ includes a curses header$" out &&
	grep "^# cli/x.c:2: #include <ncursesw/curses.h> (curses outside tui/)$" out &&
	grep "^# sample/x.c:1: # include \"term.h\" (curses outside tui/)$" out &&
	! grep "tui/ok.c" out &&
	grep "^6 passed, 1 failed$" out &&
	rm tree/cli/x.c tree/sample/x.c
'

test_expect_success 'elfutils compile flags outside the symbolize/ rule' '
	sed "s|^\(\t\$(CC) \$(TOOL_CFLAGS)\) -MMD -MP -c|\1 \$(DW_CFLAGS) -MMD -MP -c|" "$TOP/Makefile" >tree/Makefile &&
	! cmp "$TOP/Makefile" tree/Makefile &&
	test_must_fail env CALLPROF_BUILD=$PWD/good tree/tools/check-layering >out &&
	cat out &&
	grep "^# Makefile:[0-9]*: \$(DW_CFLAGS) in the rule for \$(B)/tool/%.o:$" out &&
	cp "$TOP/Makefile" tree/Makefile
'

test_expect_success 'a tool function exported, a runtime name unprefixed or a hook missing' '
	printf "int main(void) { return 0; }\nint error(int s) { return s; }\n" >main2.c &&
	$CC -rdynamic -o bad/callprof main2.c &&
	printf "void __cyg_profile_func_enter(void *f, void *s) {}\nvoid helper(void) {}\n" >rt2.c &&
	$CC -shared -fPIC -o bad/libcallprof.so rt2.c &&
	$CC -c -o rt2.o rt2.c && ar rcs bad/libcallprof.a rt2.o &&
	test_must_fail env CALLPROF_BUILD=$PWD/bad tree/tools/check-layering >out &&
	cat out &&
	grep "^# .*bad/callprof: exports error (T): not cp_-prefixed" out &&
	grep "^# .*bad/libcallprof.so: exports helper (T): not cp_/callprof_-prefixed" out &&
	grep "^# .*bad/libcallprof.so: does not export __cyg_profile_func_exit$" out &&
	grep "^# .*bad/libcallprof.so: does not export callprof__get_api$" out &&
	! grep "exports __cyg_profile_func_enter" out &&
	grep "^# .*bad/libcallprof.a: defines helper (T): not cp_/callprof_-prefixed" out &&
	grep "^4 passed, 3 failed$" out
'

test_expect_success 'a sled fast path that makes a call is named, with the call' '
	mkdir -p leaf &&
	cp good/callprof good/libcallprof.a leaf/ &&
	printf "void __cyg_profile_func_enter(void *f, void *s) {}\nvoid __cyg_profile_func_exit(void *f, void *s) {}\nvoid *callprof__get_api(void) { return 0; }\nvoid cp_sled_entry(void) {}\nvoid cp_other(void);\nunsigned long cp_sled__enter_fast(unsigned long *s) { cp_other(); return *s; }\nunsigned long cp_sled__enter_fast_endbr(unsigned long *s) { return *s; }\nunsigned long cp_sled__exit_fast(unsigned long *s) { return *s + 1; }\nvoid cp_other(void) {}\n" >leaf.c &&
	$CC -O0 -shared -fPIC -o leaf/libcallprof.so leaf.c &&
	test_must_fail env CALLPROF_BUILD=$PWD/leaf tree/tools/check-layering >out &&
	cat out &&
	grep "^not ok - libcallprof.so: the sled fast paths: no call, no vector register, no jump out but to the full paths" out &&
	grep "^# .*libcallprof.so: cp_sled__enter_fast: call .*(a call: the registers it may change are not saved)$" out &&
	! grep "cp_sled__exit_fast:" out &&
	grep "^7 passed, 1 failed$" out
'

# The fast paths are jumped to and jump on: to the full paths and through
# r11 (to a stub) they may, anywhere else they may not.
test_expect_success 'a sled fast path that jumps elsewhere than the full paths is named' '
	mkdir -p jump &&
	cp good/callprof good/libcallprof.a jump/ &&
	cat >jump.c <<-\EOF &&
	void __cyg_profile_func_enter(void *f, void *s) {}
	void __cyg_profile_func_exit(void *f, void *s) {}
	void *callprof__get_api(void) { return 0; }
	__attribute__((visibility("hidden"))) void cp_sled_entry(void) {}
	__attribute__((visibility("hidden"))) void cp_sled_entry_endbr(void) {}
	__attribute__((visibility("hidden"))) void cp_sled_ret_common(void) {}
	__attribute__((visibility("hidden"))) void cp_other(void) {}
	__asm__(".text\n"
		".globl cp_sled__enter_fast, cp_sled__enter_fast_endbr, cp_sled__exit_fast\n"
		".hidden cp_sled__enter_fast, cp_sled__enter_fast_endbr, cp_sled__exit_fast\n"
		".type cp_sled__enter_fast, @function\n"
		"cp_sled__enter_fast: test %r11, %r11\n jz 1f\n jmp *%r11\n1: jmp cp_sled_entry\n"
		".size cp_sled__enter_fast, . - cp_sled__enter_fast\n"
		".type cp_sled__enter_fast_endbr, @function\n"
		"cp_sled__enter_fast_endbr: jmp cp_sled_entry_endbr\n"
		".size cp_sled__enter_fast_endbr, . - cp_sled__enter_fast_endbr\n"
		".type cp_sled__exit_fast, @function\n"
		"cp_sled__exit_fast: test %r11, %r11\n jz 1f\n jmp cp_other\n1: jmp cp_sled_ret_common\n"
		".size cp_sled__exit_fast, . - cp_sled__exit_fast\n");
	EOF
	$CC -O0 -shared -fPIC -o jump/libcallprof.so jump.c &&
	test_must_fail env CALLPROF_BUILD=$PWD/jump tree/tools/check-layering >out &&
	cat out &&
	grep "^# .*libcallprof.so: cp_sled__exit_fast: jmp .*<cp_other> (a jump out, not to a full path)$" out &&
	! grep "cp_sled__enter_fast" out &&
	grep "^7 passed, 1 failed$" out
'

test_done
