#!/bin/sh
test_description='names from a hostile binary: each export read by its consumer into exactly those names (issue 30)'
. "$(dirname "$0")/lib.sh"

# Issue 30 item 14: folded and callgrind wrote names raw (a newline added
# lines such as "fn=evil" or fake stacks; ';' split a frame in folded), the
# SVG passed bytes that are not UTF-8 and lone C1 bytes (xmllint refused
# it, a browser stopped drawing), plist and callgrind held raw ESC.  The
# rule: each format escapes by its own rule, and its consumer reads the
# file into exactly the names the binary has (as far as the format
# allows), each with its calls, and no forged record.  check-hostile.py
# reads each format back (tests/e2e/check-hostile.py says how); the real
# consumers read them too: callgrind_annotate, xmllint, rsvg-convert,
# chromium, protoc, python's json.

check () {
	python3 "$TEST_DIRECTORY/check-hostile.py" "$@"
}

inert () {
	python3 "$TEST_DIRECTORY/check-inert.py" "$@"
}

test_expect_success 'setup: a program whose functions have hostile names, recorded' '
	build_hostile &&
	callprof record -o h.cprof -- ./t-hostile "$(printf "th\033[2J")" >out 2>err
'

test_expect_success 'folded: one frame per name, one line per stack, calls as recorded' '
	callprof export -f folded -m calls h.cprof >h.folded &&
	inert h.folded &&
	check folded h.folded &&
	grep -qF "main;semi\\x3bcolon frame 7" h.folded &&
	callprof export -f folded -m calls --threads=each h.cprof >each.folded &&
	inert each.folded &&
	grep -qF "th\\x1b[2J;thread_main;fn=evil\\ncalls=1 1\\n0 99999 tab\\there 12" each.folded
'

test_expect_success 'callgrind: names on their fn= lines; callgrind_annotate lists no forged function' '
	callprof export -f callgrind -o h.cg h.cprof &&
	inert h.cg &&
	check callgrind h.cg &&
	callgrind_annotate --threshold=100 h.cg >annotated 2>err &&
	inert --tabs annotated &&
	check annotate annotated &&
	! grep -q "^fn=evil" h.cg
'

test_expect_success 'plist: tab-delimited records, a name never splits a field' '
	callprof export -f plist -o h.plist h.cprof &&
	inert --tabs h.plist &&
	check plist h.plist
'

test_expect_success 'svg: well-formed for xmllint, drawn by rsvg-convert, every name read back' '
	callprof export -f svg -m calls -o h.svg h.cprof &&
	inert h.svg &&
	xmllint --noout h.svg &&
	rsvg-convert -o h.png h.svg &&
	check svg h.svg
'

test_expect_success 'json and speedscope: valid UTF-8 JSON holding the names' '
	callprof export -f json -o h.json h.cprof &&
	python3 -c "import json, sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))" h.json &&
	check json h.json &&
	grep -qF "\"bad\\\\xff\\\\xfeutf8\"" h.json &&
	callprof export -f speedscope -o h.speedscope.json h.cprof &&
	check speedscope h.speedscope.json
'

test_expect_success 'pprof: protoc decodes it; its strings are UTF-8 and read back' '
	callprof export -f pprof -o h.pb.gz h.cprof &&
	gzip -dc h.pb.gz >h.pb &&
	protoc --decode=perftools.profiles.Profile --proto_path="$TEST_DIRECTORY/../../proto" \
		"$TEST_DIRECTORY/../../proto/profile.proto" <h.pb >h.pb.txt &&
	check pprof h.pb.txt
'

test_expect_success 'html: the embedded profile shows the names as report does' '
	callprof export -f html -o h.html h.cprof &&
	inert --tabs h.html &&
	check html h.html
'

test_expect_success 'svg and html in chromium: drawn whole, no page error' '
	if ! test -x /usr/bin/chromium || ! npm_install; then
		echo "# no chromium or node modules: t0290 checks the browser side"; exit 0
	fi &&
	cat >draw.js <<-\EOF &&
	const { pathToFileURL } = require("url");
	const { chromium } = require("playwright-core");
	(async () => {
		const b = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
		const p = await b.newPage(), errors = [];
		p.on("pageerror", (e) => errors.push(e.message));
		p.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
		for (const f of process.argv.slice(2)) {
			await p.goto(pathToFileURL(f).href, { waitUntil: "load" });
			const n = await p.evaluate(() => document.querySelectorAll("g > title, .nm, td.name").length);
			console.log(f + " " + n);
		}
		await b.close();
		if (errors.length) { console.log(errors.join("\n")); process.exit(1); }
	})();
	EOF
	NODE_PATH=$NPM_DIR/node_modules node draw.js h.svg >drawn &&
	frames=$(grep -c "^<g><title>" h.svg) &&
	test "$(cat drawn)" = "h.svg $frames"
'

test_done
