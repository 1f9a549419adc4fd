#!/bin/sh
test_description='a job: one profile per rank under mpirun, Slurm, MPICH and PMIx; -o patterns; never a profile replaced by one that ran meanwhile'
. "$(dirname "$0")/lib.sh"

# No launcher of the caller's may leak in: each case sets the one it means.
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_LOCAL_RANK OMPI_MCA_ess_base_jobid \
	PMI_RANK PMI_SIZE MPI_LOCALRANKID PMIX_RANK PMIX_NAMESPACE SLURM_PROCID SLURM_NTASKS \
	SLURM_NPROCS SLURM_LOCALID SLURM_JOB_ID SLURM_STEP_ID

# mpi_job NP: run the ring under mpirun with NP ranks in job-NP/, and check
# that every rank left its profile (and nothing else) with the calls the
# program itself counted, its rank, size and job id, and that the job
# printed one summary line.
mpi_job () {
	mkdir job-$1 &&
	(
		cd job-$1 &&
		mpirun --allow-run-as-root --oversubscribe -np $1 \
			callprof record --mode=counting -o ring.cprof -- ../ring >out 2>err &&
		test_line_count = $1 out &&
		grep "^callprof: wrote ring.0.cprof: .*; rank 0 of $1: the other ranks write ring.%r.cprof beside it: callprof merge -o ring.cprof ring.\*.cprof$" err &&
		grep "^callprof: wrote" err >wrote &&
		test_line_count = 1 wrote &&
		ls >files &&
		{ echo err; echo files; echo out; echo wrote; } >want &&
		r=0 && while test $r -lt $1
		do
			rr=$(printf "%0${#2}d" $r) &&
			echo ring.$rr.cprof >>want &&
			grep "^rank $r of $1: work " out >line &&
			work=$(sed "s/.*work \([0-9]*\) pass.*/\1/" line) &&
			pass=$(sed "s/.*pass \([0-9]*\)$/\1/" line) &&
			if test $r = 3; then test $work = 2000; else test $work = 1000; fi &&
			callprof export -f folded -m calls ring.$rr.cprof >calls.$r &&
			grep -x "main;work $work" calls.$r &&
			grep -x "main;pass $pass" calls.$r &&
			callprof report ring.$rr.cprof >report.$r &&
			grep "^# rank $r of $1 (job [0-9][0-9]*, Open MPI, local rank $r) on " report.$r &&
			callprof export -f json ring.$rr.cprof >json.$r &&
			grep "\"job\":{\"rank\":$r,\"size\":$1,\"local_rank\":$r,\"id\":\"[0-9]*\",\"launcher\":\"openmpi\"}" json.$r &&
			r=$((r + 1)) || return 1
		done &&
		sort want >want.sorted &&
		test_cmp want.sorted files &&
		cat report.* | sed -n "s/^# rank .*(job \([0-9]*\),.*/\1/p" | sort -u >jobs &&
		test_line_count = 1 jobs
	)
}

