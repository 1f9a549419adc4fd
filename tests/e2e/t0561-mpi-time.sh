#!/bin/sh
test_description='time inside MPI: a rank that polls shows CPU time under the call that made the MPI call, one that sleeps shows wait there'
. "$(dirname "$0")/lib.sh"

# The ranks and the runtime in them are built as a user's (mpicc, no
# sanitizer): the sanitized pass would only run the same jobs again, at
# a cost CI's time limit does not leave room for.
test_skip_sanitized address 'the job is not sanitized (mpicc builds it as a user would); the plain pass checks it'

# No launcher of the caller's may leak in.
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_LOCAL_RANK OMPI_MCA_ess_base_jobid \
	PMI_RANK PMI_SIZE PMIX_RANK PMIX_NAMESPACE SLURM_PROCID SLURM_NTASKS OMPI_MCA_mpi_yield_when_idle

OFF="python3 $TEST_DIRECTORY/check-offcpu.py"
MPI="python3 $TEST_DIRECTORY/check-mpitime.py"
OPENMPI_LIBS='libmpi\.so|libopen-pal\.so|openmpi'

# job DIR YIELD: s-mpiwait under mpirun -np 4, Open MPI told to poll
# (mpi_yield_when_idle 0) or to yield the CPU while it polls (1); each
# rank's profile exported to DIR/R.json.  Rank 3 works 100 times longer than
# the others in work(), twice: before sync_ranks (MPI_Barrier), where the
# others poll, and before finish (MPI_Finalize), where Open MPI 4.1 waits
# in its run-time's fence by sleeping 100 us at a time.
job () {
	mkdir "$1" &&
	(
		cd "$1" &&
		OMPI_MCA_mpi_yield_when_idle=$2 mpirun --allow-run-as-root --oversubscribe -np 4 \
			-x OMPI_MCA_mpi_yield_when_idle \
			callprof record -o w.cprof -- ../mpiwait >out 2>err &&
		test_line_count = 4 out &&
		for r in 0 1 2 3
		do
			callprof export -f json w.$r.cprof >$r.json || return 1
		done
	)
}

if command -v mpirun >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1; then
	test_expect_success 'setup: the job, Open MPI polling' '
		CALLPROF_CC=mpicc callprof cc -O2 -g -o mpiwait "$WORKLOADS/s-mpiwait.c" &&
		job spin 0
	'

	# Polling never blocks: of the time sync_ranks was not preempted (the
	# machine's load), next to none is wait; its CPU time dwarfs the
	# rank's own work and is sampled in Open MPI's code below it
	# (opal_progress).
	test_expect_success 'a rank that polls in MPI_Barrier: CPU time under main > sync_ranks, in Open MPI' '
		for r in 0 1 2
		do
			$OFF split spin/$r.json sync_ranks wait_ns 0 0.10 &&
			$MPI cpu spin/$r.json sync_ranks 0.80 work &&
			$MPI libchild spin/$r.json sync_ranks "$OPENMPI_LIBS" || return 1
		done
	'

	test_expect_success 'the rank they wait for spends its CPU in work' '
		$MPI cpu spin/3.json work 0.50 sync_ranks finish
	'

	# MPI_Finalize sleeps: thousands of switches with no hook between,
	# more than a ring holds.  Every rank's time is main'"'"'s (the dropped
	# switch records once put the rest in the thread'"'"'s root), a waiting
	# rank is blocked for much of the time finish was not preempted, and
	# more than rank 3, which has no one to wait for.
	test_expect_success 'a rank that sleeps in MPI_Finalize: wait under main > finish' '
		for r in 0 1 2 3
		do
			$OFF whole spin/$r.json main 0.95 &&
			$OFF sums spin/$r.json || return 1
		done &&
		for r in 0 1 2
		do
			$OFF split spin/$r.json finish wait_ns 0.30 1.0 || return 1
		done &&
		w3=$($MPI wait spin/3.json finish) &&
		w=$(( ($($MPI wait spin/0.json finish) + $($MPI wait spin/1.json finish) +
			$($MPI wait spin/2.json finish)) / 3 )) &&
		echo "finish: waiting ranks $w ns of wait on average, rank 3 $w3 ns" &&
		test "$w" -gt "$w3"
	'

	# Yielding (Open MPI'"'"'s default on an oversubscribed node): sched_yield
	# leaves the thread runnable, so its time off the CPU is inactive (or,
	# on an idle machine, none), never wait.
	test_expect_success 'a rank that yields in MPI_Barrier shows no wait there' '
		job yield 1 &&
		for r in 0 1 2
		do
			$OFF split yield/$r.json sync_ranks wait_ns 0 0.10 &&
			$OFF whole yield/$r.json main 0.95 || return 1
		done
	'
else
	for t in 'setup: the job, Open MPI polling' \
		'a rank that polls in MPI_Barrier: CPU time under main > sync_ranks, in Open MPI' \
		'the rank they wait for spends its CPU in work' \
		'a rank that sleeps in MPI_Finalize: wait under main > finish' \
		'a rank that yields in MPI_Barrier shows no wait there'
	do
		test_skip "$t" 'no mpirun or mpicc (tools/install-deps --tests installs Open MPI)'
	done
fi

test_done
