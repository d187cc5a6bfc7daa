/* Generalized requests: MPI_Grequest_start / MPI_Grequest_complete with query, free and
 * cancel functions (counted through extra_state), waited on by Wait, Waitall, Waitany,
 * Waitsome, Test, Testall, Testany, Testsome and Request_get_status, next to ordinary
 * requests; completed by another thread of the rank while the rank waits; the status the
 * query function fills (source, tag, element count, cancelled); the cancel function gets
 * `complete`; Request_free before completion defers the free function to
 * Grequest_complete; an error returned by the query function is returned by Wait. */
#define TEST_NAME "grequest"
#include "mpitest.h"
#include <pthread.h>
#include <unistd.h>

typedef struct state {
  int queries, frees, cancels, last_complete;
  int query_rc;
  int id;
} state;

static int query_fn(void *extra, MPI_Status *st) {
  state *s = extra;
  s->queries++;
  st->MPI_SOURCE = 100 + s->id;
  st->MPI_TAG = 200 + s->id;
  MPI_Status_set_elements(st, MPI_INT, s->id);
  MPI_Status_set_cancelled(st, s->cancels > 0);
  return s->query_rc;
}
static int free_fn(void *extra) {
  ((state *)extra)->frees++;
  return MPI_SUCCESS;
}
static int cancel_fn(void *extra, int complete) {
  state *s = extra;
  s->cancels++;
  s->last_complete = complete;
  return MPI_SUCCESS;
}

static MPI_Request start(state *s, int id) {
  memset(s, 0, sizeof *s);
  s->id = id;
  MPI_Request r;
  MPI_CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, s, &r));
  return r;
}

static void check_done(const state *s, const MPI_Status *st, const char *how) {
  CHECK(s->queries == 1 && s->frees == 1, "%s: query %d free %d (expected 1 and 1)", how, s->queries, s->frees);
  if (st) {
    int count = -1;
    MPI_CHECK(MPI_Get_count(st, MPI_INT, &count));
    CHECK(st->MPI_SOURCE == 100 + s->id && st->MPI_TAG == 200 + s->id && count == s->id,
          "%s: status source %d tag %d count %d", how, st->MPI_SOURCE, st->MPI_TAG, count);
  }
}

