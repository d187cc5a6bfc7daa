/*
 * overflow.c - a stack overflow in one rank must end the job with a message
 * naming the rank.
 *
 * Rank 1 (rank 0 with 1 rank) recurses without end with a 4 KiB frame; the
 * other ranks wait in MPI_Barrier.  Expected (testlist): non-zero exit and
 * output matching "rank [0-9]+.*stack overflow".  Under a process-based MPI
 * this is a SIGSEGV of one process.
 */
#define TEST_NAME "overflow"
#include "mpitest.h"

/* Read-only after start-up: shared or not, it is the same for every rank. */
SKEIN_SHARED static volatile int keep_going = 1;

__attribute__((noinline)) static int recurse(int depth)
{
    volatile char frame[4096];
    frame[0] = (char)depth;
    frame[sizeof frame - 1] = (char)(depth >> 8);
    if (!keep_going)
        return frame[0];
    /* not a tail call: the result is used after the call returns */
    return recurse(depth + 1) + frame[depth % (int)sizeof frame];
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int victim = size > 1 ? 1 : 0;
    if (rank == victim) {
        printf("overflow: rank %d starts infinite recursion\n", rank);
        fflush(stdout);
        int r = recurse(0);
        FAIL("infinite recursion returned %d (expected the rank to crash on its stack guard)", r);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    FAIL("MPI_Barrier returned although rank %d never entered it", victim);
}
