/*
 * order.c - MPI's non-overtaking rule across protocol thresholds.
 *
 * For every pair (i -> i+1 mod size) the sender sends a sequence of messages
 * whose sizes cycle through 1 B, 100 B, 4 KiB, 100 KiB and 2 MiB (256 KiB with
 * more than 8 ranks) and whose send mode cycles through MPI_Send, MPI_Isend,
 * MPI_Ssend and MPI_Issend.  Each message k carries (k, tag) in its first 8
 * bytes and a pattern seeded by (sender, phase, k).  The receiver checks:
 *   phase 1 - one tag; receives alternate Recv(src, tag), Recv(src, ANY_TAG),
 *             Irecv(ANY_SOURCE, tag)+Wait: messages arrive in send order;
 *   phase 2 - tags interleaved; the receiver pre-posts Irecvs tag by tag in
 *             decreasing tag order: each tag's stream arrives in send order;
 *   phase 3 - tags interleaved; Recv(ANY_SOURCE or src, ANY_TAG): overall order.
 * Pairs run in rounds so that no rank sends and receives in the same round
 * (no cycles of blocking calls).  With 1 rank the pair is 0 -> 0 and only
 * nonblocking sends are used.
 */
#define TEST_NAME "order"
#include "mpitest.h"

enum { M_SEND, M_ISEND, M_SSEND, M_ISSEND, NMODES };
static const char *const mode_name[NMODES] = {"MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Issend"};

#define NMSG 20

static size_t msg_size(int k, size_t big)
{
    static const size_t small[4] = {1, 100, 4096, 102400};
    int i = (k * 3 + k / 5) % 5; /* all five sizes, not in a fixed cycle */
    return i < 4 ? small[i] : big;
}

static int msg_tag(int phase, int k)
{
    if (phase == 1)
        return 10;
    return 20 * phase + (k * 7 / 3) % 3; /* three interleaved tags, irregularly */
}

static void make_msg(unsigned char *b, size_t n, int src, int phase, int k)
{
    mt_fill(b, n, mt_seed(src, phase, k, 3));
    if (n >= 8) {
        int32_t h[2] = {k, msg_tag(phase, k)};
        memcpy(b, h, 8);
    }
}

static void check_msg(const unsigned char *b, const MPI_Status *st, int src, int phase, int k,
                      size_t big, const char *how)
{
    size_t n = msg_size(k, big);
    int32_t h[2] = {-1, -1};
    if (n >= 8) {
        memcpy(h, b, 8);
        CHECK(h[0] == k, "phase %d (%s): message overtaken: wrong message arrived "
              "(expected seq %d got seq %d with tag %d)", phase, how, k, h[0], h[1]);
    }
    CHECK_STATUS(st, MPI_BYTE, src, msg_tag(phase, k), (int)n,
                 "phase %d (%s): message seq %d", phase, how, k);
    {
        unsigned char *tmp = mt_malloc(n);
        make_msg(tmp, n, src, phase, k);
        for (size_t i = 0; i < n; i++)
            if (tmp[i] != b[i])
                FAIL("phase %d (%s): message seq %d (sent with %s): byte %zu of %zu wrong "
                     "(expected 0x%02x got 0x%02x)", phase, how, k, mode_name[k % NMODES], i, n,
                     tmp[i], b[i]);
        free(tmp);
    }
}