static void *completer(void *arg) {
  usleep(20000);
  MPI_Grequest_complete(*(MPI_Request *)arg);
  return NULL;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  state s[4];
  MPI_Status st, sts[4];
  MPI_Request r[4];
  int flag, idx, out, idxs[4];

  /* Wait and Test */
  r[0] = start(&s[0], 3);
  MPI_CHECK(MPI_Test(&r[0], &flag, &st));
  CHECK(!flag && s[0].queries == 0, "Test of an incomplete generalized request: flag %d", flag);
  MPI_CHECK(MPI_Grequest_complete(r[0]));
  MPI_CHECK(MPI_Wait(&r[0], &st));
  CHECK(r[0] == MPI_REQUEST_NULL, "Wait did not free the request");
  check_done(&s[0], &st, "Wait");
  r[0] = start(&s[0], 4);
  MPI_CHECK(MPI_Grequest_complete(r[0]));
  MPI_CHECK(MPI_Test(&r[0], &flag, &st));
  CHECK(flag, "Test of a completed generalized request");
  check_done(&s[0], &st, "Test");

  /* Request_get_status: query only, then Wait: query and free */
  r[0] = start(&s[0], 5);
  MPI_CHECK(MPI_Grequest_complete(r[0]));
  MPI_CHECK(MPI_Request_get_status(r[0], &flag, &st));
  CHECK(flag && s[0].queries == 1 && s[0].frees == 0 && st.MPI_TAG == 205, "Request_get_status");
  MPI_CHECK(MPI_Wait(&r[0], &st));
  CHECK(s[0].queries == 2 && s[0].frees == 1, "Wait after Request_get_status: query %d free %d", s[0].queries,
        s[0].frees);

  /* the multiple completion calls, next to an ordinary receive */
  int to = (rank + 1) % size, from = (rank + size - 1) % size, x = rank, y = -1;
  for (int how = 0; how < 6; how++) {
    MPI_Request sr;
    MPI_CHECK(MPI_Isend(&x, 1, MPI_INT, to, how, MPI_COMM_WORLD, &sr));
    r[0] = start(&s[0], 1);
    MPI_CHECK(MPI_Irecv(&y, 1, MPI_INT, from, how, MPI_COMM_WORLD, &r[1]));
    r[2] = start(&s[2], 2);
    MPI_CHECK(MPI_Grequest_complete(r[2]));
    MPI_CHECK(MPI_Grequest_complete(r[0]));
    int done = 0;
    while (done < 3) {
      switch (how) {
      case 0: MPI_CHECK(MPI_Waitall(3, r, sts)); done = 3; break;
      case 1: MPI_CHECK(MPI_Testall(3, r, &flag, sts)); if (flag) done = 3; break;
      case 2: MPI_CHECK(MPI_Waitany(3, r, &idx, &st)); done++; break;
      case 3: MPI_CHECK(MPI_Testany(3, r, &idx, &flag, &st)); if (flag) done++; break;
      case 4: MPI_CHECK(MPI_Waitsome(3, r, &out, idxs, sts)); done += out; break;
      default: MPI_CHECK(MPI_Testsome(3, r, &out, idxs, sts)); done += out; break;
      }
    }
    static const char *names[] = {"Waitall", "Testall", "Waitany", "Testany", "Waitsome", "Testsome"};
    check_done(&s[0], how < 2 ? &sts[0] : NULL, names[how]);
    check_done(&s[2], how < 2 ? &sts[2] : NULL, names[how]);
    CHECK(y == from, "%s: received %d", names[how], y);
    MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
  }

  /* completed by another thread while the rank waits */
  r[0] = start(&s[0], 6);
  MPI_Request copy = r[0];
  pthread_t th;
  CHECK(pthread_create(&th, NULL, completer, &copy) == 0, "pthread_create");
  MPI_CHECK(MPI_Wait(&r[0], &st));
  pthread_join(th, NULL);
  check_done(&s[0], &st, "Wait for another thread's Grequest_complete");

  /* cancel: the function learns whether it completed; the query reports it */
  r[0] = start(&s[0], 7);
  MPI_CHECK(MPI_Cancel(&r[0]));
  CHECK(s[0].cancels == 1 && s[0].last_complete == 0, "cancel function: calls %d complete %d", s[0].cancels,
        s[0].last_complete);
  MPI_CHECK(MPI_Grequest_complete(r[0]));
  MPI_CHECK(MPI_Wait(&r[0], &st));
  MPI_CHECK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag, "a cancelled generalized request: Test_cancelled false");

  /* Request_free first: the free function runs at Grequest_complete */
  r[0] = start(&s[0], 8);
  copy = r[0];
  MPI_CHECK(MPI_Request_free(&r[0]));
  CHECK(r[0] == MPI_REQUEST_NULL && s[0].frees == 0, "Request_free: frees %d", s[0].frees);
  MPI_CHECK(MPI_Grequest_complete(copy));
  CHECK(s[0].frees == 1 && s[0].queries == 0, "Grequest_complete after Request_free: frees %d queries %d",
        s[0].frees, s[0].queries);

  /* an error from the query function */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* errors of no object (MPI-4.0) */
  r[0] = start(&s[0], 9);
  s[0].query_rc = MPI_ERR_OTHER;
  MPI_CHECK(MPI_Grequest_complete(r[0]));
  int rc = MPI_Wait(&r[0], &st), cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OTHER && s[0].frees == 1, "query error: Wait returned class %d, frees %d", cls, s[0].frees);

  MPI_Finalize();
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
