/*
 * deadlock_rndv.c - a deadlock with a rendezvous transfer in flight across processes.
 *
 * Rank 0 sends 4 MiB (above every transport's rendezvous threshold) with tag 1 to the
 * last rank, which waits for tag 2 instead; the other ranks wait in MPI_Barrier. The
 * message has reached the last rank's process but nobody fetches it, so the sender's
 * transfer never ends: the cross-process detector must still call this a deadlock
 * (it hung while any rendezvous send was pending).
 * Expected (testlist): non-zero exit, "rank 0 blocked in MPI_Send".
 */
#define TEST_NAME "deadlock_rndv"
#include "mpitest.h"

#define BYTES (4 << 20)

int main(int argc, char **argv)
{
    int rank, size, x = 0;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size < 2) FAIL("needs 2 ranks");
    if (rank == 0) {
        char *buf = calloc(BYTES, 1);
        if (!buf) FAIL("out of memory");
        printf("deadlock_rndv: rank 0 enters MPI_Send(%d bytes, dest=%d, tag=1)\n", BYTES, size - 1);
        fflush(stdout);
        MPI_CHECK(MPI_Send(buf, BYTES, MPI_CHAR, size - 1, 1, MPI_COMM_WORLD));
    } else if (rank == size - 1) {
        MPI_CHECK(MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    FAIL("a call that nothing can complete returned (expected a deadlock report)");
}
