/*
 * ssend.c - synchronous-mode semantics.
 *
 * Ranks pair up (2k sends, 2k+1 receives); with an odd rank count the last
 * rank tests against itself.
 *
 * Part 1 (Issend + Test, causal, for sizes 0 B .. 1 MiB): the sender starts
 *   MPI_Issend; the receiver MPI_Probe's the message (a probe is not a receive),
 *   tells the sender so, then waits for a "go" message before it posts the
 *   receive.  Until the sender sends "go", MPI_Test on the Issend must return
 *   false every time.  After "go", MPI_Wait completes and the data is checked.
 * Part 2 (blocking Ssend, with MPI_Wtime): the receiver waits ~30 ms, records
 *   t_post = MPI_Wtime() and only then posts the receive; the sender's
 *   MPI_Ssend must return at t >= t_post.  (Assumes one clock for the ranks of
 *   one node, true for a thread-based runtime and for CLOCK_MONOTONIC.)
 * Part 3: Ssend / Issend to a pre-posted receive complete normally.
 * Self (1 rank or odd last rank): Issend to self, Iprobe sees it, Test stays
 *   false until the receive is posted, then Wait completes.
 */
#define TEST_NAME "ssend"
#include "mpitest.h"

static const int part1_sizes[] = {0, 8, 65536, 1 << 20};
#define NP1 (int)(sizeof part1_sizes / sizeof part1_sizes[0])
#define MIN_TESTS 200
#define MIN_TEST_TIME 0.005

static void test_false_for_a_while(MPI_Request *r, const char *what, int n)
{
    double t0 = MPI_Wtime();
    int flag = 0, i = 0;
    for (; i < MIN_TESTS || MPI_Wtime() - t0 < MIN_TEST_TIME; i++) {
        MPI_Status st;
        MPI_CHECK(MPI_Test(r, &flag, &st));
        CHECK(!flag, "%s of %d bytes completed (MPI_Test returned true at call %d) although "
              "the receiver has not posted a matching receive (expected false got true)", what,
              n, i + 1);
        CHECK(*r != MPI_REQUEST_NULL, "MPI_Test with flag false freed the request");
    }
}