/* Sender side of one phase.  self: only nonblocking sends (receiver is us). */
static void send_phase(int dst, int rank, int phase, size_t big, int self,
                       MPI_Request *rq, unsigned char **bufs)
{
    for (int k = 0; k < NMSG; k++) {
        size_t n = msg_size(k, big);
        int tag = msg_tag(phase, k);
        bufs[k] = mt_malloc(n);
        make_msg(bufs[k], n, rank, phase, k);
        rq[k] = MPI_REQUEST_NULL;
        int mode = k % NMODES;
        if (self && mode == M_SEND)
            mode = M_ISEND;
        if (self && mode == M_SSEND)
            mode = M_ISSEND;
        switch (mode) {
        case M_SEND:
            MPI_CHECK(MPI_Send(bufs[k], (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD));
            break;
        case M_ISEND:
            MPI_CHECK(MPI_Isend(bufs[k], (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &rq[k]));
            break;
        case M_SSEND:
            MPI_CHECK(MPI_Ssend(bufs[k], (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD));
            break;
        default:
            MPI_CHECK(MPI_Issend(bufs[k], (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &rq[k]));
            break;
        }
    }
}

static void send_finish(MPI_Request *rq, unsigned char **bufs)
{
    MPI_CHECK(MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NMSG; k++)
        free(bufs[k]);
}

static void recv_phase(int src, int phase, size_t big)
{
    MPI_Status st;
    unsigned char *buf = mt_malloc(big + 64);
    if (phase == 1) {
        for (int k = 0; k < NMSG; k++) {
            int how = k % 3;
            if (how == 0) {
                MPI_CHECK(MPI_Recv(buf, (int)big + 64, MPI_BYTE, src, 10, MPI_COMM_WORLD, &st));
                check_msg(buf, &st, src, phase, k, big, "Recv(src, tag)");
            } else if (how == 1) {
                MPI_CHECK(MPI_Recv(buf, (int)big + 64, MPI_BYTE, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                check_msg(buf, &st, src, phase, k, big, "Recv(src, ANY_TAG)");
            } else {
                MPI_Request r;
                MPI_CHECK(MPI_Irecv(buf, (int)big + 64, MPI_BYTE, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &r));
                MPI_CHECK(MPI_Wait(&r, &st));
                check_msg(buf, &st, src, phase, k, big, "Irecv(ANY_SOURCE, tag)");
            }
        }
    } else if (phase == 2) {
        MPI_Request rq[NMSG];
        MPI_Status sts[NMSG];
        unsigned char *bufs[NMSG];
        int order[NMSG], nposted = 0;
        for (int t = 2; t >= 0; t--)
            for (int k = 0; k < NMSG; k++)
                if (msg_tag(phase, k) == 20 * phase + t) {
                    size_t n = msg_size(k, big);
                    bufs[nposted] = mt_malloc(n + 8);
                    order[nposted] = k;
                    /* the first receive of each tag uses ANY_SOURCE */
                    int s = (nposted % 4 == 0) ? MPI_ANY_SOURCE : src;
                    MPI_CHECK(MPI_Irecv(bufs[nposted], (int)n + 8, MPI_BYTE, s, 20 * phase + t,
                                        MPI_COMM_WORLD, &rq[nposted]));
                    nposted++;
                }
        CHECK(nposted == NMSG, "internal: posted %d receives (expected %d)", nposted, NMSG);
        MPI_CHECK(MPI_Waitall(NMSG, rq, sts));
        for (int i = 0; i < NMSG; i++) {
            check_msg(bufs[i], &sts[i], src, phase, order[i], big, "pre-posted Irecv per tag");
            free(bufs[i]);
        }
    } else {
        for (int k = 0; k < NMSG; k++) {
            int s = (k % 2) ? MPI_ANY_SOURCE : src;
            MPI_CHECK(MPI_Recv(buf, (int)big + 64, MPI_BYTE, s, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            check_msg(buf, &st, src, phase, k, big, "Recv(ANY_TAG)");
        }
    }
    free(buf);
}

/* Round in which pair i -> i+1 runs: no rank is in two pairs of one round. */
static int round_of(int i, int size)
{
    if (i == size - 1 && size % 2 == 1)
        return 2;
    return i % 2;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    const size_t big = size <= 8 ? (2u << 20) : (256u << 10);

    for (int round = 0; round < 3; round++) {
        int sends = round_of(rank, size) == round;
        int recvs = round_of(left, size) == round;
        if (sends && recvs) {
            CHECK(size == 1, "internal: rank both sends and receives in round %d", round);
            for (int phase = 1; phase <= 3; phase++) {
                MPI_Request rq[NMSG];
                unsigned char *bufs[NMSG];
                send_phase(0, rank, phase, big, 1, rq, bufs);
                recv_phase(0, phase, big);
                send_finish(rq, bufs);
            }
        } else if (sends) {
            for (int phase = 1; phase <= 3; phase++) {
                MPI_Request rq[NMSG];
                unsigned char *bufs[NMSG];
                send_phase(right, rank, phase, big, 0, rq, bufs);
                send_finish(rq, bufs);
            }
        } else if (recvs) {
            for (int phase = 1; phase <= 3; phase++)
                recv_phase(left, phase, big);
        }
    }
    return mt_finish();
}
