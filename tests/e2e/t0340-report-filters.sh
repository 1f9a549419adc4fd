#!/bin/sh
# matrix: cc-opt
test_description='report and export filters: --focus, --hide, --regex, --threads selectors, export --min-percent'
. "$(dirname "$0")/lib.sh"

# s-paths: main -> leaf (1), main -> left -> leaf (2), main -> right ->
# deep -> leaf (3).  s-threads: worker1..worker4 and main, each on a path
# of its own.  Counts are deterministic; times are checked by relations.

test_expect_success 'setup: profile s-paths and s-threads' '
	build_workload s-paths.c &&
	build_workload s-threads.c &&
	callprof record -o paths.cprof -- ./t-paths &&
	callprof record -o th.cprof -- ./t-threads
'

test_expect_success 'tree --focus keeps the paths through deep, with its ancestors' '
	cat >expect <<-\EOF &&
	calls  name
	    1  main
	    1    right
	    1      deep
	    3        leaf
	EOF
	callprof report --focus=deep --fields=calls,name --min-percent=0 --sort=name paths.cprof >actual &&
	test_cmp_report expect actual
'

test_expect_success 'tree --focus on leaf keeps all three paths, drops nothing else' '
	callprof report --focus=leaf --fields=calls,name --min-percent=0 --sort=name paths.cprof >actual &&
	test_cmp_report "$EXPECT/paths.tree" actual
'

test_expect_success 'tree --hide merges contexts into callers, equal siblings add up' '
	cat >expect <<-\EOF &&
	calls  name
	    1  main
	    4    leaf
	    1    left
	    2      leaf
	EOF
	callprof report --hide=deep --hide="ri*" --fields=calls,name --min-percent=0 --sort=name paths.cprof >actual &&
	test_cmp_report expect actual
'

test_expect_success '--regex makes the patterns extended regular expressions' '
	cat >expect <<-\EOF &&
	calls  name
	    1  main
	    6    leaf
	EOF
	callprof report --regex --hide="^(left|right|deep)$" --fields=calls,name --min-percent=0 --sort=name paths.cprof >actual &&
	test_cmp_report expect actual &&
	callprof report --regex --focus="ee" --fields=calls,name --min-percent=0 --sort=name paths.cprof >actual &&
	grep "^ *3        leaf$" actual &&
	! grep left actual
'

test_expect_success 'flat --focus counts only the kept contexts' '
	cat >expect <<-\EOF &&
	calls  name
	    2  leaf
	    1  left
	    1  main
	EOF
	callprof report --flat --focus=left --fields=calls,name --sort=name paths.cprof >actual &&
	test_cmp_report expect actual
'

test_expect_success 'flat and callers with --hide: the hidden function is gone' '
	cat >expect <<-\EOF &&
	calls  name
	    1  deep
	    6  leaf
	    1  main
	    1  right
	EOF
	callprof report --flat --hide=left --fields=calls,name --sort=name paths.cprof >actual &&
	test_cmp_report expect actual &&
	cat >expect <<-\EOF &&
	calls  name
	    6  leaf
	    3    <- deep
	    3    <- main
	EOF
	callprof report --callers leaf --hide=left --fields=calls,name --sort=name paths.cprof >actual &&
	test_cmp_report expect actual
'

test_expect_success 'the banner lists every filter in effect' '
	callprof report --focus=deep --threads=t-paths paths.cprof >actual &&
	grep "^# threads: t-paths (1 of 1 threads)$" actual &&
	grep "^# focus: deep ([0-9]*\.[0-9][0-9]% of the time)$" actual &&
	callprof report --hide="l*" --hide=nothing paths.cprof >actual &&
	grep "^# hidden: l\* (4 contexts merged into callers)$" actual &&
	grep "^# hidden: nothing (0 contexts merged into callers)$" actual &&
	! grep "^# focus" actual &&
	callprof report paths.cprof >actual &&
	! grep "^# \(hidden\|focus\|threads\):" actual
'