static void sender(int peer, int rank)
{
    MPI_Status st;
    int token = 0;
    for (int i = 0; i < NP1; i++) {
        int n = part1_sizes[i];
        unsigned char *buf = mt_malloc((size_t)n);
        MPI_Request r;
        mt_fill(buf, (size_t)n, mt_seed(rank, n, 1, 0));
        MPI_CHECK(MPI_Issend(buf, n, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD, &r));
        /* The receiver has probed the message but not received it. */
        MPI_CHECK(MPI_Recv(&token, 1, MPI_INT, peer, 300 + i, MPI_COMM_WORLD, &st));
        CHECK(token == n, "probe report wrong (expected count %d got %d)", n, token);
        test_false_for_a_while(&r, "MPI_Issend", n);
        MPI_CHECK(MPI_Send(&token, 1, MPI_INT, peer, 200 + i, MPI_COMM_WORLD)); /* go */
        MPI_CHECK(MPI_Wait(&r, &st));
        CHECK(r == MPI_REQUEST_NULL, "MPI_Wait did not free the Issend request");
        free(buf);
    }

    /* Part 2: blocking Ssend must not return before the receive is posted. */
    for (int rep = 0; rep < 2; rep++) {
        int n = rep == 0 ? 4 : 200000;
        unsigned char *buf = mt_malloc((size_t)n);
        double t_post = 0;
        mt_fill(buf, (size_t)n, mt_seed(rank, n, 2, rep));
        MPI_CHECK(MPI_Recv(&token, 1, MPI_INT, peer, 400 + rep, MPI_COMM_WORLD, &st)); /* ready */
        MPI_CHECK(MPI_Ssend(buf, n, MPI_BYTE, peer, 500 + rep, MPI_COMM_WORLD));
        double t_done = MPI_Wtime();
        MPI_CHECK(MPI_Recv(&t_post, 1, MPI_DOUBLE, peer, 600 + rep, MPI_COMM_WORLD, &st));
        CHECK(t_done >= t_post, "MPI_Ssend of %d bytes returned before the receiver posted the "
              "receive (expected return time >= %.6f got %.6f)", n, t_post, t_done);
        free(buf);
    }

    /* Part 3: to a pre-posted receive. */
    {
        int n = 100000;
        unsigned char *buf = mt_malloc((size_t)n);
        MPI_Request r;
        MPI_CHECK(MPI_Recv(&token, 1, MPI_INT, peer, 700, MPI_COMM_WORLD, &st)); /* posted */
        mt_fill(buf, (size_t)n, mt_seed(rank, n, 3, 0));
        MPI_CHECK(MPI_Ssend(buf, 0, MPI_BYTE, peer, 701, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Issend(buf, n, MPI_BYTE, peer, 702, MPI_COMM_WORLD, &r));
        int flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        CHECK(r == MPI_REQUEST_NULL, "MPI_Test with flag true did not free the request");
        free(buf);
    }
}

static void receiver(int peer)
{
    MPI_Status st;
    int token = 0;
    for (int i = 0; i < NP1; i++) {
        int n = part1_sizes[i], cnt = -1;
        unsigned char *buf = mt_malloc((size_t)n + 16);
        MPI_CHECK(MPI_Probe(peer, 100 + i, MPI_COMM_WORLD, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        MPI_CHECK(MPI_Send(&cnt, 1, MPI_INT, peer, 300 + i, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Recv(&token, 1, MPI_INT, peer, 200 + i, MPI_COMM_WORLD, &st)); /* go */
        MPI_CHECK(MPI_Recv(buf, n + 16, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, MPI_BYTE, peer, 100 + i, n, "Issend message");
        VERIFY(buf, (size_t)n, mt_seed(peer, n, 1, 0), "Issend message of %d bytes", n);
        free(buf);
    }

    for (int rep = 0; rep < 2; rep++) {
        int n = rep == 0 ? 4 : 200000;
        unsigned char *buf = mt_malloc((size_t)n);
        MPI_CHECK(MPI_Send(&token, 1, MPI_INT, peer, 400 + rep, MPI_COMM_WORLD)); /* ready */
        mt_poll_delay(0.03);
        double t_post = MPI_Wtime();
        MPI_CHECK(MPI_Recv(buf, n, MPI_BYTE, peer, 500 + rep, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, MPI_BYTE, peer, 500 + rep, n, "Ssend message");
        VERIFY(buf, (size_t)n, mt_seed(peer, n, 2, rep), "Ssend message of %d bytes", n);
        MPI_CHECK(MPI_Send(&t_post, 1, MPI_DOUBLE, peer, 600 + rep, MPI_COMM_WORLD));
        free(buf);
    }

    {
        int n = 100000;
        unsigned char *buf = mt_malloc((size_t)n);
        MPI_Request r[2];
        MPI_Status sts[2];
        MPI_CHECK(MPI_Irecv(&token, 0, MPI_BYTE, peer, 701, MPI_COMM_WORLD, &r[0]));
        MPI_CHECK(MPI_Irecv(buf, n, MPI_BYTE, peer, 702, MPI_COMM_WORLD, &r[1]));
        MPI_CHECK(MPI_Send(&token, 1, MPI_INT, peer, 700, MPI_COMM_WORLD)); /* posted */
        MPI_CHECK(MPI_Waitall(2, r, sts));
        CHECK_STATUS(&sts[0], MPI_BYTE, peer, 701, 0, "0-byte Ssend");
        CHECK_STATUS(&sts[1], MPI_BYTE, peer, 702, n, "Issend to pre-posted receive");
        VERIFY(buf, (size_t)n, mt_seed(peer, n, 3, 0), "Issend to pre-posted receive");
        free(buf);
    }
}

static void self_test(int rank)
{
    for (int i = 0; i < NP1; i++) {
        int n = part1_sizes[i], flag = 0;
        unsigned char *sbuf = mt_malloc((size_t)n), *rbuf = mt_malloc((size_t)n);
        MPI_Request r;
        MPI_Status st;
        mt_fill(sbuf, (size_t)n, mt_seed(rank, n, 4, 0));
        MPI_CHECK(MPI_Issend(sbuf, n, MPI_BYTE, rank, 800 + i, MPI_COMM_WORLD, &r));
        do
            MPI_CHECK(MPI_Iprobe(rank, 800 + i, MPI_COMM_WORLD, &flag, &st));
        while (!flag);
        CHECK_STATUS(&st, MPI_BYTE, rank, 800 + i, n, "Iprobe of Issend to self");
        test_false_for_a_while(&r, "MPI_Issend to self", n);
        MPI_CHECK(MPI_Recv(rbuf, n, MPI_BYTE, rank, 800 + i, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, MPI_BYTE, rank, 800 + i, n, "Issend to self");
        VERIFY(rbuf, (size_t)n, mt_seed(rank, n, 4, 0), "Issend to self of %d bytes", n);
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        free(sbuf);
        free(rbuf);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    if (rank % 2 == 0 && rank + 1 < size)
        sender(rank + 1, rank);
    else if (rank % 2 == 1)
        receiver(rank - 1);
    else
        self_test(rank);
    if (size > 1 && rank == 0)
        self_test(rank); /* everyone's rank 0 also does the self test */
    return mt_finish();
}
