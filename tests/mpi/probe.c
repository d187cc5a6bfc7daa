/*
 * probe.c - MPI_Probe / MPI_Iprobe / MPI_Mprobe / MPI_Improbe / MPI_Mrecv /
 * MPI_Imrecv.  Each rank sends to its right neighbour (itself with 1 rank)
 * with nonblocking sends; phases are separated by barriers.
 *   1. Probe with specific and wildcard source/tag; Get_count from the probe
 *      status sizes an exact receive buffer; probing twice sees the same
 *      message; once everything is received, Iprobe(ANY, ANY) is false.
 *   2. Matched probes: after Mprobe matched message A, a wildcard Recv gets B
 *      (never A); Improbe gets C; then nothing is left for Iprobe; Mrecv /
 *      Imrecv deliver A and C.  A large message is received with Mprobe+Mrecv.
 *   3. MPI_PROC_NULL: Probe/Iprobe/Mprobe/Improbe return source MPI_PROC_NULL,
 *      tag MPI_ANY_TAG, count 0; MPI_MESSAGE_NO_PROC receives nothing.
 *   4. Fan-in to rank 0: Mprobe(ANY_SOURCE) matches one message, a following
 *      Recv(ANY_SOURCE) must get a message from another source.
 */
#define TEST_NAME "probe"
#include "mpitest.h"

static void make(int *b, int n, int src, int tag)
{
    if (n > 0)
        b[0] = tag;
    if (n > 1)
        mt_fill(b + 1, (size_t)(n - 1) * sizeof(int), mt_seed(src, tag, n, 9));
}

static void check(const int *b, int n, int src, int tag, const char *what)
{
    if (n > 0)
        CHECK(b[0] == tag, "%s: wrong message received (expected message with tag %d got "
              "the one with tag %d)", what, tag, b[0]);
    if (n > 1)
        VERIFY(b + 1, (size_t)(n - 1) * sizeof(int), mt_seed(src, tag, n, 9), "%s", what);
}

static MPI_Request isend_msg(int **bufp, int n, int dst, int rank, int tag)
{
    MPI_Request r;
    *bufp = mt_malloc(sizeof(int) * (size_t)(n ? n : 1));
    make(*bufp, n, rank, tag);
    MPI_CHECK(MPI_Isend(*bufp, n, MPI_INT, dst, tag, MPI_COMM_WORLD, &r));
    return r;
}

static void check_proc_null_status(const MPI_Status *st, const char *what)
{
    CHECK_STATUS(st, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, 0, "%s", what);
}

static void check_nothing_pending(const char *when)
{
    int flag = 1;
    MPI_Status st;
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "%s: Iprobe(ANY_SOURCE, ANY_TAG) found a message from rank %d tag %d "
          "(expected none)", when, st.MPI_SOURCE, st.MPI_TAG);
}

