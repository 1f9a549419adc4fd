#!/bin/sh
test_description='export -f html: one self-contained page, shown by chromium with our numbers'
. "$(dirname "$0")/lib.sh"

# check_html ARGS...: tests/e2e/check-html.js (playwright-core driving
# Debian's chromium) on a page; it prints "ok - ..." per check, which the
# case's output keeps.  A sanitized suite leaves the browser out: what it
# checks is the page, the same bytes in both suites, and the plain suite
# runs it; the sanitized one still writes every page and every export
# (under ASan, what that suite is for) and saves a minute of chromium.
check_html () {
	if test -n "$CP_SANITIZE"; then
		echo "# browser checks: the plain suite runs them"
		return 0
	fi
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-html.js" "$@"
}

# script_data FILE: the text of the page's <script id="profile"> element.
script_data () {
	python3 - "$1" <<-\EOT
	import sys
	s = open(sys.argv[1], encoding="utf-8").read()
	start = s.index('<script type="application/json" id="profile">')
	start = s.index(">", start) + 1
	sys.stdout.write(s[start:s.index("</script>", start)])
	EOT
}

test_expect_success 'setup: chromium, playwright-core, a profile of three threads' '
	{ command -v chromium >/dev/null ||
	  { echo "chromium is needed (tools/install-deps --tests)"; false; }; } &&
	npm_install &&
	build_workload s-callsites.c &&
	callprof record -o p.cprof -- ./t-callsites 30 2 >out 2>err &&
	callprof export -f json -o p.json p.cprof &&
	callprof export -f json --threads=each -o each.json p.cprof &&
	test $(python3 -c "import json, sys; print(len(json.load(open(sys.argv[1]))[\"trees\"]))" each.json) = 3
'

test_expect_success 'html: one file; loads nothing; no name can end its script element' '
	callprof export -f html -o p.html p.cprof &&
	head -n 1 p.html | grep -q "^<!DOCTYPE html>$" &&
	test $(grep -c "<script" p.html) = 2 &&
	test $(grep -c "</script>" p.html) = 2 &&
	grep -q "Content-Security-Policy\" content=\"default-src '"'"'none'"'"'" p.html &&
	! grep -Eiq "(src|href|action) *=|url\(|@import" p.html &&
	script_data p.html >data &&
	! grep -q "<" data &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert d[\"callprof_html\"] == 2" data &&
	case "$CC" in clang*) CXX=clang++ ;; *) CXX=g++ ;; esac &&
	cc_kind "$CP_BUILD_KIND" $CXX $OPT -g -o t-cxx "$WORKLOADS/s-cxx.cc" &&
	callprof record -o cxx.cprof -- ./t-cxx >out &&
	callprof export -f html -o cxx.html cxx.cprof &&
	callprof export -f json -o cxx.json cxx.cprof &&
	grep -q "operator<" cxx.json &&
	script_data cxx.html >data &&
	! grep -q "<" data &&
	grep -q "operator\\\\u003c" data &&
	check_html --html cxx.html --json cxx.json --search "<"
'

test_expect_success 'html: zoom, search, tree, flat and callers agree with report and json' '
	callprof report --flat --fields=calls,total,self,name --sort=name p.cprof >flat &&
	callprof report --callers fib --fields=calls,name p.cprof >callers &&
	check_html --html p.html --json p.json --click fib --search FIB --regex "^f.b\$" \
		--expand main --flat flat --callers fib=callers
'

test_expect_success 'html: callees with their calls, as report --callees adds them up' '
	callprof report --callees work --fields=calls,name p.cprof >callees &&
	grep -q "at s-callsites.c:39" callees &&
	check_html --html p.html --json p.json --callees work=callees
'

test_expect_success 'html --threads=each: the thread switch shows each thread'"'"'s tree' '
	callprof export -f html --threads=each -o each.html p.cprof &&
	check_html --html each.html --json each.json --threads --click fib --search leaf
'

