/*
 * isend_late.c - a nonblocking send whose sender then computes without calling MPI must
 * still arrive soon (small Isends to another process wait in the transport to be sent
 * together, issue 17: the process's progress thread must send them when no rank calls
 * MPI).
 *
 * Rank 0 sends 8 bytes with MPI_Isend to the last rank, waits for the send (it completes
 * at once: the data is copied) and then computes for 3 s without calling MPI. The last
 * rank measures how long its MPI_Recv waited after the barrier both left: it must be well
 * under the 3 s (limit 1 s). Then 100 Isends of growing sizes (1..300 bytes, around the
 * coalescing limit) and a blocking send must arrive in order with their data.
 */
#define _POSIX_C_SOURCE 200809L
#define TEST_NAME "isend_late"
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2, "needs 2 ranks");
    int last = size - 1;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        long v = 42;
        MPI_Request r;
        MPI_CHECK(MPI_Isend(&v, 1, MPI_LONG, last, 1, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        double t0 = MPI_Wtime(); /* MPI_Wtime reads the clock only */
        volatile unsigned long spin = 0;
        while (MPI_Wtime() - t0 < 3.0) spin++;
    } else if (rank == last) {
        long v = 0;
        double t0 = MPI_Wtime();
        MPI_CHECK(MPI_Recv(&v, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        double waited = MPI_Wtime() - t0;
        CHECK(v == 42, "received %ld, expected 42", v);
        CHECK(waited < 1.0, "the Isend of a rank computing outside MPI arrived after %.2f s", waited);
        printf("isend_late: waited %.3f s\n", waited);
    }
    enum { N = 100 };
    if (rank == 0) {
        char *buf = malloc(N * 300);
        MPI_Request req[N];
        CHECK(buf, "out of memory");
        for (int i = 0; i < N; i++) {
            int n = 1 + i * 3;
            for (int k = 0; k < n; k++) buf[i * 300 + k] = (char)(i + k);
            MPI_CHECK(MPI_Isend(buf + i * 300, n, MPI_CHAR, last, 2, MPI_COMM_WORLD, &req[i]));
        }
        int end = N;
        MPI_CHECK(MPI_Send(&end, 1, MPI_INT, last, 2, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Waitall(N, req, MPI_STATUSES_IGNORE));
        free(buf);
    } else if (rank == last) {
        char in[300];
        for (int i = 0; i < N; i++) {
            MPI_Status st;
            int n = 1 + i * 3, got;
            MPI_CHECK(MPI_Recv(in, 300, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &st));
            MPI_CHECK(MPI_Get_count(&st, MPI_CHAR, &got));
            CHECK(got == n, "message %d has %d bytes, expected %d", i, got, n);
            for (int k = 0; k < n; k++) CHECK(in[k] == (char)(i + k), "message %d byte %d is wrong", i, k);
        }
        int end = 0;
        MPI_CHECK(MPI_Recv(&end, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(end == N, "the blocking send after the Isends carries %d", end);
    }
    MPI_CHECK(MPI_Finalize());
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
