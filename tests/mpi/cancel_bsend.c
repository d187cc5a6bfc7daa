/* MPI_Cancel of buffered sends (pairs 2k -> 2k+1; an odd last rank sits out): an
 * MPI_Ibsend and a started MPI_Bsend_init whose message no receive has matched are
 * cancelled (Test_cancelled true after Wait), the receiver never sees them, and their room
 * in the attached buffer is free again: the buffer holds one message, and a second
 * buffered send of the same size right after the cancel succeeds. Small (eager) and large
 * (rendezvous) messages. A buffered send already received cannot be cancelled. */
#define TEST_NAME "cancel_bsend"
#include "mpitest.h"

#define NOTE 900

static void sender(int peer, int n, int round) {
  int bytes = n * (int)sizeof(int);
  int bufsize = bytes + MPI_BSEND_OVERHEAD;
  char *attached = mt_malloc((size_t)bufsize);
  int *data = mt_malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++) data[i] = round * 1000 + i;
  MPI_CHECK(MPI_Buffer_attach(attached, bufsize));
  MPI_Status st;
  int flag = -1;
  for (int persistent = 0; persistent < 2; persistent++) {
    int tag = 10 * round + persistent;
    MPI_Request r;
    if (persistent) {
      MPI_CHECK(MPI_Bsend_init(data, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
      MPI_CHECK(MPI_Start(&r));
    } else {
      MPI_CHECK(MPI_Ibsend(data, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
    }
    MPI_CHECK(MPI_Cancel(&r));
    MPI_CHECK(MPI_Wait(&r, &st));
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "%s of %d bytes not cancelled", persistent ? "Bsend_init" : "Ibsend", bytes);
    if (persistent) MPI_CHECK(MPI_Request_free(&r));
    /* the room is free again: this one fits only if the cancelled one left */
    MPI_CHECK(MPI_Bsend(data, n, MPI_INT, peer, tag + 5, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Send(&tag, 1, MPI_INT, peer, NOTE, MPI_COMM_WORLD));
    int note;
    MPI_CHECK(MPI_Recv(&note, 1, MPI_INT, peer, NOTE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  /* received already: the cancel fails */
  MPI_Request r;
  MPI_CHECK(MPI_Ibsend(data, n, MPI_INT, peer, 10 * round + 7, MPI_COMM_WORLD, &r));
  int note;
  MPI_CHECK(MPI_Recv(&note, 1, MPI_INT, peer, NOTE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_Cancel(&r));
  MPI_CHECK(MPI_Wait(&r, &st));
  MPI_CHECK(MPI_Test_cancelled(&st, &flag));
  CHECK(!flag, "an Ibsend already received was cancelled");
  void *detached;
  int dsize;
  MPI_CHECK(MPI_Buffer_detach(&detached, &dsize));
  free(attached);
  free(data);
}

static void receiver(int peer, int n, int round) {
  int *got = mt_malloc(sizeof(int) * (size_t)n);
  for (int persistent = 0; persistent < 2; persistent++) {
    int tag, flag = -1;
    MPI_CHECK(MPI_Recv(&tag, 1, MPI_INT, peer, NOTE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_Status st;
    MPI_CHECK(MPI_Recv(got, n, MPI_INT, peer, tag + 5, MPI_COMM_WORLD, &st));
    for (int i = 0; i < n; i++) CHECK(got[i] == round * 1000 + i, "data[%d]", i);
    /* the second arrived after the cancelled one would have: it is gone */
    MPI_CHECK(MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "the cancelled message (tag %d) arrived", tag);
    MPI_CHECK(MPI_Send(&tag, 1, MPI_INT, peer, NOTE, MPI_COMM_WORLD));
  }
  MPI_CHECK(MPI_Recv(got, n, MPI_INT, peer, 10 * round + 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_Send(&n, 1, MPI_INT, peer, NOTE, MPI_COMM_WORLD));
  free(got);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int sizes[] = {4, 1 << 18}; /* 16 bytes, 1 MiB */
  for (int round = 0; round < 2; round++) {
    if (rank % 2 == 0 && rank + 1 < size) sender(rank + 1, sizes[round], round);
    else if (rank % 2 == 1) receiver(rank - 1, sizes[round], round);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  }
  MPI_Finalize();
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
