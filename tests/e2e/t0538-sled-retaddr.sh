#!/bin/sh
# matrix: cc-opt
test_description='sleds: what __builtin_return_address(0) sees under record; CET user shadow stacks are refused or handled'
. "$(dirname "$0")/lib.sh"

# Under sleds the runtime replaces a sledded function's return address with
# its own return stub (it keeps the real one, and the function returns
# through the stub to it).  A program that reads __builtin_return_address(0)
# in a sledded function therefore sees the stub's address, not the
# caller's: the stubs live in the runtime's stub area, a mapping of a
# memfd that is no loaded object (runtime/sleds.c), so dladdr() finds no
# object for it.  Its output differs only where it prints that address or
# what it concludes from it; the hooks build sees the real address.

test_expect_success 'setup: the program in each kind' '
	for kind in $SLED_KINDS
	do
		build_kind $kind s-sled-retaddr.c -ldl || return 1
	done
'

for kind in $SLED_KINDS
do
	test_expect_success "$kind: a program that reads its return address but does not print it: output unchanged" '
		run_both_ways t-sled-retaddr.$kind quiet 100 &&
		sled_check_counts t-sled-retaddr.$kind.rec.out t-sled-retaddr.$kind.cprof
	'
done

# A sleds column builds the sleds kind only (SLED_KINDS, lib.sh).
case " $SLED_KINDS " in
*" hooks "*)
test_expect_success 'hooks: the return address is the real one under record' '
	run_both_ways t-sled-retaddr.hooks print 100 &&
	grep -x "return address: after the call in caller" t-sled-retaddr.hooks.rec.out &&
	grep -x "after the call: 100 of 100" t-sled-retaddr.hooks.rec.out
'
;;
esac

test_expect_success 'sleds: alone the real one, under record the stub: the only lines that differ' '
	test_might_fail run_both_ways t-sled-retaddr.sleds print 100 &&
	grep -x "return address: after the call in caller" t-sled-retaddr.sleds.plain.out &&
	grep -x "after the call: 100 of 100" t-sled-retaddr.sleds.plain.out &&
	grep -x "return address: in no object" t-sled-retaddr.sleds.rec.out &&
	grep -x "after the call: 0 of 100" t-sled-retaddr.sleds.rec.out &&
	grep -v "^return address: \|^after the call: " t-sled-retaddr.sleds.plain.out >plain &&
	grep -v "^return address: \|^after the call: " t-sled-retaddr.sleds.rec.out >rec &&
	test_cmp plain rec &&
	sled_check_counts t-sled-retaddr.sleds.rec.out t-sled-retaddr.sleds.cprof
'

# CET user shadow stacks: the CPU keeps a second copy of every return
# address and faults (SIGSEGV, #CP) on a return whose address differs: a
# replaced return address kills the program.  Needs the CPU (user_shstk
# in /proc/cpuinfo), the kernel (x86_Thread_features in /proc/PID/status,
# Linux 6.6+) and glibc 2.39+ (GLIBC_TUNABLES=glibc.cpu.x86_shstk=on,
# programs built with -fcf-protection).  Under record the runtime must
# either refuse the program with one clear line, or handle it: write its
# stub into the shadow stack too (WRSS, which the kernel does not give
# user space) or not replace return addresses there.  The runtime refuses
# (runtime/sleds.c: nothing patched, the program runs unprofiled); the
# case accepts a runtime that handles it as well.
shstk_missing=
grep -qw user_shstk /proc/cpuinfo || shstk_missing="the CPU has no user_shstk (/proc/cpuinfo)"
grep -q "^x86_Thread_features:" /proc/self/status ||
	shstk_missing="${shstk_missing:+$shstk_missing; }the kernel does not report x86_Thread_features (Linux 6.6+ with X86_USER_SHADOW_STACK)"
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed -n "s/^glibc //p")
case "$glibc" in
2.[0-9]|2.[0-2][0-9]|2.3[0-8]|"")
	shstk_missing="${shstk_missing:+$shstk_missing; }glibc ${glibc:-?} has no shadow stack support (2.39+)" ;;
esac
if test -n "$shstk_missing"; then
	test_skip 'sleds: a process on a CET shadow stack is refused with one line, or handled' \
		"cannot run here: $shstk_missing"
else
	test_expect_success 'sleds: a process on a CET shadow stack is refused with one line, or handled' '
		build_kind sleds s-sled-retaddr.c -ldl -fcf-protection=full &&
		GLIBC_TUNABLES=glibc.cpu.x86_shstk=on &&
		export GLIBC_TUNABLES &&
		./t-sled-retaddr.sleds shstk >on &&
		grep -x "shadow stack: on" on &&
		run_both_ways t-sled-retaddr.sleds quiet 100 &&
		if grep "shadow stack" t-sled-retaddr.sleds.rec.err-all >said
		then
			# Refused (runtime/sleds.c): the program runs unprofiled,
			# its output and status its own, and one line says so.
			test_line_count = 1 said &&
			grep "runs unprofiled" said
		else
			sled_check_counts t-sled-retaddr.sleds.rec.out t-sled-retaddr.sleds.cprof
		fi
	'
fi

test_done
