#!/bin/sh
# matrix: cc-opt
test_description='several files read as one: each added and freed, one program read once'
. "$(dirname "$0")/lib.sh"

# report, export and tui of several files fold each file into the result
# and free it, and the files' symbolizers share one set of module files:
# call sites, functions and sampled lines of the processes of one program
# land at one address each (cp_symbolizer__common_addr), however many
# files.  bench/many-files-smoke checks the memory (1,500 files once took
# 1.7 GB); these check that what is shown stays what each file says.

# rows NAME <report: the rows whose name is NAME or "@ NAME", spaces squeezed.
rows () {
	awk -v name="$1" '$NF == name { $1 = $1; print }'
}

test_expect_success 'setup: two runs of one program, and a third copy' '
	build_workload s-callsites.c &&
	callprof record -o a.cprof -- ./t-callsites 15 >out &&
	callprof record -o b.cprof -- ./t-callsites 15 >out &&
	cp a.cprof c.cprof
'

# s-callsites.c: work() calls leaf() once from line 37, twice from line 39,
# three times from line 41.  Three processes: the same three sites, each
# with three times the calls (the files' addresses differ: ASLR).
test_expect_success 'call sites: one per line of the program, not one per file' '
	callprof report --srcline --fields=calls,site,name --min-percent=0 --sort=name \
		a.cprof b.cprof c.cprof >tree &&
	rows leaf <tree >actual &&
	cat >expect <<-\EOT &&
	18 (3 call sites) leaf
	3 s-callsites.c:37 @ leaf
	6 s-callsites.c:39 @ leaf
	9 s-callsites.c:41 @ leaf
	EOT
	test_cmp expect actual &&
	callprof report --callees work --fields=calls,name --sort=name a.cprof b.cprof c.cprof >callees &&
	test $(grep -c "^ *at s-callsites.c:" callees) = 3
'

test_expect_success 'functions keep their source line; json lists every process' '
	callprof export -f json -o one.json a.cprof &&
	callprof export -f json -o three.json a.cprof b.cprof c.cprof &&
	python3 - <<-\EOF
	import json
	one = json.load(open("one.json"))
	three = json.load(open("three.json"))
	assert len(three["processes"]) == 3, three["processes"]
	assert [p["file"] for p in three["processes"]] == ["a.cprof", "b.cprof", "c.cprof"]
	def where(d):
	    return {f["name"]: (f.get("file"), f.get("line")) for f in d["functions"]}
	# The other runs may have samples in code a.cprof has none in ([kernel], libc).
	w1, w3 = where(one), where(three)
	assert all(w3.get(n) == w for n, w in w1.items()), (w1, w3)
	assert w1["work"][0].endswith("s-callsites.c"), w1
	EOF
'

# Without the program, each file once warned about it (1,500 files: 1,500
# lines): the files share the set of module files, so it is said once.
test_expect_success 'a missing program is warned about once, not once per file' '
	mv t-callsites gone &&
	callprof report a.cprof b.cprof c.cprof >report 2>err &&
	mv gone t-callsites &&
	cat err &&
	test $(grep -c "cannot open .*t-callsites" err) = 1
'

# spin4 burns 100 ms of CPU time without a hook: its samples (lines) in
# each file add up, row for row, in the report of both.
test_expect_success 'report --lines of several files: each line the sum of the files'"'"' samples' '
	build_workload s-spin.c &&
	callprof record -o s1.cprof -- ./t-spin 2>err &&
	callprof record -o s2.cprof -- ./t-spin 2>err &&
	for f in s1 s2
	do
		callprof report --lines spin4 $f.cprof >$f.lines || return 1
	done &&
	callprof report --lines spin4 s1.cprof s2.cprof >both.lines &&
	awk "
		/^ *samples / { rows = 1; next }
		rows && NF >= 4 { key = \$4; for (i = 5; i <= NF && \$i != \"\"; i++) key = key \" \" \$i
			n[key] += (FILENAME == \"both.lines\") ? -\$1 : \$1 }
		END { for (k in n) if (n[k]) { print \"differs: \" k \" \" n[k]; bad = 1 }; exit bad }
	" s1.lines s2.lines both.lines &&
	s=$(sed -n "s/^spin4: \([0-9]*\) samples.*/\1/p" s1.lines) &&
	t=$(sed -n "s/^spin4: \([0-9]*\) samples.*/\1/p" s2.lines) &&
	grep "^spin4: $((s + t)) samples" both.lines
'

test_expect_success 'pprof of several files: every function in a mapping of its file' '
	callprof export -f pprof -o three.pb.gz a.cprof b.cprof c.cprof &&
	gzip -dc three.pb.gz >three.pb &&
	protoc --decode_raw <three.pb >decoded &&
	grep -q "t-callsites" decoded
'

test_done
