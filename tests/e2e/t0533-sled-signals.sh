#!/bin/sh
# matrix: cc-opt
test_description='sleds: signal handlers calling sledded functions, on a sigaltstack, leaving by siglongjmp, interrupting anywhere'
. "$(dirname "$0")/lib.sh"

# A handler's calls start a new nest on top of whatever it interrupted
# (under the <signal N> pseudo-frame), on the thread's stack or an
# alternate one; one handler leaves by siglongjmp, abandoning the
# handler's frames and the five it interrupted.  In the async case a timer
# lands anywhere, also inside the runtime's entry and return code.

test_expect_success 'setup: the program in each kind' '
	for kind in $SLED_KINDS
	do
		build_kind $kind s-sled-signal.c || return 1
	done
'

for kind in $SLED_KINDS
do
	test_expect_success "$kind: raised handlers, alt stack, siglongjmp out: output, status, counts" '
		run_both_ways t-sled-signal.$kind sync 500 &&
		grep "^on alt stack: yes$" t-sled-signal.$kind.rec.out &&
		sled_check_counts t-sled-signal.$kind.rec.out t-sled-signal.$kind.cprof
	'

	test_expect_success "$kind: handlers under the frame they interrupted, calls after the jump under its taker" '
		callprof export -f folded -m calls t-sled-signal.$kind.cprof >folded &&
		grep "in_handler \|after_bail \|bail " folded >actual &&
		w="main;round_trip;work;work;work;work;work" &&
		cat >expect <<-EOT &&
		main;round_trip;after_bail 500
		$w;<signal 10>;on_usr1;in_handler 500
		$w;<signal 12>;on_usr2;in_handler 500
		$w;<signal 23>;on_urg;bail 500
		$w;<signal 23>;on_urg;in_handler 500
		EOT
		test_cmp expect actual
	'

	test_expect_success "$kind: a timer interrupting anywhere: status, counts of the same run" '
		run_both_ways --filter "/^count	/d" t-sled-signal.$kind async 300 &&
		grep "^alarms 300$" t-sled-signal.$kind.rec.out &&
		# An expiry pending when the timer stopped runs the handler once
		# more (it returns at once): under load, 301 (the counts must agree).
		grep -E "^count	on_alrm	30[01]$" t-sled-signal.$kind.rec.out &&
		sled_check_counts t-sled-signal.$kind.rec.out t-sled-signal.$kind.cprof
	'
done

test_done
