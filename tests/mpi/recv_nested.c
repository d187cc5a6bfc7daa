/* A blocking receive inside the error handler of a blocking receive.
 *
 * Rank 0 sends 16 ints (tag 1), then 4 ints (tag 2), then 1 int (tag 3). Rank 1 receives
 * the first into room for 8: the truncation calls the communicator's error handler, which
 * receives the second message with MPI_Recv. The outer call must still report its own
 * message (source 0, tag 1, MPI_ERR_TRUNCATE), the inner one its own (tag 2, 4 ints, the
 * values sent), and a plain receive afterwards must work. Skein receives into the rank's
 * own request unless the rank is MPI_THREAD_MULTIPLE: this checks that the outer call
 * reads nothing of that request once the handler has run. args: "multiple" initializes
 * with MPI_THREAD_MULTIPLE (each receive on its own stack). */
#define TEST_NAME "recv_nested"
#include "mpitest.h"
#include <stdatomic.h>

typedef struct nested {
  int called, inner_rc, inner_count;
  int got[4];
  MPI_Status inner;
} nested;

/* The handler finds its record through an attribute of the communicator; the keyval is
 * created first in every rank, so the shared global holds the same value. */
SKEIN_SHARED static _Atomic int g_key = MPI_KEYVAL_INVALID;

static void on_error(MPI_Comm *comm, int *code, ...) {
  (void)code;
  nested *n = NULL;
  int flag = 0;
  MPI_Comm_get_attr(*comm, g_key, &n, &flag);
  if (!flag || !n) return;
  n->called++;
  n->inner_rc = MPI_Recv(n->got, 4, MPI_INT, 0, 2, *comm, &n->inner);
  MPI_Get_count(&n->inner, MPI_INT, &n->inner_count);
}

int main(int argc, char **argv) {
  int multiple = argc > 1 && !strcmp(argv[1], "multiple"), provided = 0;
  if (multiple) {
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2, "needs 2 ranks (got %d)", size);
  int key;
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
  g_key = key;
  MPI_Comm comm;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));

  if (rank == 0) {
    int big[16], small[4], one = 42;
    for (int i = 0; i < 16; i++) big[i] = i;
    for (int i = 0; i < 4; i++) small[i] = 100 + i;
    MPI_CHECK(MPI_Send(big, 16, MPI_INT, 1, 1, comm));
    MPI_CHECK(MPI_Send(small, 4, MPI_INT, 1, 2, comm));
    MPI_CHECK(MPI_Send(&one, 1, MPI_INT, 1, 3, comm));
  } else if (rank == 1) {
    nested n = {0};
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_create_errhandler(on_error, &eh));
    MPI_CHECK(MPI_Comm_set_errhandler(comm, eh));
    MPI_CHECK(MPI_Comm_set_attr(comm, key, &n));
    int buf[8];
    MPI_Status st;
    st.MPI_SOURCE = st.MPI_TAG = -5;
    int rc = MPI_Recv(buf, 8, MPI_INT, 0, 1, comm, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "outer receive returned class %d (expected MPI_ERR_TRUNCATE %d)", cls,
          MPI_ERR_TRUNCATE);
    CHECK(n.called == 1, "error handler called %d times (expected 1)", n.called);
    CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 1, "outer status source %d tag %d (expected 0, 1)", st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK(n.inner_rc == MPI_SUCCESS, "inner receive returned %d", n.inner_rc);
    CHECK(n.inner.MPI_SOURCE == 0 && n.inner.MPI_TAG == 2 && n.inner_count == 4,
          "inner status source %d tag %d count %d (expected 0, 2, 4)", n.inner.MPI_SOURCE, n.inner.MPI_TAG,
          n.inner_count);
    for (int i = 0; i < 4; i++) CHECK(n.got[i] == 100 + i, "inner got[%d] = %d (expected %d)", i, n.got[i], 100 + i);
    MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    int one = 0;
    MPI_CHECK(MPI_Recv(&one, 1, MPI_INT, 0, 3, comm, &st));
    CHECK(one == 42 && st.MPI_TAG == 3, "plain receive after: %d tag %d (expected 42, 3)", one, st.MPI_TAG);
    MPI_CHECK(MPI_Errhandler_free(&eh));
  }
  MPI_CHECK(MPI_Comm_free(&comm));
  MPI_CHECK(MPI_Comm_free_keyval(&key));
  MPI_Finalize();
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
