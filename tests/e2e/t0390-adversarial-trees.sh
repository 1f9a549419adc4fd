#!/bin/sh
test_description='adversarial but valid profiles: every command finishes, without recursion or quadratic work'
. "$(dirname "$0")/lib.sh"

# Profiles made by tests/mkprofile from generated descriptions: a chain of
# 100,000 nested contexts, 100,000 siblings under one root, 100,000 threads
# each with a name of its own (labels were once made by comparing every
# pair of names), and 100,000 named regions whose ids run backwards (a
# lookup by walking would make loading quadratic): quadratic work is some
# 10^10 steps.  Each command must finish under a generous timeout and exit
# 0; durations are not asserted.
#
# The commands run with a stack of 1 MB (ulimit -s): recursion over the
# chain would take 100,000 frames, 1.6 MB at the least (16 bytes, a return
# address and alignment), and die.  A small stack makes a short chain as
# hostile as a long one: the chain was once 1,000,000 contexts and the
# siblings 300,000, which cost this script over two minutes of CPU time,
# and four under ASan (600 s and more on a loaded machine: its timeout),
# mostly in printing a million lines per command.
#
# folded, pprof and plist write one line or sample per calling context
# with its whole path: their output is the sum of all depths, quadratic in
# a chain by definition (docs/limitations.md), so they get a chain of
# 2,000 instead.  Per-thread callgrind writes a file per thread: 10,000
# threads for it, not 100,000 (the file system's cost, not callprof's).
#
# A sanitized suite runs a tenth of each (scale, lib.sh): the plain suite
# holds the claim (no recursion, nothing quadratic) at full size; ASan's
# pass looks for memory errors on the same code, which a tenth reaches.
N=$(scale 100000 10000)
NT=$(scale 10000 1000)

mkprofile () {
	"$CALLPROF_BUILD/tests/mkprofile" "$@"
}

# run FILE CMD...: callprof CMD... FILE finishes within the limit, exit 0.
run () {
	_f=$1 &&
	shift &&
	echo "callprof $* $_f" &&
	(ulimit -s 1024 && exec timeout 600 "$CALLPROF_BUILD/callprof" "$@" "$_f") >out 2>err
	_status=$?
	test $_status = 124 && echo "timed out: callprof $* $_f"
	test $_status -gt 128 && echo "died by signal $((_status - 128)): callprof $* $_f"
	test $_status = 0 || { cat err; return 1; }
}

chain () {
	awk -v n="$1" 'BEGIN {
		print "meta"; print "thread"; print "node calls=1 ticks=1000000"
		for (i = 0; i < n; i++)
			printf "node parent=%d fn=%d calls=1 ticks=1000000\n", i, 4096 + 16 * (i % 50)
	}'
}

# threads N: N threads, each with a name of its own.
threads () {
	awk -v n="$1" 'BEGIN {
		print "meta"
		for (t = 0; t < n; t++) {
			printf "thread tid=%d name=t%d\n", t + 1, t
			print "node calls=1 ticks=10"
			printf "node parent=0 fn=%d calls=1 ticks=5\n", 4096 + 16 * (t % 100)
		}
	}'
}

test_expect_success 'setup: the adversarial profiles' '
	chain $N | mkprofile deep.cprof &&
	chain 2000 | mkprofile chain2k.cprof &&
	awk -v n=$N "BEGIN {
		print \"meta\"; print \"thread\"; print \"node calls=1 ticks=1000000\"
		for (i = 0; i < n; i++)
			printf \"node parent=0 fn=%d calls=1 ticks=1\n\", 4096 + 16 * i
	}" | mkprofile wide.cprof &&
	threads $N | mkprofile threads.cprof &&
	threads $NT | mkprofile threads10k.cprof &&
	awk -v n=$N "BEGIN {
		print \"meta\"
		for (i = 0; i < n; i++)
			printf \"region id=%d name=r%d\n\", 3 * (n - i), i
		print \"thread\"; print \"node calls=1 ticks=10\"
		for (i = 0; i < n; i++)
			printf \"node parent=0 fn=%d flags=4 calls=1 ticks=1\n\", 3 * (i + 1)
	}" | mkprofile regions.cprof
'

for f in deep wide threads regions
do
	fn=[unknown]+0x1000 focus=*0x1010 hide=*0x1020
	test $f = regions && fn=[r7] focus=?r7? hide=?r8?
	test_expect_success "$f: every report view finishes" "
		run $f.cprof report --min-percent=0 &&
		run $f.cprof report --flat &&
		run $f.cprof report --plist &&
		run $f.cprof report --threads=each &&
		run $f.cprof report --callers=$fn &&
		run $f.cprof report --callees=$fn &&
		run $f.cprof report --focus=$focus --hide=$hide
	"
	test_expect_success "$f: every linear export finishes" "
		for fmt in json callgrind speedscope svg html
		do
			run $f.cprof export -f \$fmt -o out.\$fmt || return 1
		done &&
		if test $f = threads
		then
			run threads10k.cprof export -f callgrind --threads=each -o cg
		else
			run $f.cprof export -f callgrind --threads=each -o cg
		fi &&
		rm -f out.* cg-*
	"
	test_expect_success "$f: diff with itself and merge finish" "
		run $f.cprof diff $f.cprof &&
		run $f.cprof merge -q -o merged.cprof &&
		run merged.cprof report --flat
	"
done

test_expect_success 'regions: the names are found whatever the order of their ids' '
	"$CALLPROF_BUILD/callprof" report --flat --fields=calls,name regions.cprof >flat &&
	grep -q "^ *1  \[r0\]$" flat &&
	grep -q "^ *1  \[r$((N - 1))\]$" flat
'

for f in chain2k wide threads regions
do
	test_expect_success "$f: the per-path exports finish" "
		run $f.cprof export -f folded -m calls -o out.folded &&
		run $f.cprof export -f pprof -o out.pprof &&
		run $f.cprof export -f plist -o out.plist &&
		rm -f out.*
	"
done

test_done
