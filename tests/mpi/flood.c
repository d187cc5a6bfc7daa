/*
 * flood.c - flow control: a fast sender floods a receiver that is not
 * receiving yet (the "crash BG/L MPI in two easy steps" case).
 *
 * Usage: flood [RSS_LIMIT_MIB]
 *
 * Phases (all deadlock-free with any correct MPI: the receiver only delays,
 * it never waits for the sender to finish before receiving):
 *   A. rank 0 -> rank 1: 30000 x 4 KiB with MPI_Send; rank 1 spends 0.3 s in
 *      MPI_Iprobe before it starts receiving;
 *   B. rank 0 -> rank 1: 200000 x 64 B with MPI_Send; rank 1 delays 0.2 s;
 *   C. rank 0 -> rank 1: 2000 x 4 KiB with MPI_Isend, then MPI_Waitall;
 *      rank 1 delays 0.1 s (with 1 rank: rank 0 to itself);
 *   D. every rank except 1 -> rank 1: 8000 x 1 KiB in total with MPI_Send;
 *      rank 1 delays 0.1 s, then receives with MPI_ANY_SOURCE and checks the
 *      per-source order.
 * Every message carries its sequence number and a pattern; rank 1 checks the
 * order and the contents of every message.  At the end, rank 0 prints the
 * peak RSS (max of getrusage(RUSAGE_SELF).ru_maxrss over ranks) and fails if
 * it exceeds RSS_LIMIT_MIB (when given and > 0).
 */
#define _DEFAULT_SOURCE
#define TEST_NAME "flood"
#include "mpitest.h"
#include <sys/resource.h>

static void fill_msg(unsigned char *b, size_t n, int src, int seq, int phase)
{
    int32_t h[2] = {src, seq};
    mt_fill(b, n, mt_seed(src, seq, phase, 11));
    if (n >= 8)
        memcpy(b, h, 8);
}

static void check_msg(const unsigned char *b, size_t n, const MPI_Status *st, int src, int seq,
                      int tag, int phase)
{
    int32_t h[2];
    CHECK_STATUS(st, MPI_BYTE, src, tag, (int)n, "phase %c message %d from rank %d", 'A' + phase,
                 seq, src);
    memcpy(h, b, 8);
    CHECK(h[0] == src && h[1] == seq, "phase %c: message out of order or lost (expected src %d "
          "seq %d got src %d seq %d)", 'A' + phase, src, seq, h[0], h[1]);
    if (n > 8) {
        unsigned char *tmp = mt_malloc(n);
        fill_msg(tmp, n, src, seq, phase);
        CHECK(memcmp(tmp, b, n) == 0, "phase %c message %d from rank %d: data corrupted",
              'A' + phase, seq, src);
        free(tmp);
    }
}

/* One sender -> rank 1 (or self) flood with blocking or nonblocking sends. */
static void one_to_one(int rank, int size, int phase, int nmsg, size_t n, double delay,
                       int nonblocking)
{
    const int tag = 100 + phase;
    const int sender = 0, receiver = size > 1 ? 1 : 0;
    MPI_Request *rq = NULL;
    unsigned char *sbufs = NULL;
    if (rank == sender) {
        if (nonblocking) {
            rq = mt_malloc(sizeof(MPI_Request) * (size_t)nmsg);
            sbufs = mt_malloc(n * (size_t)nmsg);
            for (int i = 0; i < nmsg; i++) {
                fill_msg(sbufs + n * (size_t)i, n, rank, i, phase);
                MPI_CHECK(MPI_Isend(sbufs + n * (size_t)i, (int)n, MPI_BYTE, receiver, tag,
                                    MPI_COMM_WORLD, &rq[i]));
            }
        } else {
            unsigned char *b = mt_malloc(n);
            for (int i = 0; i < nmsg; i++) {
                fill_msg(b, n, rank, i, phase);
                MPI_CHECK(MPI_Send(b, (int)n, MPI_BYTE, receiver, tag, MPI_COMM_WORLD));
            }
            free(b);
        }
    }
    if (rank == receiver) {
        unsigned char *b = mt_malloc(n);
        MPI_Status st;
        if (receiver != sender)
            mt_poll_delay(delay);
        for (int i = 0; i < nmsg; i++) {
            MPI_CHECK(MPI_Recv(b, (int)n, MPI_BYTE, sender, tag, MPI_COMM_WORLD, &st));
            check_msg(b, n, &st, sender, i, tag, phase);
        }
        free(b);
    }
    if (rq) {
        MPI_CHECK(MPI_Waitall(nmsg, rq, MPI_STATUSES_IGNORE));
        free(rq);
        free(sbufs);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    double limit_mib = argc > 1 ? atof(argv[1]) : 0.0;
    double t0 = MPI_Wtime();

    if (size >= 2) {
        one_to_one(rank, size, 0, 30000, 4096, 0.3, 0);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        one_to_one(rank, size, 1, 200000, 64, 0.2, 0);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    one_to_one(rank, size, 2, 2000, 4096, 0.1, 1);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    if (size >= 3) {
        const int phase = 3, tag = 103;
        const size_t n = 1024;
        int per = 8000 / (size - 1);
        if (per < 50)
            per = 50;
        if (rank != 1) {
            unsigned char *b = mt_malloc(n);
            for (int i = 0; i < per; i++) {
                fill_msg(b, n, rank, i, phase);
                MPI_CHECK(MPI_Send(b, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD));
            }
            free(b);
        } else {
            unsigned char *b = mt_malloc(n);
            int *next = mt_malloc(sizeof(int) * (size_t)size);
            MPI_Status st;
            for (int s = 0; s < size; s++)
                next[s] = 0;
            mt_poll_delay(0.1);
            for (int i = 0; i < per * (size - 1); i++) {
                MPI_CHECK(MPI_Recv(b, (int)n, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
                int s = st.MPI_SOURCE;
                CHECK(s >= 0 && s < size && s != 1, "phase D: bad source (expected a rank "
                      "other than 1 got %d)", s);
                check_msg(b, n, &st, s, next[s], tag, phase);
                next[s]++;
            }
            for (int s = 0; s < size; s++)
                CHECK(s == 1 || next[s] == per, "phase D: wrong number of messages from rank %d "
                      "(expected %d got %d)", s, per, next[s]);
            free(b);
            free(next);
        }
    }

    /* Peak RSS, max over ranks (ranks may be processes or threads). */
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    CHECK(getrusage(RUSAGE_SELF, &ru) == 0, "getrusage failed");
    long kib = ru.ru_maxrss;
    if (rank != 0) {
        MPI_CHECK(MPI_Send(&kib, 1, MPI_LONG, 0, 999, MPI_COMM_WORLD));
    } else {
        long maxkib = kib;
        for (int s = 1; s < size; s++) {
            long v = 0;
            MPI_CHECK(MPI_Recv(&v, 1, MPI_LONG, s, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            if (v > maxkib)
                maxkib = v;
        }
        double mib = (double)maxkib / 1024.0;
        printf("flood: %d ranks, %.2f s, peak RSS %.1f MiB (limit %s%s)\n", size,
               MPI_Wtime() - t0, mib, limit_mib > 0 ? argv[1] : "none",
               limit_mib > 0 ? " MiB" : "");
        fflush(stdout);
        CHECK(limit_mib <= 0 || mib <= limit_mib, "peak RSS too high (expected <= %.1f MiB got "
              "%.1f MiB)", limit_mib, mib);
    }
    return mt_finish();
}
