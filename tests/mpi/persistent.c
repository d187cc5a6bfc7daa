/*
 * persistent.c - persistent requests around a ring (self with 1 rank).
 *
 * For each mode (MPI_Send_init, MPI_Ssend_init, MPI_Rsend_init, MPI_Bsend_init)
 * and for 16 ints and 64 Ki ints, a Recv_init from the left and a send init to
 * the right are started many times with a send buffer refilled with a pattern
 * depending on (rank, mode, size, iteration) each time; Start/Startall,
 * Wait/Waitall/Testall and MPI_Request_get_status are mixed.  Rsend is only
 * started after the right neighbour confirmed that its receive is active.
 * Also checked: requests stay allocated after completion, Wait/Test on an
 * inactive persistent request return at once with an empty status, Request_free
 * of inactive (completed or never started) requests sets MPI_REQUEST_NULL,
 * persistent requests with MPI_PROC_NULL and ANY_SOURCE/ANY_TAG, and Startall
 * of 4 requests (both directions) repeated.
 */
#define TEST_NAME "persistent"
#include "mpitest.h"

enum { P_STD, P_SSEND, P_RSEND, P_BSEND, NPMODES };
static const char *const pmode_name[NPMODES] = {"Send_init", "Ssend_init", "Rsend_init",
                                                "Bsend_init"};
#define TAG_READY 90

