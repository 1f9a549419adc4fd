#!/bin/sh
# matrix: cc-opt
test_description='call-site lines: a context per function, its calls counted per call site'
. "$(dirname "$0")/lib.sh"

# s-callsites.c: work() calls leaf() once from line 37, twice from line 39,
# three times from line 41; fib() calls itself from lines 29 (A) and 31
# (B) and counts those calls itself; main calls fib from line 63.

# rows NAME <report: the rows whose name is NAME or "@ NAME", spaces squeezed.
rows () {
	awk -v name="$1" '$NF == name { $1 = $1; print }'
}

test_expect_success 'setup: profile fib(15) and work()' '
	build_workload s-callsites.c &&
	callprof record -o p.cprof -- ./t-callsites 15 >out &&
	sed -n "s/.*from A \([0-9]*\), from B \([0-9]*\),.*/\1 \2/p" out >counts &&
	read from_a from_b <counts &&
	test "$from_a" -gt 100 &&
	echo "A $from_a B $from_b"
'

test_expect_success 'a function called from three lines of one caller shows three lines' '
	callprof report --srcline --fields=calls,site,name --min-percent=0 --sort=name p.cprof >tree &&
	rows leaf <tree >actual &&
	cat >expect <<-\EOT &&
	6 (3 call sites) leaf
	1 s-callsites.c:37 @ leaf
	2 s-callsites.c:39 @ leaf
	3 s-callsites.c:41 @ leaf
	EOT
	test_cmp expect actual
'

test_expect_success 'the sites of every context add up to its calls' '
	callprof report --srcline --fields=calls,site,name --min-percent=0 --sort=name p.cprof >tree &&
	test $(grep -c "(2 call sites)" tree) = 14 &&
	awk "
		function check() { if (open && got != want) bad = 1; open = 0 }
		/call sites\)/ { check(); want = \$1; got = 0; open = 1; next }
		/ @ / { got += \$1; next }
		{ check() }
		END { check(); exit bad }
	" tree
'

test_expect_success 'callees are grouped by call-site line' '
	callprof report --callees work --fields=calls,name --sort=name p.cprof >actual &&
	cat >expect <<-\EOT &&
	calls  name
	    1  work
	         at s-callsites.c:37
	    1      -> leaf
	         at s-callsites.c:39
	    2      -> leaf
	         at s-callsites.c:41
	    3      -> leaf
	EOT
	test_cmp_report expect actual
'

test_expect_success 'recursion from two sites: one context per depth, exact counts per site' '
	read from_a from_b <counts &&
	callprof export -f folded -m calls p.cprof >folded &&
	test $(grep -c "fib" folded) = 15 &&
	callprof report --callers fib --srcline --fields=calls,site,name --sort=name p.cprof >callers &&
	rows fib <callers >actual &&
	cat >expect <<-EOT &&
	$((from_a + from_b + 1)) - fib
	$from_a s-callsites.c:29 <- fib
	$from_b s-callsites.c:31 <- fib
	EOT
	test_cmp expect actual &&
	grep -q "^ *1  s-callsites.c:63  *<- main$" callers
'

test_expect_success 'counting mode counts per site as exactly' '
	read from_a from_b <counts &&
	callprof record --mode=counting -o c.cprof -- ./t-callsites 15 >out &&
	callprof report --callers fib --srcline --fields=calls,site,name --sort=name c.cprof >callers &&
	grep -q "^ *$from_a  s-callsites.c:29  *<- fib$" callers &&
	grep -q "^ *$from_b  s-callsites.c:31  *<- fib$" callers
'

# main calls work() (6 calls of leaf); 300 threads do too, from their
# roots (1800): the first 256 keep trees of their own, the rest are
# folded into one aggregate tree.
test_expect_success 'threads folded into an aggregate keep their sites' '
	callprof record -o th.cprof -- ./t-callsites 3 300 >out &&
	callprof report --srcline --fields=calls,site,name --min-percent=0 --sort=name th.cprof >tree &&
	rows leaf <tree >actual &&
	cat >expect <<-\EOT &&
	6 (3 call sites) leaf
	1 s-callsites.c:37 @ leaf
	2 s-callsites.c:39 @ leaf
	3 s-callsites.c:41 @ leaf
	1800 (3 call sites) leaf
	300 s-callsites.c:37 @ leaf
	600 s-callsites.c:39 @ leaf
	900 s-callsites.c:41 @ leaf
	EOT
	test_cmp expect actual &&
	callprof report --threads=each --fields=calls,name --min-percent=0 th.cprof >each &&
	grep -q "(exited)" each
'

test_expect_success 'without --srcline a context is one row, whatever its sites' '
	callprof report --fields=calls,name --min-percent=0 --sort=name p.cprof >plain &&
	rows leaf <plain >actual &&
	echo "6 leaf" >expect &&
	test_cmp expect actual &&
	! grep -q "@ " plain
'

test_expect_success 'an inlined function: its call site is not known, and is not guessed' '
	build_workload s-inline.c &&
	callprof record -o inl.cprof -- ./t-inline >out &&
	callprof report --srcline --fields=calls,site,name --min-percent=0 inl.cprof >tree &&
	rows small <tree >actual &&
	if test "$CP_BUILD_KIND" = sleds
	then
		# An inlined function has no sled (no code of its own to
		# enter): it is part of its caller, not counted at all.
		test_must_be_empty actual &&
		rows outer <tree >actual &&
		test_line_count = 1 actual
	else
		echo "2 (inlined) small" >expect &&
		test_cmp expect actual &&
		callprof report --callees outer --fields=calls,name inl.cprof >callees &&
		grep -q "^ *inlined (the line is not known)$" callees
	fi
'

# A context with several sites, added into an empty one (the first file
# of callprof merge or of a report of several files, a context a --hide or
# --focus keeps): its sites were once added before its counts, which left
# only the last site, with every call.
test_expect_success 'merge, several files and filters keep every call site of a context' '
	cat >expect <<-\EOT &&
	6 (3 call sites) leaf
	1 s-callsites.c:37 @ leaf
	2 s-callsites.c:39 @ leaf
	3 s-callsites.c:41 @ leaf
	EOT
	callprof merge -q -o m.cprof p.cprof &&
	callprof report --srcline --fields=calls,site,name --min-percent=0 --sort=name m.cprof >tree &&
	rows leaf <tree >actual &&
	test_cmp expect actual &&
	callprof report --srcline --fields=calls,site,name --min-percent=0 --sort=name \
		--hide="fib*" p.cprof >tree &&
	rows leaf <tree >actual &&
	test_cmp expect actual &&
	callprof report --srcline --fields=calls,site,name --min-percent=0 --sort=name \
		--focus=work p.cprof >tree &&
	rows leaf <tree >actual &&
	test_cmp expect actual &&
	cp p.cprof q.cprof &&
	callprof report --srcline --fields=calls,site,name --min-percent=0 --sort=name \
		p.cprof q.cprof >tree &&
	rows leaf <tree >actual &&
	awk "{ \$1 = \$1 * 2; print }" expect >expect2 &&
	test_cmp expect2 actual
'

test_done
