#!/bin/sh
test_description='usage errors and a missing program'
. "$(dirname "$0")/lib.sh"

test_expect_success 'report --min-percent=abc is a usage error (129), one line' '
	build_workload s-nested.c &&
	callprof record -o p.cprof -- ./t-nested &&
	test_expect_code 129 callprof report --min-percent=abc p.cprof >out 2>err &&
	test_line_count = 1 err
'

test_expect_success 'record of a nonexistent program exits 127, one line' '
	test_expect_code 127 callprof record -o p2.cprof -- ./no-such-program >out 2>err &&
	test_line_count = 1 err &&
	grep -F no-such-program err
'

# callprof tui needs a terminal on stdout: one line and exit 1 without one,
# before the profile is even opened (report --tui the same).
test_expect_success 'tui without a terminal: 1 and one exact line' '
	test_expect_code 1 callprof tui no-such.cprof >out 2>err &&
	echo "callprof: error: tui: standard output is not a terminal (use callprof report)" >expect &&
	test_cmp expect err &&
	test_must_be_empty out &&
	test_expect_code 1 callprof report --tui no-such.cprof >out 2>err &&
	test_cmp expect err
'

# Every command: an unknown option, and an option missing its value, are
# usage errors (129) with exactly one line naming the option and the help.
for cmd in report export merge diff dump record tui
do
	test_expect_success "$cmd --no-such-option: 129 and one exact line" "
		test_expect_code 129 callprof $cmd --no-such-option >out 2>err &&
		echo \"callprof: error: unknown option '--no-such-option' (see 'callprof $cmd -h')\" >expect &&
		test_cmp expect err &&
		test_must_be_empty out
	"
done

for c in 'export -o' 'export -f' 'export -f folded --output' 'merge -o' 'record -o' 'dump -o' \
	'report --fields' 'report --sort' 'diff --fail-if' 'report --threads' 'tui --sort'
do
	opt=${c##* }
	cmd=${c%% *}
	test_expect_success "$c with no value: 129 and one exact line" "
		test_expect_code 129 callprof $c >out 2>err &&
		echo \"callprof: error: option '$opt' needs a value (see 'callprof $cmd -h')\" >expect &&
		test_cmp expect err &&
		test_must_be_empty out
	"
done

test_expect_success 'a bad value names the option, not the option and its value' '
	test_expect_code 129 callprof report --sort=bogus p.cprof >out 2>err &&
	metrics="calls, self, total, cpu, wait, inactive, samples, self-cpu, self-wait, self-inactive, self-samples" &&
	echo "callprof: error: option '"'"'--sort'"'"' does not take '"'"'bogus'"'"' (one of: $metrics, name) (see '"'"'callprof report -h'"'"')" >expect &&
	test_cmp expect err &&
	test_expect_code 129 callprof export -f svg -m bogus p.cprof >out 2>err &&
	echo "callprof: error: option '"'"'-m'"'"' does not take '"'"'bogus'"'"' (one of: $metrics) (see '"'"'callprof export -h'"'"')" >expect &&
	test_cmp expect err &&
	test_expect_code 129 callprof export -fbogus p.cprof >out 2>err &&
	echo "callprof: error: option '"'"'-f'"'"' does not take '"'"'bogus'"'"' (see '"'"'callprof export -h'"'"')" >expect &&
	test_cmp expect err
'

# A usage error found late (after list options were collected, or after a
# filter was built) leaves nothing allocated: the ASan column's
# LeakSanitizer would add lines and change the status.
while IFS='|' read -r code cmd
do
	test_expect_success "late usage error: callprof $cmd: $code and one line" "
		test_expect_code $code callprof $cmd >out 2>err &&
		test_line_count = 1 err &&
		test_must_be_empty out &&
		test_path_is_missing q.cprof
	"
done <<'EOF'
129|diff --debug-dir=d1 --debug-dir=d2 --fail-if=calls-changed --fail-if=bogus p.cprof p.cprof
129|report --debug-dir=d1 --threads=main --threads=a,,b p.cprof
129|report --debug-dir=d1 --regex --focus=main --hide=a[ p.cprof
129|report --debug-dir=d1 --fields=bogus p.cprof
129|report --debug-dir=d1 --name-width=3 p.cprof
129|export -f folded --debug-dir=d1 --regex --focus=a[ p.cprof
129|export -f folded --threads=, p.cprof
129|record --regex --exclude=main --exclude=a[ -o q.cprof -- ./t-nested
1|record --start=no_such_function_anywhere --exclude=main -o q.cprof -- ./t-nested
1|merge --debug-dir=d1 -o no-such-dir/m.cprof p.cprof
EOF

test_done
