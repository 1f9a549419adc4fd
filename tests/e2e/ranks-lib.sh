# ranks-lib.sh - eight generated "ranks" of one job (tests/mkprofile.c),
# for t0312 (merge, --imbalance, html) and t0562 (the tui's view).  One
# tick is one nanosecond.  Rank R spends 1000 + 10 R ns in solve (0x200),
# but rank 3 twice as much: 2000.  Rank 6 waits 5000 ns (blocked) in
# exchange (0x300): long in elapsed time, no work, so self CPU time (what
# the default weight and --imbalance rest on) leaves it alone.  Only rank
# 5 calls log (0x400).  Sourced after lib.sh.

mkprofile () {
	"$CALLPROF_BUILD/tests/mkprofile" "$@"
}

# rank_profile R: rank R's profile, rR.cprof
rank_profile () {
	r=$1
	solve=$((1000 + 10 * r))
	test $r = 3 && solve=2000
	wait=0
	test $r = 6 && wait=5000
	{
		echo "meta switches=1 duration=20000 pid=$((100 + r))"
		echo "cmd ./solver $r"
		echo "thread tid=1 name=main cpu=4000"
		echo "node ticks=$((9000 + solve + wait))"
		echo "node parent=0 fn=0x100 calls=1 ticks=$((8000 + solve + wait))"
		echo "node parent=1 fn=0x200 calls=$((r + 1)) ticks=$solve"
		echo "node parent=1 fn=0x300 calls=2 ticks=$((1000 + wait)) wait=$wait vol=2"
		test $r = 5 && echo "node parent=1 fn=0x400 calls=1 ticks=10"
	} | mkprofile r$r.cprof
}

# counting_ranks: three counting profiles (c0..c2.cprof) whose one function
# (0x100) input R calls 1 + 2 R times, merged into c.cprof
counting_ranks () {
	for r in 0 1 2
	do
		{
			echo "meta mode=1 clock=0 pid=$r"
			echo "thread tid=1 name=main"
			echo "node"
			echo "node parent=0 fn=0x100 calls=$((1 + 2 * r))"
		} | mkprofile c$r.cprof || return 1
	done &&
	callprof merge -q -o c.cprof c0.cprof c1.cprof c2.cprof
}
