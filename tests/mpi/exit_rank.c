/*
 * exit_rank.c - exit() after MPI_Finalize ends one rank, not the job.
 *
 * Usage: exit_rank [CODE]    (default 0)
 *
 * Every rank calls MPI_Finalize, then rank 0 prints PASS, then every rank
 * calls exit(): rank size-1 with CODE (when size > 1; with 1 rank, rank 0
 * uses CODE), the others with 0.  Rank 0 first waits a little so that, in a
 * thread-based MPI, rank size-1 calls exit() while rank 0 is still running:
 * that exit() must end only its own rank.  Expected (testlist): with CODE 0 a
 * normal pass, with CODE 4 the job's exit code is 4.
 */
#define _POSIX_C_SOURCE 200809L
#define TEST_NAME "exit_rank"
#include "mpitest.h"
#include <time.h>

int main(int argc, char **argv)
{
    int rank, size;
    const int code = argc > 1 ? atoi(argv[1]) : 0;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0) {
        /* no MPI any more: a plain sleep; other ranks may exit meanwhile */
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        printf("PASS %s\n", TEST_NAME);
        fflush(stdout);
    }
    if (rank == size - 1 && code != 0) {
        printf("exit_rank: rank %d calls exit(%d)\n", rank, code);
        fflush(stdout);
        exit(code);
    }
    exit(0);
}
