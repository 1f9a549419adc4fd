#!/bin/sh
test_description='man pages match -h; make install gives a working callprof'
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$TEST_DIRECTORY/../.." && pwd)

for cmd in record report tui export merge diff dump cc attach
do
	test_expect_success "SYNOPSIS of callprof-$cmd.1.md holds every usage line of -h" '
		callprof '$cmd' -h >help &&
		sed -n "s/^usage: //p; s/^   or: //p" help >usage-lines &&
		test -s usage-lines &&
		sed -n "/^# SYNOPSIS/,/^# /p" "$TOP/docs/callprof-'$cmd'.1.md" >synopsis &&
		while IFS= read -r line
		do
			grep -F -- "$line" synopsis >/dev/null ||
			{ echo "not in SYNOPSIS: $line"; exit 1; }
		done <usage-lines
	'
done

for cmd in record report tui export merge diff dump attach cc
do
	test_expect_success "every option of callprof $cmd -h is in callprof-$cmd.1.md" '
		callprof '$cmd' -h >help &&
		grep -oE "^ +(-[a-zA-Z], )?--[a-z][a-z-]*" help | sed "s/.*--//" | sort -u >opts &&
		test -s opts &&
		while read -r o
		do
			grep -q -e "\\\\--$o\\b" -e "\`--$o\\b" "$TOP/docs/callprof-'$cmd'.1.md" ||
			{ echo "--$o is not in the man page"; exit 1; }
		done <opts
	'
done

# libdw imports glibc's error(); a tool function of that name would be
# exported from the executable and bound instead (LD_DEBUG=bindings).
test_expect_success 'the callprof executable exports no function of its own' '
	nm -D --defined-only "$CALLPROF_BUILD/callprof" >dynsyms &&
	cat dynsyms &&
	! grep " [TtWwi] " dynsyms
'

test_expect_success 'make install PREFIX= puts tool, runtime, header, pc file, man pages' '
	make -s -C "$TOP" install B="$CALLPROF_BUILD" SANITIZE="$CP_SANITIZE" PREFIX="$PWD/prefix" >install.log 2>&1 &&
	test -x prefix/bin/callprof &&
	test -f prefix/lib/callprof/libcallprof.so &&
	test -f prefix/lib/callprof/libcallprof.a &&
	test -f prefix/include/callprof.h &&
	test -f prefix/lib/pkgconfig/callprof.pc &&
	ls prefix/share/man/man1 | grep -c "^callprof.*\.1\$" >nman &&
	echo 10 >expect && test_cmp expect nman &&
	! ls prefix/share/man/man1 | grep -v "\.1\$"
'

# go-md2man passes a line through as it is, and roff takes one that begins
# with . or ' for a request: the line ("./configure ...") is gone.
test_expect_success 'no line of a man page source begins with . or '"'"'' '
	! grep -n "^[.'"'"']" "$TOP"/docs/*.1.md
'

# The pages are made at build time (go-md2man), whatever is installed:
# each is a man page that man renders, with its sections, its options in
# bold and no markdown left over.
test_expect_success 'the installed man pages render with man' '
	for page in prefix/share/man/man1/*.1
	do
		name=$(basename "$page" .1) &&
		LC_ALL=C.UTF-8 MANWIDTH=100 man -l "$page" >"$name.txt" 2>"$name.err" &&
		test_must_be_empty "$name.err" &&
		head -1 "$name.txt" | grep -q "^$(echo "$name" | tr a-z A-Z)(1)" &&
		for sec in NAME SYNOPSIS DESCRIPTION "SEE ALSO"
		do
			grep -q "^$sec\$" "$name.txt" || { echo "$name: no $sec"; return 1; }
		done &&
		# verbatim text (examples) is indented further than 8 columns
		! grep -n -e "^ \{0,8\}#" -e "\*\*" -e "^ \{0,8\}:   " -e "\`\`\`" "$name.txt" ||
		{ echo "$name: markdown left over"; return 1; }
	done &&
	MANPATH=$PWD/prefix/share/man man -w callprof-report | grep -q "prefix/share/man/man1/callprof-report.1" &&
	LC_ALL=C.UTF-8 MANWIDTH=100 MANPATH=$PWD/prefix/share/man man callprof-report >report.txt &&
	grep -q "^ *--lines FUNCTION\$" report.txt &&
	grep -q "^ *callprof report --lines FUNCTION " report.txt
'

# The -h lines of every option are the man page's words in short: what
# an option needs must be what the page says it needs.
test_expect_success 'report -h: --lines needs no --sample (the default records the lines)' '
	callprof report -h >help &&
	grep -e "--lines FUNCTION" help >lines-help &&
	! grep -e "recorded with --sample" lines-help &&
	grep -e "--time=cpu" lines-help &&
	! grep -i "for profiles recorded with .--sample.\.\$" "$TOP/docs/callprof-report.1.md"
'

test_expect_success 'the installed callprof finds its runtime and records' '
	build_workload s-nested.c &&
	env -u CALLPROF_LIB prefix/bin/callprof record -o inst.cprof -- ./t-nested >out &&
	prefix/bin/callprof export -f folded -m calls inst.cprof >actual &&
	test_cmp "$EXPECT/nested.calls" actual
'

test_expect_success 'a program built with the pkg-config file profiles itself' '
	PKG_CONFIG_PATH=$PWD/prefix/lib/pkgconfig &&
	export PKG_CONFIG_PATH &&
	$CC -O2 -o t-pc "$WORKLOADS/s-nested.c" $(pkg-config --cflags --libs callprof) &&
	CALLPROF_OUT=pc.cprof ./t-pc >out &&
	prefix/bin/callprof export -f folded -m calls pc.cprof >actual &&
	test_cmp "$EXPECT/nested.calls" actual
'

test_done
