/*
 * bsend.c - buffered sends around a ring (self with 1 rank).
 *
 * Each rank attaches a buffer whose size depends on its rank (to catch a
 * buffer shared between ranks), then
 *   1. sends NB messages (0 B .. 8 KiB, plus one 1 MiB / 256 KiB) with MPI_Bsend
 *      to the right neighbour, which has not posted any receive yet: it waits
 *      for a "go" token that is sent only after all the Bsends returned;
 *   2. sends NI messages with MPI_Ibsend and completes them with MPI_Waitall /
 *      MPI_Test before the receiver posts anything (completion is local);
 *   3. MPI_Buffer_detach returns the same address and size, and waits until
 *      the buffered messages are delivered; then a smaller buffer is attached
 *      and used again.
 * The receiver checks order, status and contents of every message.
 */
#define TEST_NAME "bsend"
#include "mpitest.h"

#define NB 32
#define NI 16

static int msg_bytes(int k, int big)
{
    if (k == 7)
        return big;
    if (k % 5 == 0)
        return 0;
    return (k * 997) % 8192 + 1;
}

static void recv_check(int left, int tag, int k, int phase, int big)
{
    int n = msg_bytes(k, big);
    unsigned char *b = mt_malloc((size_t)n + 8);
    MPI_Status st;
    MPI_CHECK(MPI_Recv(b, n + 8, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, MPI_BYTE, left, tag, n, "phase %d message %d", phase, k);
    VERIFY(b, (size_t)n, mt_seed(left, k, phase, 5), "phase %d message %d (%d bytes)", phase, k, n);
    free(b);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    const int big = size <= 8 ? (1 << 20) : (256 << 10);

    /* Buffer big enough for phase 1 and phase 2 messages all at once. */
    size_t need = 0;
    for (int k = 0; k < NB; k++)
        need += (size_t)msg_bytes(k, big) + MPI_BSEND_OVERHEAD + 16;
    for (int k = 0; k < NI; k++)
        need += (size_t)msg_bytes(k, big) + MPI_BSEND_OVERHEAD + 16;
    const int bsize = (int)need + 64 * rank + 1024;
    char *bbuf = mt_malloc((size_t)bsize);
    MPI_CHECK(MPI_Buffer_attach(bbuf, bsize));

    unsigned char *sb = mt_malloc((size_t)big);
    int go1 = 1, go2 = 2, go_in = -1; /* separate: both Isends are pending together */
    MPI_Request goreq[2];

    /* Phase 1: MPI_Bsend before the receiver has posted anything. */
    for (int k = 0; k < NB; k++) {
        int n = msg_bytes(k, big);
        mt_fill(sb, (size_t)n, mt_seed(rank, k, 1, 5));
        MPI_CHECK(MPI_Bsend(sb, n, MPI_BYTE, right, 10, MPI_COMM_WORLD));
        /* the data was copied: scribbling over the user buffer is harmless */
        memset(sb, 0xEE, (size_t)n);
    }
    MPI_CHECK(MPI_Isend(&go1, 1, MPI_INT, right, 11, MPI_COMM_WORLD, &goreq[0]));
    MPI_CHECK(MPI_Recv(&go_in, 1, MPI_INT, left, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(go_in == 1, "go token wrong (expected 1 got %d)", go_in);
    for (int k = 0; k < NB; k++)
        recv_check(left, 10, k, 1, big);

    /* Phase 2: MPI_Ibsend completes locally, before the receiver posts. */
    {
        MPI_Request rq[NI];
        unsigned char *bufs[NI];
        for (int k = 0; k < NI; k++) {
            int n = msg_bytes(k, big);
            bufs[k] = mt_malloc((size_t)n);
            mt_fill(bufs[k], (size_t)n, mt_seed(rank, k, 2, 5));
            MPI_CHECK(MPI_Ibsend(bufs[k], n, MPI_BYTE, right, 20, MPI_COMM_WORLD, &rq[k]));
        }
        /* half with Test loops, the rest with Waitall */
        for (int k = 0; k < NI / 2; k++) {
            int flag = 0;
            while (!flag)
                MPI_CHECK(MPI_Test(&rq[k], &flag, MPI_STATUS_IGNORE));
        }
        MPI_CHECK(MPI_Waitall(NI, rq, MPI_STATUSES_IGNORE));
        for (int k = 0; k < NI; k++) {
            memset(bufs[k], 0xEE, (size_t)msg_bytes(k, big));
            free(bufs[k]);
        }
    }
    MPI_CHECK(MPI_Isend(&go2, 1, MPI_INT, right, 21, MPI_COMM_WORLD, &goreq[1]));
    MPI_CHECK(MPI_Recv(&go_in, 1, MPI_INT, left, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(go_in == 2, "go token wrong (expected 2 got %d)", go_in);
    for (int k = 0; k < NI; k++)
        recv_check(left, 20, k, 2, big);
    MPI_CHECK(MPI_Waitall(2, goreq, MPI_STATUSES_IGNORE));

    /* Phase 3: detach returns the same buffer and size. */
    {
        void *p = NULL;
        int sz = -1;
        MPI_CHECK(MPI_Buffer_detach(&p, &sz));
        CHECK(p == (void *)bbuf && sz == bsize, "MPI_Buffer_detach returned another buffer "
              "(expected %p/%d got %p/%d)", (void *)bbuf, bsize, p, sz);
        memset(bbuf, 0xEE, (size_t)bsize); /* detach waited: nothing may still use it */
        free(bbuf);

        /* A small buffer, used sequentially: each message fits alone. */
        const int n = 1000;
        const int sbsize = n + MPI_BSEND_OVERHEAD + 64 + rank;
        char *small = mt_malloc((size_t)sbsize);
        MPI_CHECK(MPI_Buffer_attach(small, sbsize));
        for (int it = 0; it < 5; it++) {
            int tok_out = it, tok_in = -1;
            mt_fill(sb, (size_t)n, mt_seed(rank, it, 3, 5));
            MPI_CHECK(MPI_Bsend(sb, n, MPI_BYTE, right, 30, MPI_COMM_WORLD));
            unsigned char *b = mt_malloc((size_t)n);
            MPI_Status st;
            MPI_CHECK(MPI_Recv(b, n, MPI_BYTE, left, 30, MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, MPI_BYTE, left, 30, n, "small-buffer Bsend %d", it);
            VERIFY(b, (size_t)n, mt_seed(left, it, 3, 5), "small-buffer Bsend %d", it);
            free(b);
            /* make sure right has received ours before reusing the buffer space */
            MPI_CHECK(MPI_Sendrecv(&tok_out, 1, MPI_INT, left, 31, &tok_in, 1, MPI_INT, right, 31,
                                   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        MPI_CHECK(MPI_Buffer_detach(&p, &sz));
        CHECK(p == (void *)small && sz == sbsize, "second MPI_Buffer_detach returned another "
              "buffer (expected %p/%d got %p/%d)", (void *)small, sbsize, p, sz);
        free(small);
    }
    free(sb);
    return mt_finish();
}