# A thread that sleeps while main computes: CPU time is the page's first
# weight; the switches change the view without exporting again.
test_expect_success 'html: the weight and thread switches agree with report; the layout at two sizes' '
	case "$CC" in clang*) CXX=clang++ ;; *) CXX=g++ ;; esac &&
	cc_kind "$CP_BUILD_KIND" $CXX $OPT -g -o t-longnames "$WORKLOADS/s-longnames.cc" -lpthread &&
	callprof record -o ln.cprof -- ./t-longnames 300 >out 2>err &&
	callprof export -f html -o ln.html ln.cprof &&
	callprof export -f json -o ln.json ln.cprof &&
	callprof export -f json --threads=each -o lneach.json ln.cprof &&
	test $(python3 -c "import json, sys; print(len(json.load(open(sys.argv[1]))[\"trees\"]))" lneach.json) = 2 &&
	callprof report --min-percent=0 --sort=cpu --fields=calls,cpu,cpu-percent,name ln.cprof >lnrep &&
	callprof report --min-percent=0 --threads=each --fields=calls,cpu,name ln.cprof >lneachrep &&
	script_data ln.html >data &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert d[\"weight\"] == \"cpu\" and d[\"threads_mode\"] == \"merged\" and len(d[\"trees\"]) == 1 and len(d[\"thread_trees\"]) == 2" data &&
	check_html --html ln.html --json ln.json --first cpu --metric cpu=lnrep \
		--each-json lneach.json --thread-report lneachrep --layout 24
'

# Timed per call: the Functions table has Min and Max, the widest of them.
test_expect_success 'html: long C++ names at 1400x900 and 1920x1080, Min and Max columns' '
	callprof record --time=clock -o lnc.cprof -- ./t-longnames 100 >out 2>err &&
	callprof export -f html -o lnc.html lnc.cprof &&
	callprof export -f json -o lnc.json lnc.cprof &&
	check_html --html lnc.html --json lnc.json --layout 24 --metric total=
'

test_expect_success 'svg: zoom and search by its own script; a valid, standalone picture' '
	callprof export -f svg -m total -o ln.svg ln.cprof &&
	xmllint --noout ln.svg &&
	grep -q "<script type=\"text/ecmascript\"><!\[CDATA\[" ln.svg &&
	! grep -Eiq "href|url\(|@import" ln.svg &&
	rsvg-convert -o ln.png ln.svg &&
	test -s ln.png &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-svg.js" --svg ln.svg \
		--json ln.json --weight total --click _State_impl \
		--search "Registry.*::(mix|wait)_" &&
	callprof export -f svg --icicle --threads=each -m total -o ln-icicle.svg ln.cprof &&
	xmllint --noout ln-icicle.svg &&
	NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-svg.js" --svg ln-icicle.svg \
		--json lneach.json --weight total --click t-longnames --search "^main\$|sleeper"
'

# svg_fill RE FILE: the fill of the first frame whose name RE matches.
svg_fill () {
	python3 - "$1" "$2" <<-\EOT
	import re, sys
	for m in re.finditer(r'<g><title>([^\n]*)\n.*?<rect [^>]*fill="([^"]*)"', open(sys.argv[2]).read(), re.S):
	    if re.search(sys.argv[1], m.group(1)):
	        print(m.group(2))
	        break
	EOT
}

# heat_of REGEX SVG: the hue of the first frame named REGEX and its self
# share, as its tooltip's self and total give it; fails unless the fill is
# the heat colour of that share (svg.c's scale: hue 52 yellow at a share of
# 0, 0 red at 1; saturation 75-95%, lightness 80-50%), within the rounding
# of the tooltip's figures.
heat_of () {
	python3 - "$1" "$2" <<-\EOT
	import re, sys
	unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
	for m in re.finditer(r'<g><title>([^\n]*)\n(.*?)</title>.*?<rect [^>]*fill="([^"]*)"',
	                     open(sys.argv[2]).read(), re.S):
	    if re.search(sys.argv[1], m.group(1)):
	        t = re.search(r'total ([0-9.]+)(ns|us|ms|s), self ([0-9.]+)(ns|us|ms|s)', m.group(2))
	        share = float(t.group(3)) * unit[t.group(4)] / (float(t.group(1)) * unit[t.group(2)])
	        share = min(max(share, 0.0), 1.0)
	        h, sat, light = map(int, re.match(r"hsl\((\d+),(\d+)%,(\d+)%\)$", m.group(3)).groups())
	        print(h, "%.3f" % share, m.group(3))
	        want = (52 * (1 - share), 75 + 20 * share, 80 - 30 * share)
	        sys.exit(any(abs(g - w) > 0.6 for g, w in zip((h, sat, light), want)))
	sys.exit(1)
	EOT
}

test_expect_success 'svg: colours by self share (heat) by default, by module on request' '
	svg_fill mix_one_value ln.svg >leaf &&
	heat_of mix_one_value ln.svg >leafheat &&
	heat_of "^main\$" ln.svg >mainheat &&
	cat leafheat mainheat &&
	# Each frame has the colour of its own share (a loaded machine moves
	# the shares: time sampled in the kernel under the leaf is not its
	# own): the leaf, which calls nothing, mostly its own, redder than
	# main, whose time is in what it calls.
	read leafhue share fill <leafheat &&
	awk -v s="$share" "BEGIN { exit !(s >= 0.5) }" &&
	read mainhue share fill <mainheat &&
	awk -v s="$share" "BEGIN { exit !(s < 0.1) }" &&
	test "$leafhue" -lt "$mainhue" &&
	grep -q "colour: self share" ln.svg &&
	callprof export -f svg -m total --colors=module -o lnm.svg ln.cprof &&
	grep -q "colour: module" lnm.svg &&
	svg_fill mix_one_value lnm.svg >mleaf &&
	! test_cmp leaf mleaf &&
	test_expect_code 129 callprof export -f html --colors=heat ln.cprof 2>err &&
	grep -q "colors is for -f svg only" err &&
	test_expect_code 129 callprof export -f svg --colors=rainbow ln.cprof 2>err
'

test_expect_success 'html: a counting profile (no times) and an empty one render' '
	callprof record --mode=counting -o c.cprof -- ./t-callsites 30 2 >out 2>err &&
	callprof export -f html -o c.html c.cprof &&
	callprof export -f json -o c.json c.cprof &&
	callprof report --flat --fields=calls,name --sort=name c.cprof >cflat &&
	callprof report --callers leaf --fields=calls,name c.cprof >ccallers &&
	check_html --html c.html --json c.json --click fib --search leaf --expand main \
		--flat cflat --callers leaf=ccallers &&
	# A program that ran no instrumented code writes no profile: an empty
	# one is a run whose selection left every call out.  Timed by the
	# clock: a CPU sample landing at start-up would give the root a child.
	callprof record --time=clock --exclude-tree "*" -o e.cprof -- ./t-callsites 1 >out 2>err &&
	grep "no call was recorded" err &&
	callprof export -f html -o e.html e.cprof &&
	callprof export -f json -o e.json e.cprof &&
	check_html --html e.html --json e.json --empty
'

# Timed per call (--time=clock), so that every one of the contexts has a
# width for the zoom to bring out: sampled CPU time would leave all but a
# few of them at 0 (the cpu-mode page is p.html, above).
test_expect_success 'html: 22,222 contexts: narrow frames left out, drawn after a zoom' '
	build_workload s-manypaths.c &&
	callprof record --time=clock -o big.cprof -- ./t-manypaths 4 >out 2>err &&
	callprof export -f html -o big.html big.cprof &&
	callprof export -f json -o big.json big.cprof &&
	ls -l big.html &&
	check_html --html big.html --json big.json --big --search f3 --click f3
'

# The picture `make check` leaves for people to look at (not committed),
# beside tests/demo-pictures' SVG graphs.
test_expect_success 'html: the demo as a page and a picture in the build directory' '
	$CC -O1 -g -finstrument-functions -o demo "$TOP_DIRECTORY/examples/demo.c" -lpthread &&
	callprof record -o demo.cprof -- ./demo >out 2>err &&
	callprof export -f json -o demo.json demo.cprof &&
	mkdir -p "$CALLPROF_BUILD/demo" &&
	callprof export -f html -o "$CALLPROF_BUILD/demo/demo.html" demo.cprof &&
	check_html --html "$CALLPROF_BUILD/demo/demo.html" --json demo.json --search word \
		--open 3 --select parse_text --screenshot "$CALLPROF_BUILD/demo/demo-html.png" &&
	# the browser takes the screenshot: not in a sanitized suite (check_html)
	{ test -n "$CP_SANITIZE" || test -s "$CALLPROF_BUILD/demo/demo-html.png"; }
'

test_expect_success 'html: usage' '
	callprof export -h >help &&
	grep -q "callprof export -f html \[-m METRIC\] \[-o OUT\]" help &&
	test_expect_code 129 callprof export -f html --icicle p.cprof 2>err &&
	grep -q "icicle.*svg only" err &&
	test_expect_code 1 callprof export -f html -o no/such/dir/p.html p.cprof 2>err &&
	! test -e no
'

test_done
