/*
 * deadlock.c - a real deadlock that the runtime must report instead of hanging.
 *
 * Rank 0 does MPI_Recv(source 1, tag 7) and rank 1 does MPI_Recv(source 0,
 * tag 7); nobody sends.  Other ranks wait in MPI_Barrier, which can never
 * complete.  With 1 rank, rank 0 receives from itself (also a deadlock).
 * Expected (testlist): non-zero exit and output matching
 * "rank 0 blocked in MPI_Recv".  Any correct MPI without deadlock detection
 * hangs here: run it under a timeout.
 */
#define TEST_NAME "deadlock"
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size, x = 0;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (rank == 0) {
        printf("deadlock: rank 0 enters MPI_Recv(source=%d, tag=7)\n", size > 1 ? 1 : 0);
        fflush(stdout);
    }
    if (rank == 0)
        MPI_CHECK(MPI_Recv(&x, 1, MPI_INT, size > 1 ? 1 : 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    else if (rank == 1)
        MPI_CHECK(MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    else
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    FAIL("a receive that no send matches returned (expected a deadlock report)");
}
