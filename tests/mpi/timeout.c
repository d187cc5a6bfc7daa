/*
 * timeout.c - a job that never ends must be ended by skeinrun --timeout / MPIEXEC_TIMEOUT,
 * with a report of what each rank is doing.
 *
 * The last rank computes forever (no MPI call, so no deadlock can be detected); rank 0
 * waits in MPI_Recv for it; other ranks wait in MPI_Barrier. Run with a time limit of a few
 * seconds; the test expects the timeout report.
 */
#define TEST_NAME "timeout"
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size, x = 0;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (rank == size - 1) {
        volatile unsigned long spin = 0;
        for (;;) spin++;
    } else if (rank == 0) {
        MPI_CHECK(MPI_Recv(&x, 1, MPI_INT, size - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    FAIL("the job was not ended by its time limit");
}
