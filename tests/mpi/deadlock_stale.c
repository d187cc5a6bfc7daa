/*
 * deadlock_stale.c - no deadlock: a process computes after a long wait while the others
 * wait for its result (the cross-process detector must not judge from an old report).
 *
 * Rank 0 sleeps, then sends 1 MiB (rendezvous) to the last rank, whose process meanwhile
 * reports itself stalled many times (run with a short SKEIN_DEADLOCK_MS). The last rank
 * then computes for 1.5 s without MPI calls while the other ranks wait for its result in
 * MPI_Recv. Its fetch of the message (counted as sent) and the message's delivery keep
 * the job's totals of sent and delivered equal, so reports alone would say deadlock.
 * Expected (testlist): pass, one rank per process.
 */
#define TEST_NAME "deadlock_stale"
#include "mpitest.h"
#include <time.h>
#include <unistd.h>

#define BYTES (1 << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int rank, size, result = 0;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size < 3) FAIL("needs 3 ranks");
    int last = size - 1;
    if (rank == 0) {
        unsigned char *buf = malloc(BYTES);
        if (!buf) FAIL("out of memory");
        for (int i = 0; i < BYTES; i++) buf[i] = (unsigned char)(i * 7);
        usleep(500000); /* the last rank's process stalls meanwhile */
        MPI_CHECK(MPI_Send(buf, BYTES, MPI_UNSIGNED_CHAR, last, 1, MPI_COMM_WORLD));
        free(buf);
    }
    if (rank == last) {
        unsigned char *buf = malloc(BYTES);
        if (!buf) FAIL("out of memory");
        MPI_CHECK(MPI_Recv(buf, BYTES, MPI_UNSIGNED_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        /* compute without MPI calls: every other process waits, with nothing in flight */
        double end = now() + 1.5;
        long sum = 0;
        while (now() < end)
            for (int i = 0; i < BYTES; i++) sum += buf[i];
        for (int i = 0; i < BYTES; i++)
            if (buf[i] != (unsigned char)(i * 7)) FAIL("byte %d of the message is %d", i, buf[i]);
        free(buf);
        result = sum > 0 ? 42 : -1;
        for (int r = 0; r < last; r++) MPI_CHECK(MPI_Send(&result, 1, MPI_INT, r, 2, MPI_COMM_WORLD));
    } else {
        MPI_CHECK(MPI_Recv(&result, 1, MPI_INT, last, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(result == 42, "result %d from the last rank (expected 42)", result);
    }
    return mt_finish();
}
