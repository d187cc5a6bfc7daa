/*
 * anysource.c - fan-in to rank 0 with wildcard receives.
 *
 * Every rank (rank 0 too, to itself) sends N tagged messages to rank 0.
 * Message (src, seq) has tag base+seq and a length that depends on (src, seq)
 * (0 ints, small, and some 20 KiB ones that usually cross the eager limit).
 * Rank 0 checks status.MPI_SOURCE, status.MPI_TAG, MPI_Get_count, the
 * contents, that every (src, seq) arrives exactly once and, where MPI
 * guarantees it, in per-source order.  Phases:
 *   1. senders use blocking MPI_Send; rank 0 uses MPI_Recv(ANY_SOURCE, ANY_TAG);
 *   2. rank 0 uses MPI_Recv(ANY_SOURCE, specific tag) in decreasing tag order;
 *   3. rank 0 uses MPI_Recv(specific source, ANY_TAG) in decreasing source order;
 *   4. rank 0 pre-posts MPI_Irecv(ANY_SOURCE, ANY_TAG) for everything, then the
 *      senders start; per-source order must follow the posting order.
 */
#define TEST_NAME "anysource"
#include "mpitest.h"

#define BIG_LEN 5000 /* ints */
#define MAXLEN (BIG_LEN + 64)

static int msg_len(int src, int seq)
{
    if (seq % 10 == 0)
        return 0;
    if (seq % 8 == 3)
        return BIG_LEN + src % 64;
    return 2 + (src * 7 + seq * 13) % 50;
}

static void fill_msg(int *buf, int src, int seq, int phase)
{
    int len = msg_len(src, seq);
    if (len >= 2) {
        buf[0] = src;
        buf[1] = seq;
        mt_fill(buf + 2, (size_t)(len - 2) * sizeof(int), mt_seed(src, seq, phase, 7));
    }
}

static void check_msg(const int *buf, const MPI_Status *st, int src, int seq, int tag, int phase)
{
    int len = msg_len(src, seq);
    CHECK_STATUS(st, MPI_INT, src, tag, len, "phase %d message seq %d from rank %d", phase, seq, src);
    if (len >= 2) {
        CHECK(buf[0] == src && buf[1] == seq,
              "phase %d: payload header wrong (expected src %d seq %d got src %d seq %d)",
              phase, src, seq, buf[0], buf[1]);
        VERIFY(buf + 2, (size_t)(len - 2) * sizeof(int), mt_seed(src, seq, phase, 7),
               "phase %d message seq %d from rank %d", phase, seq, src);
    }
}

/* Nonblocking sends of all N messages of this rank to rank 0 (tags base+seq). */
static MPI_Request *isend_all(int rank, int nmsg, int base, int phase, int **bufs_out)
{
    MPI_Request *rq = mt_malloc(sizeof(MPI_Request) * (size_t)nmsg);
    int *bufs = mt_malloc(sizeof(int) * (size_t)nmsg * MAXLEN);
    for (int seq = 0; seq < nmsg; seq++) {
        int *b = bufs + (size_t)seq * MAXLEN;
        fill_msg(b, rank, seq, phase);
        MPI_CHECK(MPI_Isend(b, msg_len(rank, seq), MPI_INT, 0, base + seq, MPI_COMM_WORLD, &rq[seq]));
    }
    *bufs_out = bufs;
    return rq;
}

