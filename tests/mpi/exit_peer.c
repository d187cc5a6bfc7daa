/*
 * exit_peer.c - a rank that ends early while its peers wait for it in a collective.
 *
 * Usage: exit_peer MODE   (exit: the last rank calls exit(3) before MPI_Barrier;
 *                          return: it returns 3 from main without MPI_Finalize)
 * The other ranks wait in MPI_Barrier forever: the job must end within the deadlock
 * time, saying so, with the rank's exit code 3 (the first non-zero one).
 */
#define TEST_NAME "exit_peer"
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(argc > 1, "usage: exit_peer exit|return");
    if (rank == size - 1) {
        if (!strcmp(argv[1], "exit")) exit(3);
        return 3;
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    FAIL("MPI_Barrier returned without the last rank");
}
