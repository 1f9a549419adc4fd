/*
 * s-mpiwait.c - an MPI job whose ranks wait for rank 3: every rank calls
 * work(), rank 3 with argv[1] times (default 100) the others' amount, then
 * all meet in sync_ranks() (MPI_Barrier: Open MPI polls there); rank 3 then
 * works that long again while the others go on to finish() (MPI_Finalize:
 * Open MPI 4.1 waits there in its run-time's fence, which sleeps).  The
 * time the other ranks lose to rank 3 is spent inside MPI, under
 * sync_ranks and finish.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define UNIT 4000000UL	/* work()'s steps per unit: about 1.5 ms of CPU */

static volatile unsigned long sink;

__attribute__((noinline)) void work(unsigned long units)
{
	for (unsigned long i = 0; i < units * UNIT; i++)
		sink += i * 2654435761u;
}

__attribute__((noinline)) void sync_ranks(void)
{
	MPI_Barrier(MPI_COMM_WORLD);
}

__attribute__((noinline)) void finish(void)
{
	MPI_Finalize();
}

int main(int argc, char **argv)
{
	unsigned long factor = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	work(rank == 3 ? factor : 1);
	sync_ranks();
	if (rank == 3)
		work(factor);
	printf("rank %d of %d\n", rank, size);
	fflush(stdout);
	finish();
	return 0;
}
