/*
 * cancel.c - cancelling receives (ring: each rank receives from its left
 * neighbour; with 1 rank, from itself).
 *   1. Irecv for a tag nobody sends, Cancel, Wait: Test_cancelled is true, the
 *      request is freed, the buffer is untouched.
 *   2. Irecv(ANY_SOURCE, ANY_TAG), Cancel, Test until flag: cancelled.
 *   3. Several Irecvs cancelled and completed with Waitall: all cancelled.
 *   4. Request_get_status on a cancelled request: flag true, request not
 *      freed, Test_cancelled true; then Wait frees it.
 *   5. Persistent receive: Start, Cancel, Wait -> cancelled; then (after a
 *      barrier) the same request is started again and receives a real message.
 *   6. A cancelled receive does not consume a message sent later with its tag.
 *   7. A receive that is already matched (the Issend to it has completed)
 *      cannot be cancelled: Test_cancelled false, data delivered.
 */
#define TEST_NAME "cancel"
#include "mpitest.h"

static void expect_cancelled(const MPI_Status *st, int want, const char *what)
{
    int c = -1;
    MPI_CHECK(MPI_Test_cancelled(st, &c));
    CHECK(!!c == want, "%s: MPI_Test_cancelled wrong (expected %s got %s)", what,
          want ? "true" : "false", c ? "true" : "false");
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    MPI_Status st;
    MPI_Request r;
    int buf[64];

    /* 1 */
    for (int i = 0; i < 64; i++)
        buf[i] = -7;
    MPI_CHECK(MPI_Irecv(buf, 64, MPI_INT, left, MT_NEVER_TAG, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Cancel(&r));
    CHECK(r != MPI_REQUEST_NULL, "MPI_Cancel freed the request (it must only mark it)");
    MPI_CHECK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Wait on a cancelled request did not free it");
    expect_cancelled(&st, 1, "Irecv + Cancel + Wait");
    for (int i = 0; i < 64; i++)
        CHECK(buf[i] == -7, "cancelled receive modified its buffer (expected -7 got %d at %d)",
              buf[i], i);

    /* 2: nothing is in flight towards this rank here */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Irecv(buf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Cancel(&r));
    {
        int flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Test(&r, &flag, &st));
    }
    CHECK(r == MPI_REQUEST_NULL, "MPI_Test with flag true on a cancelled request did not free it");
    expect_cancelled(&st, 1, "Irecv(ANY_SOURCE, ANY_TAG) + Cancel + Test");

    /* 3 */
    {
        MPI_Request rq[4];
        MPI_Status sts[4];
        for (int i = 0; i < 4; i++) {
            MPI_CHECK(MPI_Irecv(buf + 8 * i, 8, MPI_INT, i % 2 ? MPI_ANY_SOURCE : left,
                                MT_NEVER_TAG - 1 - i, MPI_COMM_WORLD, &rq[i]));
            MPI_CHECK(MPI_Cancel(&rq[i]));
        }
        MPI_CHECK(MPI_Waitall(4, rq, sts));
        for (int i = 0; i < 4; i++)
            expect_cancelled(&sts[i], 1, "Waitall of cancelled receives");
    }

    /* 4 */
    {
        int flag = 0;
        MPI_CHECK(MPI_Irecv(buf, 64, MPI_INT, left, MT_NEVER_TAG, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Cancel(&r));
        while (!flag)
            MPI_CHECK(MPI_Request_get_status(r, &flag, &st));
        CHECK(r != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
        expect_cancelled(&st, 1, "Request_get_status of a cancelled receive");
        MPI_CHECK(MPI_Wait(&r, &st));
        CHECK(r == MPI_REQUEST_NULL, "MPI_Wait did not free the request");
        expect_cancelled(&st, 1, "Wait after Request_get_status");
    }

    /* 5 */
    {
        MPI_Request pr;
        int out[16], in[16];
        MPI_CHECK(MPI_Recv_init(in, 16, MPI_INT, left, 20, MPI_COMM_WORLD, &pr));
        MPI_CHECK(MPI_Start(&pr));
        MPI_CHECK(MPI_Cancel(&pr));
        MPI_CHECK(MPI_Wait(&pr, &st));
        CHECK(pr != MPI_REQUEST_NULL, "Wait freed a persistent request after cancel");
        expect_cancelled(&st, 1, "persistent receive Start + Cancel + Wait");
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every rank has cancelled */
        for (int i = 0; i < 16; i++)
            out[i] = rank * 100 + i;
        MPI_CHECK(MPI_Start(&pr));
        MPI_CHECK(MPI_Send(out, 16, MPI_INT, right, 20, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Wait(&pr, &st));
        expect_cancelled(&st, 0, "restarted persistent receive");
        CHECK_STATUS(&st, MPI_INT, left, 20, 16, "restarted persistent receive");
        for (int i = 0; i < 16; i++)
            CHECK(in[i] == left * 100 + i, "restarted persistent receive: data wrong at %d "
                  "(expected %d got %d)", i, left * 100 + i, in[i]);
        MPI_CHECK(MPI_Request_free(&pr));
    }

    /* 6 */
    {
        int x = rank + 1000, y = -1;
        MPI_CHECK(MPI_Irecv(&y, 1, MPI_INT, left, 40, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Cancel(&r));
        MPI_CHECK(MPI_Wait(&r, &st));
        expect_cancelled(&st, 1, "Irecv(left, 40) + Cancel");
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every rank has cancelled */
        MPI_Request sr;
        MPI_CHECK(MPI_Isend(&x, 1, MPI_INT, right, 40, MPI_COMM_WORLD, &sr));
        MPI_CHECK(MPI_Recv(&y, 1, MPI_INT, left, 40, MPI_COMM_WORLD, &st));
        CHECK(y == left + 1000, "message sent after a cancelled receive: data wrong (expected "
              "%d got %d)", left + 1000, y);
        MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    }

    /* 7: a matched receive is not cancelled. */
    {
        enum { N = 5000 };
        int *out = mt_malloc(sizeof(int) * N), *in = mt_malloc(sizeof(int) * N);
        int done_out = 1, done_in = 0;
        MPI_Request sr, dr;
        for (int i = 0; i < N; i++)
            out[i] = rank * 7 + i;
        MPI_CHECK(MPI_Irecv(in, N, MPI_INT, left, 30, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Issend(out, N, MPI_INT, right, 30, MPI_COMM_WORLD, &sr));
        /* Issend completion: right's receive has matched our message. */
        MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Isend(&done_out, 1, MPI_INT, right, 31, MPI_COMM_WORLD, &dr));
        /* left's Issend to us completed before it sent this: our Irecv is matched */
        MPI_CHECK(MPI_Recv(&done_in, 1, MPI_INT, left, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Cancel(&r));
        MPI_CHECK(MPI_Wait(&r, &st));
        expect_cancelled(&st, 0, "Cancel of an already matched receive");
        CHECK_STATUS(&st, MPI_INT, left, 30, N, "matched receive after Cancel");
        for (int i = 0; i < N; i++)
            CHECK(in[i] == left * 7 + i, "matched receive after Cancel: data wrong at %d "
                  "(expected %d got %d)", i, left * 7 + i, in[i]);
        MPI_CHECK(MPI_Wait(&dr, MPI_STATUS_IGNORE));
        free(out);
        free(in);
    }
    return mt_finish();
}
