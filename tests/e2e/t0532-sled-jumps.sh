#!/bin/sh
# matrix: cc-opt
test_description='sleds: longjmp and siglongjmp out of nested sledded frames, then more calls'
. "$(dirname "$0")/lib.sh"

# A jump abandons sledded frames whose return addresses the runtime
# replaced: their returns never come, and the calls after the jump must
# land under the frame that took the setjmp.

test_expect_success 'setup: the program in each kind' '
	for kind in $SLED_KINDS
	do
		build_kind $kind s-sled-jump.c || return 1
	done
'

for kind in $SLED_KINDS
do
	test_expect_success "$kind: output, status and counts as alone" '
		run_both_ways t-sled-jump.$kind 1000 &&
		grep "SIGUSR1 blocked after the jumps: 0$" t-sled-jump.$kind.rec.out &&
		sled_check_counts t-sled-jump.$kind.rec.out t-sled-jump.$kind.cprof
	'

	test_expect_success "$kind: after each jump the calls are under the frame that took the setjmp" '
		callprof export -f folded -m calls t-sled-jump.$kind.cprof >folded &&
		grep "after_jump \|finish " folded >actual &&
		cat >expect <<-\EOT &&
		main;finish 1
		main;jumper;after_jump 1000
		main;nested;after_jump 1000
		main;nested;mid;inner;after_jump 1000
		main;sigjumper;after_jump 1000
		EOT
		test_cmp expect actual &&
		awk "BEGIN {
			for (k = 1; k <= 7; k++) print down(\"main;jumper\", k)
			for (k = 1; k <= 7; k++) print down(\"main;sigjumper\", k)
			for (k = 1; k <= 6; k++) print down(\"main;nested;mid;inner\", k)
			for (k = 1; k <= 3; k++) print down(\"main;nested;mid;inner\", k)
		}
		function down(p, k) {
			while (k--) p = p \";descend\"
			return p
		}" | LC_ALL=C sort | uniq -c | awk "{ print \$2, \$1 * 1000 }" >expect &&
		grep ";descend " folded >actual &&
		test_cmp expect actual
	'
done

test_done
