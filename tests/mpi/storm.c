/*
 * storm.c - nonblocking storm: every rank posts M receives from every rank
 * (itself included) and M sends to every rank, then completes them all with
 * one of the completion calls.  M = clamp(512 / size, 2, 32) messages per
 * ordered pair and round.  Rounds:
 *   0 Waitall   1 Waitany   2 Waitsome   3 Testall   4 Testany   5 Testsome
 *   6 Irsend after a barrier (all receives are posted before it) + Waitall
 *   7 Issend, receives all MPI_ANY_SOURCE/MPI_ANY_TAG, Waitsome
 * Message k from s to d has tag k (receives use tag k or MPI_ANY_TAG), an
 * int header (s, d, k, round) and a pattern; lengths vary from 4 ints to 8 KiB
 * (and 20000 ints every 64th message except in round 7).  After every round
 * the requests must all be MPI_REQUEST_NULL and the "nothing left" results of
 * Waitany/Testany/Waitsome/Testsome are checked.
 */
#define TEST_NAME "storm"
#include "mpitest.h"

#define NROUNDS 8
#define ANY_MAXLEN 64
static const char *const round_name[NROUNDS] = {
    "Waitall", "Waitany", "Waitsome", "Testall", "Testany", "Testsome", "Irsend+Waitall",
    "Issend+ANY_SOURCE+Waitsome"};

static int msg_len(int s, int d, int k, int round)
{
    uint64_t h = mt_seed(s, d, k, round);
    if (round == 7)
        return 4 + (int)(h % (ANY_MAXLEN - 3));
    if (h % 64 == 0)
        return 20000;
    if (h % 16 == 1)
        return 2048;
    return 4 + (int)(h % 60);
}

static void fill_msg(int *b, int s, int d, int k, int round)
{
    int len = msg_len(s, d, k, round);
    b[0] = s;
    b[1] = d;
    b[2] = k;
    b[3] = round;
    mt_fill(b + 4, (size_t)(len - 4) * sizeof(int), mt_seed(s, d, k, round + 100));
}

