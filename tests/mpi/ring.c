/*
 * ring.c - pass messages of many sizes (0 B .. 16 MiB) around a ring.
 *
 * For every size and iteration, the data pattern depends on (source rank,
 * size, iteration, phase) and is verified byte for byte, together with the
 * status fields and that the bytes after the message in an oversized receive
 * buffer are untouched.  Phases:
 *   1. token ring with blocking MPI_Send / MPI_Recv (0 -> 1 -> ... -> 0);
 *   2. simultaneous shift with MPI_Sendrecv;
 *   3. both directions at once with MPI_Isend / MPI_Irecv / MPI_Waitall;
 *   4. MPI_Sendrecv_replace;
 * plus a non-periodic shift that uses MPI_PROC_NULL at the ends.
 * 16 MiB messages only with <= 8 ranks, 1 MiB only with <= 32 ranks.
 */
#define TEST_NAME "ring"
#include "mpitest.h"

#define CANARY 16
#define CANARY_BYTE 0xA5

static const size_t ring_sizes[] = {0, 1, 8, 127, 128, 1024, 65535, 65536,
                                    1u << 20, 16u << 20};
#define NSIZES (sizeof ring_sizes / sizeof ring_sizes[0])

static void check_canary(const unsigned char *buf, size_t n, const char *what, size_t sz)
{
    for (size_t i = 0; i < CANARY; i++)
        CHECK(buf[n + i] == CANARY_BYTE,
              "%s size %zu: byte %zu past the end of the message was overwritten "
              "(expected 0x%02x got 0x%02x)", what, sz, n + i, CANARY_BYTE, buf[n + i]);
}