if command -v mpirun >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1; then
	test_expect_success 'mpirun -np 4: four profiles, each with its rank'"'"'s exact counts, one summary' '
		CALLPROF_CC=mpicc callprof cc -O2 -g -o ring "$WORKLOADS/s-ring.c" &&
		mpi_job 4 3
	'
	# Rank 3 calls work() twice as often as the others (counting mode:
	# exact calls, which load cannot move): the merged job's imbalance
	# view puts main > work first and names rank 3, from the ranks' JOB.
	test_expect_success 'the four ranks merged: --imbalance puts work first and names rank 3' '
		(
			cd job-4 &&
			callprof merge -o ../ring-4.cprof ring.*.cprof 2>merge.err
		) &&
		callprof report --imbalance ring-4.cprof >imb &&
		cat imb &&
		grep -A1 "^ *imbalance .* max-at  min-at  call path$" imb | tail -1 >first &&
		grep -E "^ +3000 +[0-9.]+ +1250\.0 +[0-9.]+ +1000 +2000 +5000 +rank 3 +rank 0 +main > work$" first &&
		callprof export -f json ring-4.cprof >imb.json &&
		python3 -c "import json, sys; d = json.load(open(sys.argv[1])); r = sorted(i[\"rank\"] for i in d[\"inputs\"]); assert r == [0, 1, 2, 3], r" imb.json
	'
	# The page and the text view agree on the real job: work first, rank 3.
	test_expect_success 'the merged job in the html page: the Imbalance tab is --imbalance'"'"'s, names rank 3' '
		{ command -v chromium >/dev/null ||
		  { echo "chromium is needed (tools/install-deps --tests)"; false; }; } &&
		npm_install &&
		callprof export -f html -o imb.html ring-4.cprof &&
		callprof report --imbalance --min-percent=0 ring-4.cprof >imb-all &&
		NODE_PATH=$NPM_DIR/node_modules node "$TEST_DIRECTORY/check-html.js" --html imb.html \
			--json imb.json --imbalance imb-all >out &&
		cat out &&
		grep "^ok - its first [0-9]* rows are report --imbalance.s, cell by cell (first: main > work, max at rank 3)$" out
	'
	# Eight ranks on two cores are the costliest job here, and their
	# processes are not sanitized: the plain pass runs it, the sanitized
	# pass (which checks callprof's own code) has -np 4 above.
	if sanitized address; then
		test_skip 'mpirun -np 8: eight profiles, the same' \
			'-np 4 covers callprof'"'"'s code under ASan; CI'"'"'s time'
	else
		test_expect_success 'mpirun -np 8: eight profiles, the same' '
			mpi_job 8 7
		'
	fi
	test_expect_success 'the same job again: each rank keeps its previous profile as .old, quietly' '
		(
			cd job-4 &&
			mpirun --allow-run-as-root --oversubscribe -np 4 \
				callprof record --mode=counting -o ring.cprof -- ../ring >out2 2>err2 &&
			grep "^callprof: wrote ring.0.cprof: .*; moved the previous ring.0.cprof to ring.0.cprof.old; rank 0 of 4" err2 &&
			grep "^callprof: wrote" err2 >wrote2 &&
			test_line_count = 1 wrote2 &&
			for r in 0 1 2 3; do test -f ring.$r.cprof.old || return 1; done
		)
	'
else
	test_skip 'mpirun -np 4: four profiles, each with its rank'"'"'s exact counts, one summary' \
		'no mpirun or mpicc (tools/install-deps --tests installs Open MPI)'
	test_skip 'the merged job in the html page: the Imbalance tab is --imbalance'"'"'s, names rank 3' \
		'no mpirun or mpicc'
	test_skip 'mpirun -np 8: eight profiles, the same' 'no mpirun or mpicc'
	test_skip 'the same job again: each rank keeps its previous profile as .old, quietly' \
		'no mpirun or mpicc'
fi

test_expect_success 'Slurm: srun'"'"'s variables name the rank and the job.step; rank 2 says nothing' '
	build_workload s-nested.c &&
	SLURM_PROCID=2 SLURM_NTASKS=4 SLURM_LOCALID=0 SLURM_JOB_ID=4711 SLURM_STEP_ID=3 \
		callprof record --mode=counting -o slurm.cprof -- ./t-nested >/dev/null 2>err &&
	test_must_be_empty err &&
	test -f slurm.2.cprof && ! test -f slurm.cprof &&
	callprof report slurm.2.cprof >report &&
	grep "^# rank 2 of 4 (job 4711.3, Slurm, local rank 0) on " report
'

test_expect_success 'MPICH/Hydra: PMI_RANK and PMI_SIZE; the rank padded to the digits of size - 1' '
	PMI_RANK=7 PMI_SIZE=12 MPI_LOCALRANKID=1 \
		callprof record --mode=counting -o hydra.cprof -- ./t-nested >/dev/null 2>err &&
	test_must_be_empty err &&
	test -f hydra.07.cprof &&
	callprof report hydra.07.cprof >report &&
	grep "^# rank 7 of 12 (MPICH, local rank 1) on " report
'

test_expect_success 'PMIx: PMIX_RANK and the namespace; rank 0 prints the job'"'"'s summary' '
	PMIX_RANK=0 PMIX_NAMESPACE=prterun-x-123@1 SLURM_NTASKS=2 \
		callprof record --mode=counting -o pmix.cprof -- ./t-nested >/dev/null 2>err &&
	grep "^callprof: wrote pmix.0.cprof: .*; rank 0 of 2: the other ranks write pmix.%r.cprof beside it: callprof merge -o pmix.cprof pmix.\*.cprof$" err &&
	callprof report pmix.0.cprof >report &&
	grep "^# rank 0 of 2 (job prterun-x-123@1, PMIx) on " report
'