static void check_empty_status(const MPI_Status *st, const char *what)
{
    int cnt = -1, canc = -1;
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG,
          "%s: not an empty status (expected source %d tag %d got source %d tag %d)", what,
          MPI_ANY_SOURCE, MPI_ANY_TAG, st->MPI_SOURCE, st->MPI_TAG);
    MPI_CHECK(MPI_Get_count(st, MPI_INT, &cnt));
    CHECK(cnt == 0, "%s: empty status count wrong (expected 0 got %d)", what, cnt);
    MPI_CHECK(MPI_Test_cancelled(st, &canc));
    CHECK(!canc, "%s: empty status says cancelled", what);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    static const int counts[2] = {16, 65536};

    for (int mode = 0; mode < NPMODES; mode++)
        for (int ci = 0; ci < 2; ci++) {
            const int n = counts[ci], tag = 10 * mode + ci;
            const int iters = n > 1000 ? 6 : 24;
            int *sbuf = mt_malloc(sizeof(int) * (size_t)n), *rbuf = mt_malloc(sizeof(int) * (size_t)n);
            void *bbuf = NULL;
            int bsize = 0;
            MPI_Request rr, sr, both[2];
            MPI_Status st, sts[2];

            if (mode == P_BSEND) {
                bsize = 2 * (n * (int)sizeof(int) + MPI_BSEND_OVERHEAD + 64);
                bbuf = mt_malloc((size_t)bsize);
                MPI_CHECK(MPI_Buffer_attach(bbuf, bsize));
            }
            MPI_CHECK(MPI_Recv_init(rbuf, n, MPI_INT, left, tag, MPI_COMM_WORLD, &rr));
            switch (mode) {
            case P_STD:
                MPI_CHECK(MPI_Send_init(sbuf, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sr));
                break;
            case P_SSEND:
                MPI_CHECK(MPI_Ssend_init(sbuf, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sr));
                break;
            case P_RSEND:
                MPI_CHECK(MPI_Rsend_init(sbuf, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sr));
                break;
            default:
                MPI_CHECK(MPI_Bsend_init(sbuf, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sr));
                break;
            }
            CHECK(rr != MPI_REQUEST_NULL && sr != MPI_REQUEST_NULL,
                  "%s/Recv_init returned MPI_REQUEST_NULL", pmode_name[mode]);

            for (int it = 0; it < iters; it++) {
                mt_fill(sbuf, sizeof(int) * (size_t)n, mt_seed(rank, mode, n, it));
                memset(rbuf, 0, sizeof(int) * (size_t)n);
                if (mode == P_RSEND || mode == P_BSEND) {
                    /* Rsend: the receive must be active before the send starts.
                     * Bsend: the handshake also proves that right received our
                     * previous message, so the attached buffer has room again. */
                    int tok = it, tok_in = -1;
                    MPI_CHECK(MPI_Start(&rr));
                    /* tell left my receive is active; learn that right's is */
                    MPI_CHECK(MPI_Sendrecv(&tok, 1, MPI_INT, left, TAG_READY, &tok_in, 1, MPI_INT,
                                           right, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    CHECK(tok_in == it, "ready token wrong (expected %d got %d)", it, tok_in);
                    MPI_CHECK(MPI_Start(&sr));
                    if (it % 2 == 0) {
                        MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
                        MPI_CHECK(MPI_Wait(&rr, &st));
                    } else {
                        int flag = 0;
                        both[0] = sr;
                        both[1] = rr;
                        while (!flag)
                            MPI_CHECK(MPI_Testall(2, both, &flag, sts));
                        st = sts[1];
                    }
                } else if (it % 3 == 0) {
                    both[0] = rr;
                    both[1] = sr;
                    MPI_CHECK(MPI_Startall(2, both));
                    MPI_CHECK(MPI_Waitall(2, both, sts));
                    CHECK(both[0] == rr && both[1] == sr, "Waitall changed a persistent "
                          "request handle (persistent requests must stay allocated)");
                    st = sts[0];
                } else if (it % 3 == 1) {
                    MPI_CHECK(MPI_Start(&sr));
                    MPI_CHECK(MPI_Start(&rr));
                    int flag = 0;
                    while (!flag)
                        MPI_CHECK(MPI_Request_get_status(rr, &flag, &st));
                    CHECK(rr != MPI_REQUEST_NULL, "Request_get_status freed the request");
                    MPI_Status st3;
                    MPI_CHECK(MPI_Wait(&rr, &st3));
                    CHECK(st3.MPI_SOURCE == st.MPI_SOURCE && st3.MPI_TAG == st.MPI_TAG,
                          "Wait after Request_get_status gave a different status (expected "
                          "source %d tag %d got %d %d)", st.MPI_SOURCE, st.MPI_TAG,
                          st3.MPI_SOURCE, st3.MPI_TAG);
                    MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
                } else {
                    both[0] = sr;
                    both[1] = rr;
                    MPI_CHECK(MPI_Startall(2, both));
                    int flag = 0;
                    while (!flag)
                        MPI_CHECK(MPI_Testall(2, both, &flag, sts));
                    st = sts[1];
                }
                CHECK(rr != MPI_REQUEST_NULL && sr != MPI_REQUEST_NULL,
                      "%s iteration %d: completion freed a persistent request", pmode_name[mode], it);
                CHECK_STATUS(&st, MPI_INT, left, tag, n, "%s %d ints iteration %d",
                             pmode_name[mode], n, it);
                VERIFY(rbuf, sizeof(int) * (size_t)n, mt_seed(left, mode, n, it),
                       "%s %d ints iteration %d", pmode_name[mode], n, it);
            }

            /* Inactive persistent requests: Wait/Test return an empty status. */
            MPI_CHECK(MPI_Wait(&rr, &st));
            check_empty_status(&st, "Wait on an inactive persistent receive");
            CHECK(rr != MPI_REQUEST_NULL, "Wait on an inactive persistent request freed it");
            int flag = 0;
            MPI_CHECK(MPI_Test(&sr, &flag, &st));
            CHECK(flag, "Test on an inactive persistent send returned flag 0 (expected 1)");
            MPI_CHECK(MPI_Request_free(&rr));
            MPI_CHECK(MPI_Request_free(&sr));
            CHECK(rr == MPI_REQUEST_NULL && sr == MPI_REQUEST_NULL,
                  "Request_free did not set MPI_REQUEST_NULL");
            if (mode == P_BSEND) {
                void *p = NULL;
                int sz = 0;
                MPI_CHECK(MPI_Buffer_detach(&p, &sz));
                CHECK(p == bbuf && sz == bsize, "Buffer_detach returned another buffer "
                      "(expected %p/%d got %p/%d)", bbuf, bsize, p, sz);
                free(bbuf);
            }
            free(sbuf);
            free(rbuf);
        }

    /* Never-started persistent requests can be freed. */
    {
        int x[4] = {0};
        MPI_Request r[5];
        MPI_CHECK(MPI_Send_init(x, 4, MPI_INT, right, 77, MPI_COMM_WORLD, &r[0]));
        MPI_CHECK(MPI_Ssend_init(x, 4, MPI_INT, right, 77, MPI_COMM_WORLD, &r[1]));
        MPI_CHECK(MPI_Rsend_init(x, 4, MPI_INT, right, 77, MPI_COMM_WORLD, &r[2]));
        MPI_CHECK(MPI_Bsend_init(x, 4, MPI_INT, right, 77, MPI_COMM_WORLD, &r[3]));
        MPI_CHECK(MPI_Recv_init(x, 4, MPI_INT, left, 77, MPI_COMM_WORLD, &r[4]));
        for (int i = 0; i < 5; i++) {
            MPI_CHECK(MPI_Request_free(&r[i]));
            CHECK(r[i] == MPI_REQUEST_NULL, "Request_free of never-started request %d did not "
                  "set MPI_REQUEST_NULL", i);
        }
    }

    /* MPI_PROC_NULL persistent requests. */
    {
        int x = 42;
        MPI_Request r[2];
        MPI_Status sts[2];
        MPI_CHECK(MPI_Send_init(&x, 1, MPI_INT, MPI_PROC_NULL, 78, MPI_COMM_WORLD, &r[0]));
        MPI_CHECK(MPI_Recv_init(&x, 1, MPI_INT, MPI_PROC_NULL, 78, MPI_COMM_WORLD, &r[1]));
        for (int it = 0; it < 3; it++) {
            MPI_CHECK(MPI_Startall(2, r));
            MPI_CHECK(MPI_Waitall(2, r, sts));
            if (!mt_old_mpich()) /* same MPICH < 4.2 bug as for MPI_Irecv */
                CHECK_STATUS(&sts[1], MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, 0,
                             "persistent receive from MPI_PROC_NULL");
            CHECK(x == 42, "persistent receive from MPI_PROC_NULL modified the buffer");
        }
        MPI_CHECK(MPI_Request_free(&r[0]));
        MPI_CHECK(MPI_Request_free(&r[1]));
    }

    /* Both directions, 4 requests, wildcard persistent receive from the right. */
    {
        enum { N = 1000 };
        int *s = mt_malloc(sizeof(int) * N), *a = mt_malloc(sizeof(int) * N),
            *b = mt_malloc(sizeof(int) * N);
        MPI_Request r[4];
        MPI_Status sts[4];
        MPI_CHECK(MPI_Recv_init(a, N, MPI_INT, left, 80, MPI_COMM_WORLD, &r[0]));
        /* Leftward receive: ANY_SOURCE when left == right (only one peer sends to us),
           otherwise ANY_TAG from right (right only sends tag 81 to us). */
        if (size <= 2)
            MPI_CHECK(MPI_Recv_init(b, N, MPI_INT, MPI_ANY_SOURCE, 81, MPI_COMM_WORLD, &r[1]));
        else
            MPI_CHECK(MPI_Recv_init(b, N, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]));
        MPI_CHECK(MPI_Send_init(s, N, MPI_INT, right, 80, MPI_COMM_WORLD, &r[2]));
        MPI_CHECK(MPI_Send_init(s, N, MPI_INT, left, 81, MPI_COMM_WORLD, &r[3]));
        for (int it = 0; it < 20; it++) {
            mt_fill(s, sizeof(int) * N, mt_seed(rank, 99, it, 0));
            MPI_CHECK(MPI_Startall(4, r));
            MPI_CHECK(MPI_Waitall(4, r, sts));
            CHECK_STATUS(&sts[0], MPI_INT, left, 80, N, "Startall of 4, rightward, it %d", it);
            CHECK_STATUS(&sts[1], MPI_INT, right, 81, N, "Startall of 4, leftward, it %d", it);
            VERIFY(a, sizeof(int) * N, mt_seed(left, 99, it, 0), "Startall rightward it %d", it);
            VERIFY(b, sizeof(int) * N, mt_seed(right, 99, it, 0), "Startall leftward it %d", it);
        }
        for (int i = 0; i < 4; i++)
            MPI_CHECK(MPI_Request_free(&r[i]));
        free(s);
        free(a);
        free(b);
    }
    return mt_finish();
}
