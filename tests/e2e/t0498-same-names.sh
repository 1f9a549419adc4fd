#!/bin/sh
# matrix: cc-opt
test_description='copies of one source function are one function; different functions of one name are told apart by file'
. "$(dirname "$0")/lib.sh"

# Rows with calls (not code sampled by chance, "-", nor the headings of
# call-site groups), as "CALLS NAME".
calls () {
	awk '$1 ~ /^[0-9]+$/' | sed "s/^ *//; s/  */ /"
}

test_expect_success 'setup: a static function of a header in three files, a static helper in two' '
	build_workload s-copies.c "$WORKLOADS/s-copies-a.c" "$WORKLOADS/s-copies-b.c" &&
	test $(nm t-copies | grep -c " little_endian$") = 3 &&
	test $(nm t-copies | grep -c " helper$") = 2 &&
	callprof record -o p.cprof -- ./t-copies >out
'

test_expect_success '--flat: one row for the copies, a row per helper naming its file' '
	callprof report --flat --sort=name --fields=calls,name p.cprof | grep -v "^#" | calls >actual &&
	cat >expect <<-\EOF &&
	1 copies_a
	1 copies_b
	3 helper (s-copies-a.c)
	2 helper (s-copies-b.c)
	8 little_endian
	1 main
	EOF
	test_cmp expect actual
'

test_expect_success '--callers and --callees: the copies together, the helpers apart' '
	callprof report --callers little_endian --sort=name --fields=calls,name p.cprof |
		grep -v "^#" | calls >actual &&
	cat >expect <<-\EOF &&
	8 little_endian
	3 <- copies_a
	2 <- copies_b
	3 <- main
	EOF
	test_cmp expect actual &&
	callprof report --callees copies_b --sort=name --fields=calls,name p.cprof |
		grep -v "^#" | calls | sort >actual &&
	cat >expect <<-\EOF &&
	1 copies_b
	2 -> helper (s-copies-b.c)
	2 -> little_endian
	EOF
	test_cmp expect actual &&
	callprof report --callers "helper (s-copies-a.c)" --fields=calls,name p.cprof |
		grep -v "^#" | calls >actual &&
	printf "%s\n" "3 helper (s-copies-a.c)" "3 <- copies_a" >expect &&
	test_cmp expect actual &&
	callprof report --callers helper --sort=name --fields=calls,name p.cprof |
		grep -v "^#" | calls >actual &&
	grep -q "^3 <- copies_a$" actual &&
	grep -q "^2 <- copies_b$" actual
'

test_expect_success 'exports: one function for the copies in json, callgrind and folded' '
	callprof export -f json -o p.json p.cprof &&
	python3 - p.json <<-\EOT &&
	import json, sys
	fns = [f["name"] for f in json.load(open(sys.argv[1]))["functions"]]
	assert fns.count("little_endian") == 1, fns
	assert "helper (s-copies-a.c)" in fns and "helper (s-copies-b.c)" in fns, fns
	assert "helper" not in fns, fns
	EOT
	callprof export -f callgrind -o p.callgrind p.cprof &&
	test $(grep -c "^c\{0,1\}fn=([0-9]*) little_endian$" p.callgrind) = 1 &&
	callprof export -f folded -m calls p.cprof >folded &&
	grep -q "^main;copies_a;helper (s-copies-a.c) 3$" folded &&
	grep -q "^main;copies_b;little_endian 2$" folded &&
	test $(grep -c "little_endian" folded) = 3
'

test_expect_success '--focus and --hide match the name without its file' '
	callprof report --focus helper --min-percent=0 --fields=calls,name p.cprof >focus &&
	grep -q "helper (s-copies-a.c)$" focus &&
	grep -q "helper (s-copies-b.c)$" focus &&
	callprof report --hide "helper*" --min-percent=0 --fields=calls,name p.cprof >hide &&
	! grep -q helper hide
'

test_expect_success '--addresses shows each copy at its address' '
	callprof report --flat --addresses --fields=calls,name p.cprof >addr &&
	test $(grep -c " little_endian \[t-copies+0x[0-9a-f]*\]$" addr) = 3
'

test_done