test_expect_success 'a garbage rank is no rank: one warning, the name and profile without it' '
	SLURM_PROCID="1/../../x" SLURM_NTASKS=4 \
		callprof record --mode=counting -o bad.cprof -- ./t-nested >/dev/null 2>err &&
	grep "^callprof: warning: ignoring SLURM_PROCID=.1/../../x.: not a rank" err >warned &&
	test_line_count = 1 warned &&
	grep "^callprof: wrote bad.cprof: " err &&
	test -f bad.cprof &&
	callprof report bad.cprof >report &&
	! grep "^# rank" report &&
	OMPI_COMM_WORLD_RANK=5 OMPI_COMM_WORLD_SIZE=4 \
		callprof record --mode=counting -o big.cprof -- ./t-nested >/dev/null 2>err &&
	grep "^callprof: warning: ignoring OMPI_COMM_WORLD_RANK=.5.: not a rank" err &&
	test -f big.cprof
'

test_expect_success 'hostile job ids: no slash or control byte reaches a file name' '
	PMIX_RANK=1 PMIX_NAMESPACE="../../etc/x" \
		callprof record --mode=counting -o "h-%j-%r.cprof" -- ./t-nested >/dev/null 2>err &&
	test -f "h-.._.._etc_x-1.cprof" &&
	callprof report "h-.._.._etc_x-1.cprof" >report &&
	grep "^# rank 1 (job ../../etc/x, PMIx) on " report &&
	PMIX_RANK=1 PMIX_NAMESPACE="$(printf "a\033b")" \
		callprof record --mode=counting -o "c-%j.cprof" -- ./t-nested >/dev/null 2>err &&
	grep "^callprof: warning: ignoring PMIX_NAMESPACE=" err &&
	test -f c-nojob.1.cprof
'

test_expect_success 'the pattern: %r %s %h %p %j %%, and a name that has %r gets no other' '
	host=$(uname -n | sed "s/[^A-Za-z0-9._+-]/_/g") &&
	OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=10 OMPI_MCA_ess_base_jobid=99 \
		callprof record --mode=counting -o "p-%r-%s-%h-%j-%%.cprof" -- ./t-nested 2>err &&
	test -f "p-3-10-$host-99-%.cprof" &&
	callprof record --mode=counting -o "pid-%p.cprof" -- ./t-nested 2>err &&
	f=$(ls pid-*.cprof) &&
	pid=${f#pid-} && pid=${pid%.cprof} &&
	callprof report "$f" | grep "^# pid $pid," &&
	grep "^callprof: wrote $f: " err &&
	callprof record --mode=counting -o "solo-%r-of-%s.cprof" -- ./t-nested 2>err &&
	test -f solo-0-of-1.cprof &&
	OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 \
		callprof record --mode=counting -- ./t-nested 2>err &&
	test -f callprof.out.1 && ! test -f callprof.out
'

test_expect_success 'an unknown conversion is a usage error (129), nothing runs' '
	test_expect_code 129 callprof record -o "x-%x.cprof" -- ./t-nested 2>err &&
	grep "'"'"'%x'"'"' is no conversion" err &&
	test_expect_code 129 callprof record -o "x-%" -- ./t-nested 2>err &&
	! ls x-* 2>/dev/null
'

# Two runs that write one name at once: both started (each made its
# started.PID) before either may end, so they overlap whatever the order
# they end in.
both_started () {
	test "$(ls started.* 2>/dev/null | wc -l)" = 2
}
test_expect_success 'two runs at once to one name: both profiles kept, one line says where' '
	build_workload s-waitfile.c &&
	rm -f started.* go &&
	{ callprof record --mode=counting -o both.cprof -- ./t-waitfile 3 go 2>err.a & } &&
	{ callprof record --mode=counting -o both.cprof -- ./t-waitfile 4 go 2>err.b & } &&
	until_true both_started &&
	touch go &&
	wait &&
	ls both*.cprof* >files &&
	test_line_count = 2 files &&
	! grep "\.old" files &&
	cat err.a err.b >err &&
	grep "^callprof: both.cprof was written meanwhile by process [0-9]*: wrote both\.[0-9]*\.cprof$" err >said &&
	test_line_count = 1 said &&
	for f in $(cat files); do callprof export -f folded -m calls $f; done | sort >calls &&
	printf "main 1\nmain 1\nmain;step 3\nmain;step 4\n" >want &&
	test_cmp want calls
'

test_expect_success 'a run after both had ended moves the profile at the name to .old, as before' '
	callprof record --mode=counting -o both.cprof -- ./t-waitfile 5 2>err &&
	grep "^callprof: wrote both.cprof: .*; moved the previous both.cprof to both.cprof.old$" err &&
	callprof export -f folded -m calls both.cprof | grep -x "main;step 5"
'

test_done
