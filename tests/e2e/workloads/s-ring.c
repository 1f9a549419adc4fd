/*
 * s-ring.c - a small imbalanced MPI job: a token goes round the ring of
 * ranks ROUNDS times, and between passes every rank calls work() WORK
 * times, rank 3 twice as often.  Each rank prints how often it called
 * work(), for the test to hold its profile's exact count against.
 */
#include <mpi.h>
#include <stdio.h>

#define ROUNDS 5
#define WORK 200

static volatile unsigned long sink;

__attribute__((noinline)) void work(int i)
{
	sink += (unsigned long)i * 2654435761u;
}

__attribute__((noinline)) static int pass(int rank, int size, int token)
{
	if (rank == 0) {
		MPI_Send(&token, 1, MPI_INT, 1 % size, 0, MPI_COMM_WORLD);
		MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		token++;
		MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
	}
	return token;
}

int main(int argc, char **argv)
{
	int rank, size, token = 0, calls = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int r = 0; r < ROUNDS; r++) {
		int n = rank == 3 ? 2 * WORK : WORK;

		for (int i = 0; i < n; i++, calls++)
			work(i);
		token = pass(rank, size, token);
	}
	printf("rank %d of %d: work %d pass %d\n", rank, size, calls, ROUNDS);
	MPI_Finalize();
	return 0;
}
