/*
 * cancel_send.c - cancelling sends (pairs 2k -> 2k+1; an odd last rank sits out).
 * For a small (eager), a large (rendezvous) and a synchronous send:
 *   1. the receiver sees the message with Iprobe, does not receive it, and tells the
 *      sender; the sender cancels and tells the outcome: if cancelled, the message is gone
 *      (Iprobe finds nothing afterwards), else it arrives whole. MPI lets a send cancel
 *      fail; with the argument "strict" (Skein) it must succeed;
 *   2. the same message sent again (another tag) and received: a cancel then fails, the
 *      data arrived.
 * Run with ranks spread over processes, this exercises the cancel round trip between
 * processes; within one process, the matching queues directly.
 */
#define TEST_NAME "cancel_send"
#include "mpitest.h"

#define GO 900 /* tag of the receiver's "seen it" / "got it" notes */

static int cancelled_of(const MPI_Status *st)
{
    int c = -1;
    MPI_CHECK(MPI_Test_cancelled(st, &c));
    return c;
}

static void sender(int peer, int n, int sync, int tag, int strict)
{
    int *buf = mt_malloc(sizeof(int) * (size_t)n), note;
    MPI_Request r;
    MPI_Status st;
    for (int i = 0; i < n; i++) buf[i] = tag * 1000 + i;
    if (sync) MPI_CHECK(MPI_Issend(buf, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
    else MPI_CHECK(MPI_Isend(buf, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Recv(&note, 1, MPI_INT, peer, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); /* seen */
    MPI_CHECK(MPI_Cancel(&r));
    MPI_CHECK(MPI_Wait(&r, &st));
    note = cancelled_of(&st);
    /* MPI lets a send cancel fail; Skein withdraws any message not matched yet (strict) */
    CHECK(note || !strict, "%s send of %d ints: cancel of an unmatched message failed",
          sync ? "synchronous" : "standard", n);
    MPI_CHECK(MPI_Send(&note, 1, MPI_INT, peer, GO, MPI_COMM_WORLD)); /* cancelled or not */

    /* again (under another tag), now received before the cancel */
    for (int i = 0; i < n; i++) buf[i] = (tag + 100) * 1000 + i;
    if (sync) MPI_CHECK(MPI_Issend(buf, n, MPI_INT, peer, tag + 100, MPI_COMM_WORLD, &r));
    else MPI_CHECK(MPI_Isend(buf, n, MPI_INT, peer, tag + 100, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Recv(&note, 1, MPI_INT, peer, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); /* received */
    MPI_CHECK(MPI_Cancel(&r));
    MPI_CHECK(MPI_Wait(&r, &st));
    CHECK(cancelled_of(&st) == 0, "%s send of %d ints: a received message was cancelled",
          sync ? "synchronous" : "standard", n);
    free(buf);
}

static void receiver(int peer, int n, int tag)
{
    int flag = 0, note = 0, *buf = mt_malloc(sizeof(int) * (size_t)n);
    MPI_Status st;
    while (!flag) MPI_CHECK(MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, &st));
    MPI_CHECK(MPI_Send(&note, 1, MPI_INT, peer, GO, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Recv(&note, 1, MPI_INT, peer, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (note) { /* cancelled: gone for good */
        MPI_CHECK(MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "a cancelled message of %d ints (tag %d) can still be received", n, tag);
    } else { /* not cancelled: it must arrive whole */
        MPI_CHECK(MPI_Recv(buf, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &st));
        CHECK(buf[n - 1] == tag * 1000 + n - 1, "an uncancelled message of %d ints arrived wrong", n);
    }

    MPI_CHECK(MPI_Recv(buf, n, MPI_INT, peer, tag + 100, MPI_COMM_WORLD, &st));
    for (int i = 0; i < n; i += 97)
        CHECK(buf[i] == (tag + 100) * 1000 + i, "resent message of %d ints, element %d (expected %d got %d)", n,
              i, (tag + 100) * 1000 + i, buf[i]);
    MPI_CHECK(MPI_Send(&note, 1, MPI_INT, peer, GO, MPI_COMM_WORLD));
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int strict = argc > 1 && !strcmp(argv[1], "strict");
    const int sizes[] = {4, 1 << 18}; /* eager and rendezvous everywhere */
    /* A cancel that fails leaves a rendezvous or synchronous send waiting for a receive the
     * protocol below only posts after the cancel: other MPIs get the small standard send only. */
    for (int k = 0; k < 1 + strict; k++)
        for (int sync = 0; sync < 1 + strict; sync++) {
            int tag = 10 + 2 * k + sync;
            if (rank % 2 == 0 && rank + 1 < size) sender(rank + 1, sizes[k], sync, tag, strict);
            else if (rank % 2 == 1) receiver(rank - 1, sizes[k], tag);
        }
    return mt_finish();
}
