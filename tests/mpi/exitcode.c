/*
 * exitcode.c - the job's exit code is a rank's non-zero return value.
 *
 * Rank size-1 returns 3 from main after MPI_Finalize, all other ranks return 0.
 * Expected: the launcher exits with status 3.  Nothing is printed on failure
 * here: the harness checks the exit code (testlist: exit=3).
 */
#define TEST_NAME "exitcode"
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == size - 1) {
        printf("exitcode: rank %d returns 3 from main\n", rank);
        fflush(stdout);
        return 3;
    }
    return 0;
}