int main(int argc, char **argv)
{
    int rank, size, cnt, flag;
    MPI_Status st, st2;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;

    /* ---- Phase 1: Probe / Iprobe. */
    {
        enum { N1 = 100, N2 = 0, N3 = 50000 };
        int *sb[3];
        MPI_Request rq[3];
        rq[0] = isend_msg(&sb[0], N1, right, rank, 1);
        rq[1] = isend_msg(&sb[1], N2, right, rank, 2);
        rq[2] = isend_msg(&sb[2], N3, right, rank, 3);

        /* specific source and tag, a large message */
        MPI_CHECK(MPI_Probe(left, 3, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, MPI_INT, left, 3, N3, "Probe(left, 3)");
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &cnt));
        int *b = mt_malloc(sizeof(int) * (size_t)cnt);
        MPI_CHECK(MPI_Recv(b, cnt, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
        CHECK_STATUS(&st2, MPI_INT, left, 3, N3, "Recv after Probe");
        check(b, cnt, left, 3, "Recv after Probe(left, 3)");
        free(b);

        /* wildcard source, 0-byte message */
        MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, MPI_INT, left, 2, 0, "Probe(ANY_SOURCE, 2)");
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_INT, left, 2, MPI_COMM_WORLD, &st2));
        CHECK_STATUS(&st2, MPI_INT, left, 2, 0, "Recv of 0 ints");

        /* wildcard tag with Iprobe: only tag 1 is left */
        flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Iprobe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK_STATUS(&st, MPI_INT, left, 1, N1, "Iprobe(left, ANY_TAG)");
        /* probing again sees the same message */
        MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, MPI_INT, left, 1, N1, "second Probe(ANY_SOURCE, ANY_TAG)");
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag, "third probe (Iprobe(ANY_SOURCE, 1)) did not find the message still "
              "pending (expected flag 1 got 0)");
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &cnt));
        b = mt_malloc(sizeof(int) * (size_t)cnt);
        MPI_CHECK(MPI_Recv(b, cnt, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st2));
        CHECK_STATUS(&st2, MPI_INT, left, 1, N1, "Recv(ANY, ANY) after Iprobe");
        check(b, cnt, left, 1, "Recv(ANY, ANY) after Iprobe");
        free(b);

        /* a tag nobody sent */
        MPI_CHECK(MPI_Iprobe(left, MT_NEVER_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "Iprobe for a tag nobody sent returned flag 1 (expected 0)");
        check_nothing_pending("phase 1 after receiving everything");
        MPI_CHECK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 3; i++)
            free(sb[i]);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- Phase 2: matched probes. */
    {
        const int NA = 10, NB = 20, NC = 30;
        const int ND = size <= 16 ? (1 << 18) : (1 << 14); /* 1 MiB or 64 KiB */
        int *sb[4];
        MPI_Request rq[4];
        rq[0] = isend_msg(&sb[0], NA, right, rank, 5);
        rq[1] = isend_msg(&sb[1], NB, right, rank, 5);
        rq[2] = isend_msg(&sb[2], NC, right, rank, 6);
        rq[3] = isend_msg(&sb[3], ND, right, rank, 7);

        MPI_Message ma = MPI_MESSAGE_NULL, mc = MPI_MESSAGE_NULL, md = MPI_MESSAGE_NULL;
        /* Mprobe matches A (the first tag-5 message). */
        MPI_CHECK(MPI_Mprobe(left, 5, MPI_COMM_WORLD, &ma, &st));
        CHECK(ma != MPI_MESSAGE_NULL && ma != MPI_MESSAGE_NO_PROC,
              "Mprobe returned MPI_MESSAGE_NULL/NO_PROC for a real message");
        CHECK_STATUS(&st, MPI_INT, left, 5, NA, "Mprobe(left, 5)");
        /* A wildcard receive can no longer get A: it gets B. */
        int *b = mt_malloc(sizeof(int) * (size_t)NB);
        MPI_CHECK(MPI_Recv(b, NB, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, MPI_INT, left, 5, NB, "Recv(ANY, ANY) after Mprobe matched the first "
                     "tag-5 message (it must get the second, %d ints)", NB);
        if (b[0] != 5) /* tag stored in the first int */
            FAIL("Recv(ANY, ANY) after Mprobe got wrong data (expected tag 5 got %d)", b[0]);
        VERIFY(b + 1, (size_t)(NB - 1) * sizeof(int), mt_seed(left, 5, NB, 9),
               "Recv(ANY, ANY) after Mprobe: message B");
        free(b);
        /* Improbe with wildcards: C (tag 6) is the next one. */
        flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &mc, &st));
        CHECK_STATUS(&st, MPI_INT, left, 6, NC, "Improbe(ANY, ANY)");
        /* D is now the only unmatched message */
        MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, MPI_INT, left, 7, ND, "Probe(ANY, ANY) after Mprobe and Improbe");
        MPI_CHECK(MPI_Mprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &md, &st));
        CHECK_STATUS(&st, MPI_INT, left, 7, ND, "Mprobe(ANY, 7) of the large message");
        check_nothing_pending("phase 2 after matching every message");

        int *bc = mt_malloc(sizeof(int) * (size_t)NC);
        MPI_Request r;
        MPI_CHECK(MPI_Imrecv(bc, NC, MPI_INT, &mc, &r));
        CHECK(mc == MPI_MESSAGE_NULL, "Imrecv did not set the message handle to MPI_MESSAGE_NULL");
        int *bd = mt_malloc(sizeof(int) * (size_t)ND);
        MPI_CHECK(MPI_Mrecv(bd, ND, MPI_INT, &md, &st));
        CHECK(md == MPI_MESSAGE_NULL, "Mrecv did not set the message handle to MPI_MESSAGE_NULL");
        CHECK_STATUS(&st, MPI_INT, left, 7, ND, "Mrecv of the large message");
        check(bd, ND, left, 7, "Mrecv of the large message");
        int *ba = mt_malloc(sizeof(int) * (size_t)NA);
        MPI_CHECK(MPI_Mrecv(ba, NA, MPI_INT, &ma, &st));
        CHECK(ma == MPI_MESSAGE_NULL, "Mrecv did not set the message handle to MPI_MESSAGE_NULL");
        CHECK_STATUS(&st, MPI_INT, left, 5, NA, "Mrecv of message A");
        check(ba, NA, left, 5, "Mrecv of message A");
        MPI_CHECK(MPI_Wait(&r, &st));
        CHECK_STATUS(&st, MPI_INT, left, 6, NC, "Imrecv of message C");
        check(bc, NC, left, 6, "Imrecv of message C");
        free(ba);
        free(bc);
        free(bd);
        MPI_CHECK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 4; i++)
            free(sb[i]);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- Phase 3: MPI_PROC_NULL. */
    {
        int x = 12345;
        MPI_Message m = MPI_MESSAGE_NULL;
        MPI_Request r;
        MPI_CHECK(MPI_Probe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
        check_proc_null_status(&st, "Probe(MPI_PROC_NULL)");
        flag = 0;
        MPI_CHECK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag, "Iprobe(MPI_PROC_NULL) returned flag 0 (expected 1)");
        check_proc_null_status(&st, "Iprobe(MPI_PROC_NULL)");
        MPI_CHECK(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &m, &st));
        CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) did not return MPI_MESSAGE_NO_PROC");
        check_proc_null_status(&st, "Mprobe(MPI_PROC_NULL)");
        MPI_CHECK(MPI_Mrecv(&x, 1, MPI_INT, &m, &st));
        check_proc_null_status(&st, "Mrecv(MPI_MESSAGE_NO_PROC)");
        CHECK(m == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) did not set the handle to "
              "MPI_MESSAGE_NULL");
        CHECK(x == 12345, "Mrecv(MPI_MESSAGE_NO_PROC) modified the buffer (expected 12345 got %d)", x);
        flag = 0;
        MPI_CHECK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
        CHECK(flag && m == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL) wrong (expected flag 1 "
              "and MPI_MESSAGE_NO_PROC got flag %d)", flag);
        check_proc_null_status(&st, "Improbe(MPI_PROC_NULL)");
        MPI_CHECK(MPI_Imrecv(&x, 1, MPI_INT, &m, &r));
        MPI_CHECK(MPI_Wait(&r, &st));
        check_proc_null_status(&st, "Imrecv(MPI_MESSAGE_NO_PROC)");
        CHECK(x == 12345, "Imrecv(MPI_MESSAGE_NO_PROC) modified the buffer (expected 12345 got %d)", x);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- Phase 4: fan-in, Mprobe(ANY_SOURCE) vs a later Recv(ANY_SOURCE). */
    {
        int *sb;
        const int n = 8;
        MPI_Request r = isend_msg(&sb, n, 0, rank, 9);
        if (rank == 0) {
            unsigned char *seen = mt_malloc((size_t)size);
            int *b = mt_malloc(sizeof(int) * (size_t)n);
            memset(seen, 0, (size_t)size);
            for (int got = 0; got < size;) {
                MPI_Message m;
                MPI_CHECK(MPI_Mprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &m, &st));
                int s1 = st.MPI_SOURCE;
                CHECK(s1 >= 0 && s1 < size && !seen[s1], "Mprobe(ANY_SOURCE) matched a bad or "
                      "already received source (got %d)", s1);
                seen[s1] = 1;
                got++;
                if (got < size) {
                    MPI_CHECK(MPI_Recv(b, n, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st2));
                    int s2 = st2.MPI_SOURCE;
                    CHECK(s2 != s1, "Recv(ANY_SOURCE) stole the message matched by Mprobe "
                          "(expected a source other than %d got %d)", s1, s2);
                    CHECK(s2 >= 0 && s2 < size && !seen[s2], "Recv(ANY_SOURCE) got a bad or "
                          "repeated source (got %d)", s2);
                    seen[s2] = 1;
                    got++;
                    check(b, n, s2, 9, "fan-in Recv");
                }
                MPI_CHECK(MPI_Mrecv(b, n, MPI_INT, &m, &st));
                CHECK_STATUS(&st, MPI_INT, s1, 9, n, "fan-in Mrecv");
                check(b, n, s1, 9, "fan-in Mrecv");
            }
            free(seen);
            free(b);
        }
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        free(sb);
    }
    return mt_finish();
}