test_expect_success 'focus keeps the thread total: percentages keep their base' '
	callprof report --min-percent=0 paths.cprof >all &&
	callprof report --min-percent=0 --focus=deep paths.cprof >focused &&
	grep "^== " all >h1 &&
	grep "^== " focused >h2 &&
	test_cmp h1 h2
'

test_expect_success 'export folded with --focus and --hide' '
	cat >expect <<-\EOF &&
	main 1
	main;right 1
	main;right;deep 1
	main;right;deep;leaf 3
	EOF
	callprof export -f folded -m calls --focus=deep paths.cprof >actual &&
	test_cmp expect actual &&
	cat >expect <<-\EOF &&
	main 1
	main;leaf 4
	main;left 1
	main;left;leaf 2
	EOF
	callprof export -f folded -m calls --hide=deep --hide=right paths.cprof >actual &&
	test_cmp expect actual
'

test_expect_success 'hide keeps the time: self moves to the caller, totals stay' '
	callprof export -f folded -m self paths.cprof >self-all &&
	callprof export -f folded -m self --hide=right --hide=deep paths.cprof >self-hidden &&
	callprof export -f folded -m total paths.cprof >total-all &&
	callprof export -f folded -m total --hide=right --hide=deep paths.cprof >total-hidden &&
	test "$(folded_value main <total-all)" = "$(folded_value main <total-hidden)" &&
	a=$(awk "{ s += \$NF } END { printf \"%.0f\\n\", s }" self-all) &&
	b=$(awk "{ s += \$NF } END { printf \"%.0f\\n\", s }" self-hidden) &&
	test "$a" = "$b" &&
	check_time_relations self-hidden total-hidden
'

test_expect_success 'every export format takes the filters' '
	for f in json callgrind speedscope pprof plist svg html
	do
		callprof export -f $f --focus=deep --hide=right -o out.$f paths.cprof &&
		test -s out.$f || return 1
	done &&
	# root, main, deep, leaf (not counted: nodes of code without hooks a
	# sample happened to land in); the function table may list more
	python3 -c "import json; n = json.load(open(\"out.json\"))[\"trees\"][0][\"nodes\"]; print(len([x for x in n if not x[\"uninstrumented\"]]))" >nodes &&
	echo 4 >expect &&
	test_cmp expect nodes &&
	grep -q "^fn=.*deep" out.callgrind &&
	! grep -q "^c\{0,1\}fn=.*left" out.callgrind
'

# --min-percent=100 keeps only contexts holding their whole thread's total:
# none in a clocked profile (the thread outlives main), main alone in a
# sampled one of this short run if main holds all of it (its off-CPU time:
# no sample fell).  pathsk.cprof is clocked, so that every context has a
# time to fold.
test_expect_success 'export --min-percent folds small contexts, keeping the time' '
	callprof record --time=clock -o pathsk.cprof -- ./t-paths &&
	callprof export -f folded -m calls --min-percent=100 pathsk.cprof >actual &&
	test_must_be_empty actual &&
	for p in paths pathsk
	do
		callprof export -f json $p.cprof >$p.json &&
		root=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"trees\"][0][\"nodes\"][0][\"total_ns\"])" $p.json) &&
		callprof export -f folded -m total --min-percent=100 $p.cprof >actual &&
		awk -v root="$root" "\$NF != root { bad = 1 } END { exit bad }" actual &&
		callprof export -f folded -m calls --min-percent=0 $p.cprof >actual &&
		test_cmp "$EXPECT/paths.calls" actual &&
		callprof export -f folded -m self $p.cprof >self-all &&
		callprof export -f folded -m self --min-percent=0.001 $p.cprof >self-folded &&
		callprof export -f folded -m total --min-percent=0.001 $p.cprof >total-folded &&
		folded_value main <self-folded &&
		a=$(awk "{ s += \$NF } END { printf \"%.0f\\n\", s }" self-all) &&
		b=$(awk "{ s += \$NF } END { printf \"%.0f\\n\", s }" self-folded) &&
		test "$a" = "$b" &&
		check_time_relations self-folded total-folded || return 1
	done &&
	# A floor just above the clocked profile'"'"'s smallest context folds it.
	pct=$(python3 - pathsk.json <<-\EOT
	import json, sys
	n = json.load(open(sys.argv[1]))["trees"][0]["nodes"]
	print("%.9f" % (100.0 * (min(x["total_ns"] for x in n[2:]) + 1.5) / n[0]["total_ns"]))
	EOT
	) &&
	callprof export -f folded -m self pathsk.cprof >self-all &&
	callprof export -f folded -m self --min-percent=$pct pathsk.cprof >self-folded &&
	test $(wc -l <self-folded) -lt $(wc -l <self-all) &&
	test "$(awk "{ s += \$NF } END { printf \"%.0f\\n\", s }" self-all)" = \
		"$(awk "{ s += \$NF } END { printf \"%.0f\\n\", s }" self-folded)" &&
	test_expect_code 129 callprof export -f folded --min-percent=101 paths.cprof 2>err &&
	test_line_count = 1 err
