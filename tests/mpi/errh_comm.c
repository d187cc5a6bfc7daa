/* An error raised inside a call on a communicator goes to that communicator's error
 * handler, with that communicator passed to it: a handler made by Comm_create_errhandler
 * and set on a Comm_dup of MPI_COMM_WORLD (whose own handler must not be called) sees
 * every error of calls on the dup — point-to-point arguments, truncation found by
 * MPI_Wait/MPI_Test/MPI_Recv, collectives, attributes, topologies, Pack with the dup,
 * Comm_call_errhandler — and the error class. */
#define TEST_NAME "errh_comm"
#include "mpitest.h"
#include <stdatomic.h>

typedef struct seen {
  int calls, last_class;
  MPI_Comm last_comm;
} seen;

/* Handlers find their counters through a communicator attribute. Its keyval is the same
 * value in every rank (created first, in the same order), so the one shared global holds
 * the same value whichever rank stores it. */
SKEIN_SHARED static _Atomic int g_key_dup = MPI_KEYVAL_INVALID;

static void on_dup(MPI_Comm *comm, int *code, ...) {
  seen *s;
  int flag;
  MPI_Comm_get_attr(*comm, g_key_dup, &s, &flag);
  if (!flag) {
    printf("FAIL %s: handler of the dup called with a communicator without the attribute\n", TEST_NAME);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  s->calls++;
  MPI_Error_class(*code, &s->last_class);
  s->last_comm = *comm;
}

static void on_world(MPI_Comm *comm, int *code, ...) {
  (void)comm;
  printf("FAIL %s: MPI_COMM_WORLD's handler called for an error on the dup (code %d)\n", TEST_NAME, *code);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void expect(seen *s, MPI_Comm dup, int rc, int before, int cls, const char *what) {
  int got = -1;
  if (rc == MPI_SUCCESS) FAIL("%s: succeeded", what);
  MPI_Error_class(rc, &got);
  CHECK(got == cls, "%s: returned class %d, expected %d", what, got, cls);
  CHECK(s->calls == before + 1, "%s: dup's handler called %d times (expected 1)", what, s->calls - before);
  CHECK(s->last_class == cls, "%s: handler saw class %d, expected %d", what, s->last_class, cls);
  CHECK(s->last_comm == dup, "%s: handler got comm %#x, expected the dup %#x", what, (unsigned)s->last_comm,
        (unsigned)dup);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* every rank creates the keyval in the same order: same value in every rank */
  int key;
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
  g_key_dup = key;
  MPI_Errhandler eh_world, eh_dup;
  MPI_CHECK(MPI_Comm_create_errhandler(on_world, &eh_world));
  MPI_CHECK(MPI_Comm_create_errhandler(on_dup, &eh_dup));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh_world));
  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  seen s = {0, -1, MPI_COMM_NULL};
  MPI_CHECK(MPI_Comm_set_attr(dup, key, &s));
  MPI_CHECK(MPI_Comm_set_errhandler(dup, eh_dup));
  MPI_CHECK(MPI_Errhandler_free(&eh_dup)); /* still in use by dup */

  int buf[8] = {0}, b;
  MPI_Request req;
  MPI_Status st;
  b = s.calls;
  expect(&s, dup, MPI_Send(buf, 1, MPI_INT, size, 0, dup), b, MPI_ERR_RANK, "Send to rank size");
  b = s.calls;
  expect(&s, dup, MPI_Send(buf, -1, MPI_INT, 0, 0, dup), b, MPI_ERR_COUNT, "Send count -1");
  b = s.calls;
  expect(&s, dup, MPI_Isend(buf, 1, MPI_DATATYPE_NULL, 0, 0, dup, &req), b, MPI_ERR_TYPE, "Isend DATATYPE_NULL");
  b = s.calls;
  expect(&s, dup, MPI_Recv(buf, 1, MPI_INT, 0, -5, dup, &st), b, MPI_ERR_TAG, "Recv tag -5");
  b = s.calls;
  expect(&s, dup, MPI_Bcast(buf, 1, MPI_INT, size, dup), b, MPI_ERR_ROOT, "Bcast root size");
  b = s.calls;
  expect(&s, dup, MPI_Allreduce(buf, buf + 1, 1, MPI_INT, MPI_OP_NULL, dup), b, MPI_ERR_OP, "Allreduce OP_NULL");
  b = s.calls;
  expect(&s, dup, MPI_Comm_set_attr(dup, 12345, buf), b, MPI_ERR_KEYVAL, "Comm_set_attr bad keyval");
  b = s.calls;
  int pos = 0;
  expect(&s, dup, MPI_Pack(buf, 1, MPI_DATATYPE_NULL, buf + 4, 16, &pos, dup), b, MPI_ERR_TYPE, "Pack bad type");
  b = s.calls;
  int coords[2];
  expect(&s, dup, MPI_Cart_coords(dup, 0, 2, coords), b, MPI_ERR_TOPOLOGY, "Cart_coords without topology");
  b = s.calls;
  MPI_CHECK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
  CHECK(s.calls == b + 1 && s.last_comm == dup && s.last_class == MPI_ERR_OTHER, "Comm_call_errhandler");

  /* truncation, found when the receive completes: Recv, Wait, Test */
  int big[4] = {1, 2, 3, 4};
  int to = (rank + 1) % size, from = (rank + size - 1) % size;
  for (int how = 0; how < 3; how++) {
    MPI_Request sr;
    MPI_CHECK(MPI_Isend(big, 4, MPI_INT, to, 7, dup, &sr));
    b = s.calls;
    if (how == 0) {
      expect(&s, dup, MPI_Recv(buf, 2, MPI_INT, from, 7, dup, &st), b, MPI_ERR_TRUNCATE, "Recv truncated");
    } else {
      MPI_CHECK(MPI_Irecv(buf, 2, MPI_INT, from, 7, dup, &req));
      int rc, flag = 0;
      if (how == 1)
        rc = MPI_Wait(&req, &st);
      else
        do rc = MPI_Test(&req, &flag, &st); while (rc == MPI_SUCCESS && !flag);
      expect(&s, dup, rc, b, MPI_ERR_TRUNCATE, how == 1 ? "Wait on a truncated receive" : "Test on a truncated receive");
    }
    MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
  }

  /* multiple completion: MPI_ERR_IN_STATUS goes to the failed request's communicator,
   * not to that of another request in the array (here MPI_COMM_WORLD, listed last) */
  for (int how = 0; how < 3; how++) {
    MPI_Request sr[2], rr[2];
    MPI_Status sts[2];
    int small[2];
    MPI_CHECK(MPI_Isend(big, 4, MPI_INT, to, 8, dup, &sr[0]));
    MPI_CHECK(MPI_Isend(big, 1, MPI_INT, to, 9, MPI_COMM_WORLD, &sr[1]));
    MPI_CHECK(MPI_Irecv(buf, 2, MPI_INT, from, 8, dup, &rr[0]));
    MPI_CHECK(MPI_Irecv(small, 1, MPI_INT, from, 9, MPI_COMM_WORLD, &rr[1]));
    MPI_CHECK(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));
    b = s.calls;
    int rc, flag = 0, outcount = 0, idx[2];
    if (how == 0) {
      rc = MPI_Waitall(2, rr, sts);
    } else if (how == 1) {
      do rc = MPI_Testall(2, rr, &flag, sts); while (rc == MPI_SUCCESS && !flag);
    } else {
      /* both complete before Waitsome looks: wait for the second through a probe first */
      MPI_CHECK(MPI_Wait(&rr[1], MPI_STATUS_IGNORE));
      rr[1] = MPI_REQUEST_NULL;
      do rc = MPI_Waitsome(2, rr, &outcount, idx, sts); while (rc == MPI_SUCCESS && outcount == 0);
    }
    expect(&s, dup, rc, b, MPI_ERR_IN_STATUS, how == 0 ? "Waitall" : how == 1 ? "Testall" : "Waitsome");
    CHECK(sts[0].MPI_ERROR == MPI_ERR_TRUNCATE, "status of the truncated receive: error %d", sts[0].MPI_ERROR);
  }

  /* a second dup inherits the handler; errors there name the new communicator */
  MPI_Comm dup2;
  MPI_CHECK(MPI_Comm_dup(dup, &dup2));
  seen s2 = {0, -1, MPI_COMM_NULL};
  MPI_CHECK(MPI_Comm_set_attr(dup2, key, &s2));
  b = s2.calls;
  expect(&s2, dup2, MPI_Send(buf, 1, MPI_INT, -7, 0, dup2), b, MPI_ERR_RANK, "Send on the dup of the dup");
  MPI_CHECK(MPI_Comm_free(&dup2));

  MPI_CHECK(MPI_Barrier(dup));
  MPI_CHECK(MPI_Comm_free(&dup));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MPI_CHECK(MPI_Errhandler_free(&eh_world));
  MPI_CHECK(MPI_Comm_free_keyval(&key));
  MPI_Finalize();
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
