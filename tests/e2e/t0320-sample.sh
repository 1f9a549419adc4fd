#!/bin/sh
# matrix: cc-opt
test_description='record --sample: programs that are not instrumented, sampled into the same profile'
. "$(dirname "$0")/lib.sh"

# Sampling is statistical and the machine is shared: every number below is
# checked against wide bounds, never a value.  s-sample's hot path does 4 of
# its 5 units of work (80%).

# The sampled path that ends in FN, from main on ("main;run;hot"), of a folded export.
path_from_main () {
	sed 's/ [0-9]*$//' | grep "\(^\|;\)$1\$" | sed -n 's/^\(.*;\)\{0,1\}main;/main;/p' | sort -u
}

# Percentage (integer) of the samples whose stack holds FN, of a folded -m calls export.
share_of () {
	awk -v fn="$1" '
	{
		i = match($0, / [0-9]+$/)
		path = substr($0, 1, i - 1); v = substr($0, i + 1) + 0
		if (path !~ /;/) total += v	# outermost frames: every sample once
		n = split(path, f, ";")
		if (f[n] == fn) hot += v	# the path ending in fn, once per sample
	}
	END { if (total) printf "%d\n", 100 * hot / total; else print -1 }'
}

# META of a profile as "field value" lines (docs/profile-format.md).
meta_of () {
	python3 - "$1" <<-\EOT
	import struct, sys
	data = open(sys.argv[1], "rb").read()
	nsec = struct.unpack_from("<I", data, 20)[0]
	sec = {}
	for i in range(nsec):
	    kind, entsize, off, size = struct.unpack_from("<IIQQ", data, 48 + 24 * i)
	    sec[kind] = (entsize, off, size)
	_, off, _ = sec[2]
	pid, ppid, mode, clock, tps = struct.unpack_from("<IIIIQ", data, off)
	hz, = struct.unpack_from("<I", data, off + 140)
	period, samples, lost, flags = struct.unpack_from("<QQQI", data, off + 144)
	overhead, = struct.unpack_from("<Q", data, off + 40)
	print("mode", mode); print("clock", clock); print("tps", tps); print("hz", hz)
	print("samples", samples); print("lost", lost); print("flags", flags)
	print("overhead", overhead); print("period", period)
	# threads: root calls = samples, root ticks = cpu_ns; min/max 0 everywhere
	te, toff, tsize = sec[5]
	ne, noff, nsize = sec[6]
	total = 0
	for t in range(tsize // te):
	    tid, name, first, n = struct.unpack_from("<IIII", data, toff + t * te)
	    cpu, = struct.unpack_from("<Q", data, toff + t * te + 56)
	    calls, ticks, mn, mx = struct.unpack_from("<QQQQ", data, noff + first * ne + 24)
	    assert ticks == cpu, (tid, ticks, cpu)
	    total += calls
	    for k in range(n):
	        mn, mx = struct.unpack_from("<QQ", data, noff + (first + k) * ne + 40)
	        assert mn == 0 and mx == 0
	print("root_calls", total)
	print("lines", sec[11][2] // sec[11][0] if 11 in sec else 0)
	EOT
}

test_expect_success 'setup: s-sample without hooks (DWARF and frame-pointer builds) and with' '
	$CC $OPT -g -Wall -o u-sample "$WORKLOADS/s-sample.c" -lpthread &&
	$CC $OPT -g -Wall -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-o u-sample-fp "$WORKLOADS/s-sample.c" -lpthread &&
	build_workload s-sample.c &&
	callprof record -o exact.cprof -- ./t-sample 2>/dev/null &&
	callprof export -f folded -m calls exact.cprof >exact.calls &&
	path_from_main hot <exact.calls >exact.hot &&
	echo "main;run;hot" >expect && test_cmp expect exact.hot
'

test_expect_success 'DWARF: the hot function holds 65-95% of the samples' '
	callprof record --sample -o dw.cprof -- ./u-sample 2>err &&
	grep "^callprof: wrote dw.cprof: 1 thread, [0-9]* samples at 997 Hz (sampled, unwound with DWARF CFI), [0-9]* lost$" err &&
	callprof export -f folded -m calls dw.cprof >dw.calls &&
	share=$(share_of hot <dw.calls) &&
	echo "hot: $share%" &&
	test "$share" -ge 65 && test "$share" -le 95
'

test_expect_success 'DWARF: the hot call path is the instrumented build'"'"'s' '
	path_from_main hot <dw.calls >dw.hot &&
	test_cmp exact.hot dw.hot &&
	grep "^\(.*;\)\{0,1\}main;run;hot;crunch [0-9]*$" dw.calls &&
	grep "^\(.*;\)\{0,1\}main;run;cold;crunch [0-9]*$" dw.calls
'

test_expect_success 'DWARF: META and the trees follow the format (sampled, ns, roots)' '
	meta_of dw.cprof >meta &&
	cat meta &&
	grep -x "mode 3" meta && grep -x "clock 2" meta && grep -x "tps 1000000000" meta &&
	grep -x "hz 997" meta && grep -x "flags 2" meta && grep -x "overhead 0" meta &&
	samples=$(sed -n "s/^samples //p" meta) &&
	test "$samples" -gt 100 &&
	grep -x "root_calls $samples" meta &&
	period=$(sed -n "s/^period //p" meta) &&
	test "$period" -gt 100000 && test "$period" -lt 10000000 &&
	test "$(sed -n "s/^lines //p" meta)" -gt 0
'

test_expect_success 'frame pointers: the same share and the same hot path' '
	callprof record --sample=499 --call-graph=fp -o fp.cprof -- ./u-sample-fp 2>err &&
	grep "(sampled, unwound with frame pointers)" err &&
	meta_of fp.cprof >meta && grep -x "flags 1" meta && grep -x "hz 499" meta &&
	callprof export -f folded -m calls fp.cprof >fp.calls &&
	share=$(share_of hot <fp.calls) &&
	echo "hot: $share%" &&
	test "$share" -ge 65 && test "$share" -le 95 &&
	path_from_main hot <fp.calls >fp.hot &&
	test_cmp exact.hot fp.hot
'

test_expect_success 'report, flat view and exports read a sampled profile' '
	callprof report dw.cprof >report &&
	grep "^ *[0-9].*  hot$" report &&
	callprof report --flat dw.cprof >flat &&
	grep "crunch$" flat &&
	callprof export -f json dw.cprof >j &&
	python3 -c "import json; json.load(open(\"j\"))"
'

test_expect_success 'threads: each gets its own tree with its own samples' '
	callprof record --sample -o th.cprof -- ./u-sample threads 2>err &&
	grep "^callprof: wrote th.cprof: 3 threads, " err &&
	callprof export -f folded -m calls --threads=each th.cprof >th.calls &&
	a=$(sed -n "s/^spin-a;.*;spin_a;crunch \([0-9]*\)$/\1/p" th.calls) &&
	b=$(sed -n "s/^spin-b;.*;spin_b;crunch \([0-9]*\)$/\1/p" th.calls) &&
	echo "spin-a $a, spin-b $b" &&
	test "$b" -gt 10 && test "$a" -gt $((b * 3 / 2)) &&
	! grep "^spin-a;.*spin_b" th.calls &&
	! grep "^spin-b;.*spin_a" th.calls
'

test_expect_success 'fork: the child writes PATH.PID with its own samples' '
	callprof record --sample -o fk.cprof -- ./u-sample fork 2>err &&
	cat err &&
	grep "^callprof: other processes of the run wrote 1 profile: fk.cprof.[0-9]* (pid [0-9]* ./u-sample)$" err &&
	child=$(ls fk.cprof.*) &&
	callprof export -f folded -m calls fk.cprof >parent.calls &&
	callprof export -f folded -m calls $child >child.calls &&
	grep ";main;forks;in_parent;crunch [0-9]*$" parent.calls &&
	! grep "in_child" parent.calls &&
	grep ";main;forks;in_child;crunch [0-9]*$" child.calls &&
	! grep "in_parent" child.calls &&
	meta_of $child >meta && grep -x "mode 3" meta
'

test_expect_success 'exit status, standard streams and signals pass through' '
	echo hello >in &&
	test_expect_code 7 callprof record --sample -o sh.cprof -- sh -c "cat; exit 7" <in >out 2>err &&
	test_cmp in out &&
	grep "^callprof: wrote sh.cprof: " err &&
	test_expect_code 143 command callprof record --sample -o kill.cprof -- sh -c "kill -TERM \$\$" 2>err
'

test_expect_success 'an instrumented program keeps its exact tree and gets CALLPROF_SAMPLE' '
	callprof record --sample=499 -o env.cprof -- ./t-sample env >out 2>err &&
	echo "CALLPROF_SAMPLE=499" >expect &&
	test_cmp expect out &&
	callprof record --sample -o hy.cprof -- ./t-sample 2>/dev/null &&
	callprof export -f folded -m calls hy.cprof >hy.calls &&
	test_cmp exact.calls hy.calls &&
	./u-sample env >out &&
	echo "CALLPROF_SAMPLE=unset" >expect &&
	test_cmp expect out
'

test_expect_success 'perf_event_open blocked (seccomp): one line, no run, no file' '
	$CC -O2 -Wall -o noperf "$WORKLOADS/s-noperf.c" &&
	test_expect_code 1 ./noperf callprof record --sample -o np.cprof -- sh -c "touch ran" 2>err &&
	cat err &&
	if test "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 && test "$(id -u)" != 0
	then
		echo "callprof: error: cannot sample '"'"'sh'"'"': perf_event_open: Operation not permitted (kernel.perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid)); allow it with '"'"'sysctl kernel.perf_event_paranoid=2'"'"'" >expect
	else
		echo "callprof: error: cannot sample '"'"'sh'"'"': perf_event_open: Operation not permitted, though kernel.perf_event_paranoid allows it: a seccomp filter (container?) blocks the system call; allow perf_event_open or use an instrumented build" >expect
	fi &&
	test_cmp expect err &&
	test_path_is_missing ran &&
	ls >files &&
	! grep "^np.cprof" files
'

test_expect_success 'bad --sample and --call-graph values are usage errors' '
	test_expect_code 129 callprof record --sample=0 -- ./u-sample 2>err &&
	grep "^callprof: error: --sample wants a rate from 1 to [0-9]* Hz, not .0." err &&
	test_expect_code 129 callprof record --sample=fast -- ./u-sample 2>err &&
	test_expect_code 129 callprof record --sample --call-graph=lbr -- ./u-sample 2>err &&
	grep "does not take .lbr." err &&
	test_expect_code 129 callprof record --call-graph=fp -- ./u-sample 2>err &&
	grep "^callprof: error: --call-graph needs --sample" err
'

test_expect_success 'a missing program: the same message with --sample as without' '
	test_expect_code 127 callprof record -o m1.cprof -- ./no-such-program 2>err1 &&
	test_expect_code 127 callprof record --sample -o m2.cprof -- ./no-such-program 2>err2 &&
	test_cmp err1 err2 &&
	test_path_is_missing m2.cprof
'

# Programs of the system: once, not per compiler setting.
if test "$CC$OPT" = gcc-O2
then
	# main is one of the first four frames, and liblzma code runs below it.
	test_expect_success 'Debian xz (stripped): main near the root, liblzma below it' '
		test -x /usr/bin/xz &&
		head -c 3000000 /dev/urandom | base64 >data &&
		callprof record --sample -o xz.cprof -- /usr/bin/xz -k -6 data 2>err &&
		cat err &&
		callprof export -f folded -m calls xz.cprof >xz.calls &&
		awk -F";" "{ for (i = 1; i <= 4 && i <= NF; i++) if (\$i == \"main\") { print; next } }" xz.calls >main-paths &&
		test -s main-paths &&
		grep "^\([^;]*;\)\{0,3\}main;.*\(lzma_code\|liblzma\.so\.5[^;]*+0x[0-9a-f]*\)" main-paths >lzma &&
		share=$(awk "{ n = \$NF } /main;[^;]*;lzma_code [0-9]*$/ { s += n } END { printf \"%.0f\\n\", s }" xz.calls) &&
		echo "lzma_code: $share samples" && test "$share" -gt 100
	'

	# CPython's main tail-calls Py_BytesMain, whose frame then stands for it.
	test_expect_success 'python3 (not instrumented): the interpreter below its main' '
		py=$(python3 -c "import sys; print(sys.executable)") &&
		callprof record --sample -o py.cprof -- "$py" -c "
x = 0
for i in range(2000000): x += i * i" 2>err &&
		cat err &&
		callprof export -f folded -m calls py.cprof >py.calls &&
		grep "\(^\|;\)\(main\|Py_BytesMain\);.*_PyEval_EvalFrameDefault\(;\| \)" py.calls
	'
fi

test_done