static void wait_free(int nmsg, MPI_Request *rq, int *bufs)
{
    MPI_CHECK(MPI_Waitall(nmsg, rq, MPI_STATUSES_IGNORE));
    free(rq);
    free(bufs);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    int nmsg = size <= 8 ? 40 : 640 / size;
    if (nmsg < 8)
        nmsg = 8;
    const int total = nmsg * size;
    int *buf = mt_malloc(sizeof(int) * MAXLEN);
    int *next = mt_malloc(sizeof(int) * (size_t)size);
    MPI_Status st;

    /* ---- Phase 1: blocking sends, fully wildcard receives. */
    {
        const int base = 1000, phase = 1;
        if (rank == 0) {
            int *bufs;
            MPI_Request *rq = isend_all(rank, nmsg, base, phase, &bufs);
            for (int s = 0; s < size; s++)
                next[s] = 0;
            for (int i = 0; i < total; i++) {
                MPI_CHECK(MPI_Recv(buf, MAXLEN, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                   MPI_COMM_WORLD, &st));
                int src = st.MPI_SOURCE, seq = st.MPI_TAG - base;
                CHECK(src >= 0 && src < size, "phase 1: status.MPI_SOURCE out of range "
                      "(expected 0..%d got %d)", size - 1, src);
                CHECK(seq >= 0 && seq < nmsg, "phase 1: status.MPI_TAG out of range "
                      "(expected %d..%d got %d)", base, base + nmsg - 1, st.MPI_TAG);
                CHECK(seq == next[src], "phase 1: message from rank %d out of order or "
                      "duplicated (expected seq %d got seq %d)", src, next[src], seq);
                check_msg(buf, &st, src, seq, base + seq, phase);
                next[src]++;
            }
            for (int s = 0; s < size; s++)
                CHECK(next[s] == nmsg, "phase 1: wrong number of messages from rank %d "
                      "(expected %d got %d)", s, nmsg, next[s]);
            wait_free(nmsg, rq, bufs);
        } else {
            for (int seq = 0; seq < nmsg; seq++) {
                fill_msg(buf, rank, seq, phase);
                MPI_CHECK(MPI_Send(buf, msg_len(rank, seq), MPI_INT, 0, base + seq, MPI_COMM_WORLD));
            }
        }
    }

    /* Phase 1 receives with ANY_TAG: keep later phases' messages out of it. */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- Phase 2: ANY_SOURCE with a specific tag, tags in decreasing order. */
    {
        const int base = 3000, phase = 2;
        int *bufs;
        MPI_Request *rq = isend_all(rank, nmsg, base, phase, &bufs);
        if (rank == 0) {
            unsigned char *seen = mt_malloc((size_t)size);
            for (int seq = nmsg - 1; seq >= 0; seq--) {
                memset(seen, 0, (size_t)size);
                for (int i = 0; i < size; i++) {
                    MPI_CHECK(MPI_Recv(buf, MAXLEN, MPI_INT, MPI_ANY_SOURCE, base + seq,
                                       MPI_COMM_WORLD, &st));
                    int src = st.MPI_SOURCE;
                    CHECK(src >= 0 && src < size, "phase 2: status.MPI_SOURCE out of range "
                          "(expected 0..%d got %d)", size - 1, src);
                    CHECK(!seen[src], "phase 2: tag %d received twice from rank %d "
                          "(expected once got twice)", base + seq, src);
                    seen[src] = 1;
                    check_msg(buf, &st, src, seq, base + seq, phase);
                }
            }
            free(seen);
        }
        wait_free(nmsg, rq, bufs);
    }

    /* ---- Phase 3: specific source with ANY_TAG, sources in decreasing order. */
    {
        const int base = 5000, phase = 3;
        int *bufs;
        MPI_Request *rq = isend_all(rank, nmsg, base, phase, &bufs);
        if (rank == 0) {
            for (int src = size - 1; src >= 0; src--)
                for (int seq = 0; seq < nmsg; seq++) {
                    MPI_CHECK(MPI_Recv(buf, MAXLEN, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                    CHECK(st.MPI_TAG == base + seq, "phase 3: message from rank %d out of order "
                          "(expected tag %d got tag %d)", src, base + seq, st.MPI_TAG);
                    check_msg(buf, &st, src, seq, base + seq, phase);
                }
        }
        wait_free(nmsg, rq, bufs);
    }

    /* ---- Phase 4: pre-posted wildcard receives, then the sends start. */
    {
        const int base = 7000, phase = 4;
        MPI_Request *rrq = NULL;
        int *rbufs = NULL;
        MPI_Status *sts = NULL;
        if (rank == 0) {
            rrq = mt_malloc(sizeof(MPI_Request) * (size_t)total);
            sts = mt_malloc(sizeof(MPI_Status) * (size_t)total);
            rbufs = mt_malloc(sizeof(int) * (size_t)total * MAXLEN);
            for (int i = 0; i < total; i++)
                MPI_CHECK(MPI_Irecv(rbufs + (size_t)i * MAXLEN, MAXLEN, MPI_INT, MPI_ANY_SOURCE,
                                    MPI_ANY_TAG, MPI_COMM_WORLD, &rrq[i]));
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        int *bufs;
        MPI_Request *rq = isend_all(rank, nmsg, base, phase, &bufs);
        if (rank == 0) {
            MPI_CHECK(MPI_Waitall(total, rrq, sts));
            for (int s = 0; s < size; s++)
                next[s] = 0;
            for (int i = 0; i < total; i++) {
                int src = sts[i].MPI_SOURCE, seq = sts[i].MPI_TAG - base;
                CHECK(src >= 0 && src < size, "phase 4: receive %d: status.MPI_SOURCE out of "
                      "range (expected 0..%d got %d)", i, size - 1, src);
                CHECK(seq == next[src], "phase 4: receive %d (in posting order) got a message "
                      "from rank %d out of order (expected seq %d got seq %d)", i, src,
                      next[src], seq);
                check_msg(rbufs + (size_t)i * MAXLEN, &sts[i], src, seq, base + seq, phase);
                next[src]++;
            }
            free(rrq);
            free(sts);
            free(rbufs);
        }
        wait_free(nmsg, rq, bufs);
    }

    free(buf);
    free(next);
    return mt_finish();
}