static void check_recv(unsigned char *rbuf, size_t n, const MPI_Status *st, int src, int tag,
                       uint64_t seed, const char *what, int it)
{
    CHECK_STATUS(st, MPI_BYTE, src, tag, (int)n, "%s size %zu iter %d", what, n, it);
    VERIFY(rbuf, n, seed, "%s size %zu iter %d from rank %d", what, n, it, src);
    check_canary(rbuf, n, what, n);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;

    for (size_t si = 0; si < NSIZES; si++) {
        const size_t n = ring_sizes[si];
        if (n >= (16u << 20) && size > 8)
            continue;
        if (n >= (1u << 20) && size > 32)
            continue;
        const int iters = n >= (1u << 20) ? 1 : (n >= 65536 ? 2 : 3);
        unsigned char *sbuf = mt_malloc(n + CANARY);
        unsigned char *rbuf = mt_malloc(n + CANARY);
        unsigned char *rbuf2 = mt_malloc(n + CANARY);
        const int tag1 = 100 + (int)si, tag2 = 200 + (int)si, tag3 = 300 + (int)si,
                  tag3b = 400 + (int)si, tag4 = 500 + (int)si;
        MPI_Status st, sts[4];

        for (int it = 0; it < iters; it++) {
            /* Phase 1: token ring with blocking calls. */
            memset(rbuf, CANARY_BYTE, n + CANARY);
            mt_fill(sbuf, n, mt_seed(rank, n, it, 1));
            if (size == 1) {
                MPI_Request r;
                MPI_CHECK(MPI_Isend(sbuf, (int)n, MPI_BYTE, 0, tag1, MPI_COMM_WORLD, &r));
                MPI_CHECK(MPI_Recv(rbuf, (int)n + CANARY, MPI_BYTE, 0, tag1, MPI_COMM_WORLD, &st));
                MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                CHECK(r == MPI_REQUEST_NULL, "MPI_Wait did not set the request to MPI_REQUEST_NULL");
            } else if (rank == 0) {
                MPI_CHECK(MPI_Send(sbuf, (int)n, MPI_BYTE, right, tag1, MPI_COMM_WORLD));
                MPI_CHECK(MPI_Recv(rbuf, (int)n + CANARY, MPI_BYTE, left, tag1, MPI_COMM_WORLD, &st));
            } else {
                MPI_CHECK(MPI_Recv(rbuf, (int)n + CANARY, MPI_BYTE, left, tag1, MPI_COMM_WORLD, &st));
                MPI_CHECK(MPI_Send(sbuf, (int)n, MPI_BYTE, right, tag1, MPI_COMM_WORLD));
            }
            check_recv(rbuf, n, &st, left, tag1, mt_seed(left, n, it, 1), "Send/Recv token ring", it);

            /* Phase 2: MPI_Sendrecv shift to the right. */
            memset(rbuf, CANARY_BYTE, n + CANARY);
            mt_fill(sbuf, n, mt_seed(rank, n, it, 2));
            MPI_CHECK(MPI_Sendrecv(sbuf, (int)n, MPI_BYTE, right, tag2, rbuf, (int)n + CANARY,
                                   MPI_BYTE, left, tag2, MPI_COMM_WORLD, &st));
            check_recv(rbuf, n, &st, left, tag2, mt_seed(left, n, it, 2), "Sendrecv", it);

            /* Phase 3: both directions at once, nonblocking.  The same send
             * buffer goes to both neighbours (allowed since MPI-3.0). */
            memset(rbuf, CANARY_BYTE, n + CANARY);
            memset(rbuf2, CANARY_BYTE, n + CANARY);
            mt_fill(sbuf, n, mt_seed(rank, n, it, 3));
            MPI_Request rq[4];
            MPI_CHECK(MPI_Irecv(rbuf, (int)n + CANARY, MPI_BYTE, left, tag3, MPI_COMM_WORLD, &rq[0]));
            MPI_CHECK(MPI_Irecv(rbuf2, (int)n + CANARY, MPI_BYTE, right, tag3b, MPI_COMM_WORLD, &rq[1]));
            MPI_CHECK(MPI_Isend(sbuf, (int)n, MPI_BYTE, right, tag3, MPI_COMM_WORLD, &rq[2]));
            MPI_CHECK(MPI_Isend(sbuf, (int)n, MPI_BYTE, left, tag3b, MPI_COMM_WORLD, &rq[3]));
            MPI_CHECK(MPI_Waitall(4, rq, sts));
            for (int i = 0; i < 4; i++)
                CHECK(rq[i] == MPI_REQUEST_NULL, "MPI_Waitall left request %d active", i);
            check_recv(rbuf, n, &sts[0], left, tag3, mt_seed(left, n, it, 3), "Isend/Irecv rightward", it);
            check_recv(rbuf2, n, &sts[1], right, tag3b, mt_seed(right, n, it, 3), "Isend/Irecv leftward", it);

            /* Phase 4: MPI_Sendrecv_replace (up to 1 MiB). */
            if (n <= (1u << 20)) {
                memset(rbuf, CANARY_BYTE, n + CANARY);
                mt_fill(rbuf, n, mt_seed(rank, n, it, 4));
                MPI_CHECK(MPI_Sendrecv_replace(rbuf, (int)n, MPI_BYTE, right, tag4, left, tag4,
                                               MPI_COMM_WORLD, &st));
                check_recv(rbuf, n, &st, left, tag4, mt_seed(left, n, it, 4), "Sendrecv_replace", it);
            }
        }
        free(sbuf);
        free(rbuf);
        free(rbuf2);
    }

    /* Non-periodic shift with MPI_PROC_NULL at the ends. */
    {
        const int dst = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
        const int src = rank > 0 ? rank - 1 : MPI_PROC_NULL;
        const size_t n = 1000;
        unsigned char *sbuf = mt_malloc(n), *rbuf = mt_malloc(n + CANARY);
        MPI_Status st;
        mt_fill(sbuf, n, mt_seed(rank, n, 0, 5));
        memset(rbuf, CANARY_BYTE, n + CANARY);
        MPI_CHECK(MPI_Sendrecv(sbuf, (int)n, MPI_BYTE, dst, 600, rbuf, (int)n, MPI_BYTE, src,
                               600, MPI_COMM_WORLD, &st));
        if (src == MPI_PROC_NULL) {
            CHECK_STATUS(&st, MPI_BYTE, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Sendrecv from MPI_PROC_NULL");
            check_canary(rbuf, 0, "Sendrecv from MPI_PROC_NULL (buffer must be untouched)", n);
        } else {
            CHECK_STATUS(&st, MPI_BYTE, src, 600, (int)n, "non-periodic Sendrecv");
            VERIFY(rbuf, n, mt_seed(src, n, 0, 5), "non-periodic Sendrecv");
        }
        /* Direct point-to-point with MPI_PROC_NULL. */
        MPI_CHECK(MPI_Send(sbuf, (int)n, MPI_BYTE, MPI_PROC_NULL, 601, MPI_COMM_WORLD));
        memset(rbuf, CANARY_BYTE, n + CANARY);
        MPI_CHECK(MPI_Recv(rbuf, (int)n, MPI_BYTE, MPI_PROC_NULL, 601, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, MPI_BYTE, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Recv from MPI_PROC_NULL");
        check_canary(rbuf, 0, "Recv from MPI_PROC_NULL (buffer must be untouched)", n);
        MPI_Request rq[2];
        MPI_Status sts[2];
        MPI_CHECK(MPI_Isend(sbuf, (int)n, MPI_BYTE, MPI_PROC_NULL, 602, MPI_COMM_WORLD, &rq[0]));
        MPI_CHECK(MPI_Irecv(rbuf, (int)n, MPI_BYTE, MPI_PROC_NULL, 602, MPI_COMM_WORLD, &rq[1]));
        MPI_CHECK(MPI_Waitall(2, rq, sts));
        if (!mt_old_mpich())
            CHECK_STATUS(&sts[1], MPI_BYTE, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Irecv from MPI_PROC_NULL");
        check_canary(rbuf, 0, "Irecv from MPI_PROC_NULL (buffer must be untouched)", n);
        free(sbuf);
        free(rbuf);
    }

    return mt_finish();
}
