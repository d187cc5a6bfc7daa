/*
 * crash.c - a rank that dies of a signal: the crash notice must be complete (issue 17:
 * some runs printed only "skein: rank " and stopped; it is now built on the stack and
 * written with one write()).
 *
 * The last rank raises SIGSEGV after a barrier while the others wait in a second one.
 * Expected (testlist): non-zero exit and the whole line
 * "skein: rank N: segmentation fault (SIGSEGV)".
 */
#define TEST_NAME "crash"
#include "mpitest.h"
#include <signal.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1) raise(SIGSEGV);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    FAIL("the barrier completed without the crashed rank");
}