'

test_expect_success '--threads selects threads by name glob, with each or merged' '
	grep "^worker[12];" "$EXPECT/threads-each.calls" >expect &&
	callprof export -f folded -m calls --threads=each --threads="worker[12]" th.cprof >actual &&
	test_cmp expect actual &&
	cat >expect <<-\EOF &&
	main 1
	main;reap 1
	main;spawn 4
	EOF
	callprof export -f folded -m calls --threads=main th.cprof >actual &&
	test_cmp expect actual &&
	callprof report --fields=calls,name --min-percent=0 --sort=name --threads=main,worker4 th.cprof >actual &&
	grep "^ *4      step_c$" actual &&
	! grep step_a actual
'

test_expect_success '--threads selects a thread by id' '
	callprof export -f json --threads=each th.cprof >all.json &&
	tid=$(sed -n "s/.*\"label\":\"worker3\",\"tid\":\([0-9]*\).*/\1/p" all.json) &&
	test -n "$tid" &&
	grep "^worker3;" "$EXPECT/threads-each.calls" >expect &&
	callprof export -f folded -m calls --threads=each,$tid th.cprof >actual &&
	test_cmp expect actual
'

test_expect_success 'a selector that matches no thread: one error line, status 1' '
	echo "callprof: error: no thread matches '\''nope'\'' in profile '\''th.cprof'\''" >expect &&
	test_expect_code 1 callprof report --threads=main,nope th.cprof >out 2>err &&
	test_cmp expect err &&
	test_must_be_empty out &&
	test_expect_code 1 callprof export -f folded --threads=each,nope th.cprof >out 2>err &&
	test_cmp expect err
'

test_expect_success '--focus matching no function: one error line, status 1, no file' '
	echo "callprof: error: --focus '\''nope'\'' matches no function in profile '\''paths.cprof'\''" >expect &&
	test_expect_code 1 callprof report --focus=nope paths.cprof >out 2>err &&
	test_cmp expect err &&
	test_must_be_empty out &&
	test_expect_code 1 callprof export -f folded -o none.folded --focus=nope paths.cprof 2>err &&
	test_cmp expect err &&
	test_path_is_missing none.folded &&
	! ls -a | grep none
'

test_expect_success 'an invalid regex or an empty selector is a usage error (129), one line' '
	test_expect_code 129 callprof report --regex --hide="(" paths.cprof >out 2>err &&
	test_line_count = 1 err &&
	grep "^callprof: error: --hide '\''('\'' is not a valid regular expression: .* (see '\''callprof report -h'\'')$" err &&
	test_expect_code 129 callprof export -f folded --regex --focus="a[" paths.cprof >out 2>err &&
	test_line_count = 1 err &&
	test_expect_code 129 callprof report --threads=main,,x paths.cprof >out 2>err &&
	test_line_count = 1 err
'

test_done
