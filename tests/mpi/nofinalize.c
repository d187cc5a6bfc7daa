/*
 * nofinalize.c - the last rank returns from main without MPI_Finalize while the others
 * finalize (issue 17: over --procs 2 and tcp, process 0 crashed in the closing fence in
 * about 4 runs of 10).
 *
 * Usage: nofinalize [ROUNDS]   (default 3)
 * Every rank first exchanges eager and rendezvous messages with its neighbours in a ring
 * (so that every process has endpoints and traffic in flight has just ended), ROUNDS
 * times, checking the data; then the last rank returns 0 at once and the others call
 * MPI_Finalize; rank 0 prints PASS after it. The job must end with exit code 0 and no
 * crash (testlist: pass, repeated in several runs).
 */
#define TEST_NAME "nofinalize"
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    enum { BIG = 64 * 1024 }; /* above the transport's rendezvous threshold (8 KiB) */
    int *out = malloc(BIG * sizeof *out), *in = malloc(BIG * sizeof *in);
    CHECK(out && in, "out of memory");
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int r = 0; r < rounds; r++) {
        for (int n = 1; n <= BIG; n *= 64) { /* 1, 64, 4096 ints: eager; 262144 B: rendezvous */
            for (int i = 0; i < n; i++) out[i] = rank * 1000 + r + i;
            MPI_CHECK(MPI_Sendrecv(out, n, MPI_INT, next, r, in, n, MPI_INT, prev, r, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
            for (int i = 0; i < n; i++)
                CHECK(in[i] == prev * 1000 + r + i, "round %d: element %d of %d from rank %d is %d", r, i, n,
                      prev, in[i]);
        }
    }
    free(out);
    free(in);
    if (rank == size - 1 && size > 1) return 0; /* erroneous but common: no MPI_Finalize */
    MPI_CHECK(MPI_Finalize());
    if (rank == 0) {
        printf("PASS %s\n", TEST_NAME);
        fflush(stdout);
    }
    return 0;
}