static void check_msg(const int *b, const MPI_Status *st, int s, int d, int k, int round)
{
    int len = msg_len(s, d, k, round);
    CHECK_STATUS(st, MPI_INT, s, k, len, "round %d (%s): message %d from rank %d", round,
                 round_name[round], k, s);
    CHECK(b[0] == s && b[1] == d && b[2] == k && b[3] == round,
          "round %d (%s): header wrong (expected src %d dst %d seq %d round %d got %d %d %d %d)",
          round, round_name[round], s, d, k, round, b[0], b[1], b[2], b[3]);
    VERIFY(b + 4, (size_t)(len - 4) * sizeof(int), mt_seed(s, d, k, round + 100),
           "round %d (%s): message %d from rank %d", round, round_name[round], k, s);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    int M = 512 / size;
    if (M > 32)
        M = 32;
    if (M < 2)
        M = 2;
    const int nr = M * size;  /* receives == sends per rank */
    const int nreq = 2 * nr;  /* receives first, then sends */
    MPI_Request *rq = mt_malloc(sizeof(MPI_Request) * (size_t)nreq);
    MPI_Status *sts = mt_malloc(sizeof(MPI_Status) * (size_t)nreq);
    int *idx = mt_malloc(sizeof(int) * (size_t)nreq);
    char *done = mt_malloc((size_t)nreq);
    int **rbuf = mt_malloc(sizeof(int *) * (size_t)nr);
    int **sbuf = mt_malloc(sizeof(int *) * (size_t)nr);
    int *rsrc = mt_malloc(sizeof(int) * (size_t)nr), *rseq = mt_malloc(sizeof(int) * (size_t)nr);
    int *next = mt_malloc(sizeof(int) * (size_t)size);

    for (int round = 0; round < NROUNDS; round++) {
        /* Post the receives: for each k, from every source (spread order). */
        for (int k = 0, i = 0; k < M; k++)
            for (int j = 0; j < size; j++, i++) {
                int s = (rank - j + size) % size;
                int len = round == 7 ? ANY_MAXLEN : msg_len(s, rank, k, round);
                rbuf[i] = mt_malloc(sizeof(int) * (size_t)len);
                rsrc[i] = s;
                rseq[i] = k;
                if (round == 7)
                    MPI_CHECK(MPI_Irecv(rbuf[i], len, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                        MPI_COMM_WORLD, &rq[i]));
                else
                    MPI_CHECK(MPI_Irecv(rbuf[i], len, MPI_INT, s, (k + j) % 2 ? MPI_ANY_TAG : k,
                                        MPI_COMM_WORLD, &rq[i]));
            }
        if (round == 6)
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every receive is now posted */
        for (int k = 0, i = 0; k < M; k++)
            for (int j = 0; j < size; j++, i++) {
                int d = (rank + j) % size;
                int len = msg_len(rank, d, k, round);
                sbuf[i] = mt_malloc(sizeof(int) * (size_t)len);
                fill_msg(sbuf[i], rank, d, k, round);
                MPI_Request *r = &rq[nr + i];
                if (round == 6)
                    MPI_CHECK(MPI_Irsend(sbuf[i], len, MPI_INT, d, k, MPI_COMM_WORLD, r));
                else if (round == 7)
                    MPI_CHECK(MPI_Issend(sbuf[i], len, MPI_INT, d, k, MPI_COMM_WORLD, r));
                else
                    MPI_CHECK(MPI_Isend(sbuf[i], len, MPI_INT, d, k, MPI_COMM_WORLD, r));
            }

        /* Complete everything. */
        memset(done, 0, (size_t)nreq);
        int ndone = 0, flag = 0, outcount = 0, index = 0;
        switch (round) {
        case 0:
        case 6:
            MPI_CHECK(MPI_Waitall(nreq, rq, sts));
            ndone = nreq;
            break;
        case 1:
            while (ndone < nreq) {
                MPI_Status st;
                MPI_CHECK(MPI_Waitany(nreq, rq, &index, &st));
                CHECK(index >= 0 && index < nreq && !done[index],
                      "Waitany returned a bad or repeated index (expected a fresh index in "
                      "0..%d got %d) after %d completions", nreq - 1, index, ndone);
                CHECK(rq[index] == MPI_REQUEST_NULL, "Waitany did not free request %d", index);
                done[index] = 1;
                sts[index] = st;
                ndone++;
            }
            MPI_CHECK(MPI_Waitany(nreq, rq, &index, MPI_STATUS_IGNORE));
            CHECK(index == MPI_UNDEFINED, "Waitany on all-null requests: index wrong "
                  "(expected MPI_UNDEFINED=%d got %d)", MPI_UNDEFINED, index);
            break;
        case 2:
        case 7:
            while (ndone < nreq) {
                MPI_Status *tmp = mt_malloc(sizeof(MPI_Status) * (size_t)nreq);
                MPI_CHECK(MPI_Waitsome(nreq, rq, &outcount, idx, tmp));
                CHECK(outcount >= 1 && outcount <= nreq - ndone,
                      "Waitsome outcount wrong (expected 1..%d got %d)", nreq - ndone, outcount);
                for (int i = 0; i < outcount; i++) {
                    CHECK(idx[i] >= 0 && idx[i] < nreq && !done[idx[i]],
                          "Waitsome returned a bad or repeated index (got %d)", idx[i]);
                    done[idx[i]] = 1;
                    sts[idx[i]] = tmp[i];
                }
                ndone += outcount;
                free(tmp);
            }
            MPI_CHECK(MPI_Waitsome(nreq, rq, &outcount, idx, MPI_STATUSES_IGNORE));
            CHECK(outcount == MPI_UNDEFINED, "Waitsome on all-null requests: outcount wrong "
                  "(expected MPI_UNDEFINED=%d got %d)", MPI_UNDEFINED, outcount);
            break;
        case 3:
            do
                MPI_CHECK(MPI_Testall(nreq, rq, &flag, sts));
            while (!flag);
            ndone = nreq;
            MPI_CHECK(MPI_Testall(nreq, rq, &flag, MPI_STATUSES_IGNORE));
            CHECK(flag, "Testall on all-null requests: flag wrong (expected true got false)");
            break;
        case 4:
            while (ndone < nreq) {
                MPI_Status st;
                MPI_CHECK(MPI_Testany(nreq, rq, &index, &flag, &st));
                if (!flag) {
                    CHECK(index == MPI_UNDEFINED, "Testany with flag false: index wrong "
                          "(expected MPI_UNDEFINED got %d)", index);
                    continue;
                }
                CHECK(index >= 0 && index < nreq && !done[index],
                      "Testany returned a bad or repeated index (got %d)", index);
                done[index] = 1;
                sts[index] = st;
                ndone++;
            }
            MPI_CHECK(MPI_Testany(nreq, rq, &index, &flag, MPI_STATUS_IGNORE));
            CHECK(flag && index == MPI_UNDEFINED, "Testany on all-null requests wrong "
                  "(expected flag 1 index MPI_UNDEFINED got flag %d index %d)", flag, index);
            break;
        case 5:
            while (ndone < nreq) {
                MPI_Status *tmp = mt_malloc(sizeof(MPI_Status) * (size_t)nreq);
                MPI_CHECK(MPI_Testsome(nreq, rq, &outcount, idx, tmp));
                CHECK(outcount >= 0 && outcount <= nreq - ndone,
                      "Testsome outcount wrong (expected 0..%d got %d)", nreq - ndone, outcount);
                for (int i = 0; i < outcount; i++) {
                    CHECK(idx[i] >= 0 && idx[i] < nreq && !done[idx[i]],
                          "Testsome returned a bad or repeated index (got %d)", idx[i]);
                    done[idx[i]] = 1;
                    sts[idx[i]] = tmp[i];
                }
                ndone += outcount;
                free(tmp);
            }
            MPI_CHECK(MPI_Testsome(nreq, rq, &outcount, idx, MPI_STATUSES_IGNORE));
            CHECK(outcount == MPI_UNDEFINED, "Testsome on all-null requests: outcount wrong "
                  "(expected MPI_UNDEFINED=%d got %d)", MPI_UNDEFINED, outcount);
            break;
        }
        for (int i = 0; i < nreq; i++)
            CHECK(rq[i] == MPI_REQUEST_NULL, "round %d (%s): request %d not MPI_REQUEST_NULL "
                  "after completion", round, round_name[round], i);

        /* Verify the receives. */
        if (round == 7) {
            /* Per-source order must follow the posting order of the receives. */
            for (int s = 0; s < size; s++)
                next[s] = 0;
            for (int i = 0; i < nr; i++) {
                int s = sts[i].MPI_SOURCE;
                CHECK(s >= 0 && s < size, "round 7: receive %d: status.MPI_SOURCE out of range "
                      "(expected 0..%d got %d)", i, size - 1, s);
                CHECK(sts[i].MPI_TAG == next[s], "round 7: receive %d (posting order) got "
                      "message from rank %d out of order (expected tag %d got %d)", i, s,
                      next[s], sts[i].MPI_TAG);
                check_msg(rbuf[i], &sts[i], s, rank, next[s], round);
                next[s]++;
            }
            for (int s = 0; s < size; s++)
                CHECK(next[s] == M, "round 7: wrong number of messages from rank %d "
                      "(expected %d got %d)", s, M, next[s]);
        } else {
            for (int i = 0; i < nr; i++)
                check_msg(rbuf[i], &sts[i], rsrc[i], rank, rseq[i], round);
        }
        for (int i = 0; i < nr; i++) {
            free(rbuf[i]);
            free(sbuf[i]);
        }
    }

    free(rq);
    free(sts);
    free(idx);
    free(done);
    free(rbuf);
    free(sbuf);
    free(rsrc);
    free(rseq);
    free(next);
    return mt_finish();
}
