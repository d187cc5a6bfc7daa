/*
 * abort.c - MPI_Abort ends the whole job with the given error code.
 *
 * Rank 1 (rank 0 with 1 rank) calls MPI_Abort(MPI_COMM_WORLD, 5); the other
 * ranks wait in MPI_Barrier, which can never complete.  Expected (testlist):
 * exit code 5 (and a message naming the rank, from the runtime).
 */
#define TEST_NAME "abort"
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int victim = size > 1 ? 1 : 0;
    if (rank == victim) {
        printf("abort: rank %d calls MPI_Abort(MPI_COMM_WORLD, 5)\n", rank);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 5);
        FAIL("MPI_Abort returned");
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    FAIL("MPI_Barrier returned although rank %d never entered it", victim);
}
