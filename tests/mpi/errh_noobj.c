/* Errors associated with no object are raised on MPI_COMM_WORLD (MPI-3.1, section 8.3, as
 * Debian's MPICH 4.0 and Open MPI 4.1 do; MPI-4.0 moved them to MPI_COMM_SELF): a handler
 * set on MPI_COMM_WORLD sees a bad count of MPI_Type_contiguous, a bad group handle, a bad
 * info handle, an invalid communicator handle, and is passed MPI_COMM_WORLD; MPI_COMM_SELF's
 * handler (set too) is not called. Errors on a valid communicator go to that communicator's
 * handler: MPI_COMM_SELF's sees a bad rank on MPI_COMM_SELF. */
#define TEST_NAME "errh_noobj"
#include "mpitest.h"

/* Per-rank counters: ranks are threads, so each handler call finds its rank's counters
 * through the rank number (MPI_Comm_rank of MPI_COMM_WORLD is valid in a handler). */
#define MAX_RANKS 256
SKEIN_SHARED static int g_world_calls[MAX_RANKS], g_world_class[MAX_RANKS], g_self_calls[MAX_RANKS];
SKEIN_SHARED static MPI_Comm g_world_comm[MAX_RANKS];

static int me(void) {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static void on_world(MPI_Comm *comm, int *code, ...) {
  int r = me();
  g_world_calls[r]++;
  g_world_comm[r] = *comm;
  MPI_Error_class(*code, &g_world_class[r]);
}

static void on_self(MPI_Comm *comm, int *code, ...) {
  (void)comm;
  (void)code;
  g_self_calls[me()]++;
}

static void expect_world(int rc, int cls, const char *what) {
  int r = me(), got = -1;
  CHECK(rc != MPI_SUCCESS, "%s: succeeded", what);
  MPI_Error_class(rc, &got);
  CHECK(got == cls, "%s: returned class %d, expected %d", what, got, cls);
  CHECK(g_world_calls[r] == 1, "%s: MPI_COMM_WORLD's handler called %d times (expected 1)", what, g_world_calls[r]);
  CHECK(g_world_class[r] == cls, "%s: handler saw class %d, expected %d", what, g_world_class[r], cls);
  CHECK(g_world_comm[r] == MPI_COMM_WORLD, "%s: handler got comm %#x, expected MPI_COMM_WORLD", what,
        (unsigned)g_world_comm[r]);
  CHECK(g_self_calls[r] == 0, "%s: MPI_COMM_SELF's handler called %d times", what, g_self_calls[r]);
  g_world_calls[r] = 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size <= MAX_RANKS, "at most %d ranks", MAX_RANKS);
  MPI_Errhandler eh_self, eh_world;
  MPI_CHECK(MPI_Comm_create_errhandler(on_self, &eh_self));
  MPI_CHECK(MPI_Comm_create_errhandler(on_world, &eh_world));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh_self));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh_world));

  MPI_Datatype t;
  expect_world(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT, "MPI_Type_contiguous(count=-1)");
  int gsize;
  expect_world(MPI_Group_size((MPI_Group)12345, &gsize), MPI_ERR_GROUP, "MPI_Group_size(bad group)");
  int nkeys;
  expect_world(MPI_Info_get_nkeys((MPI_Info)12345, &nkeys), MPI_ERR_INFO, "MPI_Info_get_nkeys(bad info)");
  int csize;
  expect_world(MPI_Comm_size((MPI_Comm)12345, &csize), MPI_ERR_COMM, "MPI_Comm_size(bad communicator)");

  /* an error on a valid communicator is that communicator's */
  int x = 0;
  int rc = MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_SELF);
  CHECK(rc != MPI_SUCCESS, "MPI_Send to rank 1 of MPI_COMM_SELF succeeded");
  CHECK(g_self_calls[rank] == 1, "MPI_Send on MPI_COMM_SELF: its handler called %d times", g_self_calls[rank]);
  CHECK(g_world_calls[rank] == 0, "MPI_Send on MPI_COMM_SELF: MPI_COMM_WORLD's handler called");

  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
  MPI_CHECK(MPI_Errhandler_free(&eh_self));
  MPI_CHECK(MPI_Errhandler_free(&eh_world));
  return mt_finish();
}
