/* MPI-4.0 MPI_Isendrecv and MPI_Isendrecv_replace: data, statuses, many in flight
 * completed in any order, derived types, MPI_PROC_NULL, truncation, Test polling, and
 * independence from blocking traffic started after them. */
#define TEST_NAME "isendrecv"
#include "mpitest.h"

#define K 8
#define N 1000

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* K exchanges with different tags and sizes in flight, completed in reverse order;
   * a blocking exchange with another tag runs while they are pending. */
  int *sbuf[K], *rbuf[K];
  MPI_Request req[K];
  for (int k = 0; k < K; k++) {
    int n = k * N; /* 0 .. 7000 ints: eager and rendezvous */
    sbuf[k] = mt_malloc(n * sizeof(int) + 1);
    rbuf[k] = mt_malloc(n * sizeof(int) + 1);
    mt_fill(sbuf[k], n * sizeof(int), mt_seed(rank, right, k, 1));
    MPI_CHECK(MPI_Isendrecv(sbuf[k], n, MPI_INT, right, 100 + k, rbuf[k], n, MPI_INT, left, 100 + k, MPI_COMM_WORLD,
                            &req[k]));
  }
  int token = rank, got = -1;
  MPI_Status st;
  MPI_CHECK(MPI_Sendrecv(&token, 1, MPI_INT, left, 7, &got, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &st));
  if (got != right) FAIL("blocking exchange beside pending Isendrecvs: got %d expected %d", got, right);
  for (int k = K - 1; k >= 0; k--) {
    MPI_CHECK(MPI_Wait(&req[k], &st));
    if (req[k] != MPI_REQUEST_NULL) FAIL("request %d not freed by MPI_Wait", k);
    CHECK_STATUS(&st, MPI_INT, left, 100 + k, k * N, "Isendrecv %d", k);
    VERIFY(rbuf[k], k * N * sizeof(int), mt_seed(left, rank, k, 1), "Isendrecv %d from %d", k, left);
    free(sbuf[k]);
    free(rbuf[k]);
  }

  /* Isendrecv_replace on a strided layout, completed by MPI_Test polling. */
  MPI_Datatype vec;
  MPI_CHECK(MPI_Type_vector(50, 2, 3, MPI_DOUBLE, &vec));
  MPI_CHECK(MPI_Type_commit(&vec));
  double grid[150];
  for (int i = 0; i < 150; i++) grid[i] = (i % 3 == 2) ? -1.0 : rank * 1000.0 + i;
  MPI_Request r;
  MPI_CHECK(MPI_Isendrecv_replace(grid, 1, vec, right, 9, left, 9, MPI_COMM_WORLD, &r));
  int flag = 0;
  while (!flag) MPI_CHECK(MPI_Test(&r, &flag, &st));
  CHECK_STATUS(&st, vec, left, 9, 1, "Isendrecv_replace");
  for (int i = 0; i < 150; i++) {
    double want = (i % 3 == 2) ? -1.0 : left * 1000.0 + i;
    if (grid[i] != want) FAIL("Isendrecv_replace element %d: got %g expected %g", i, grid[i], want);
  }
  MPI_CHECK(MPI_Type_free(&vec));

  /* MPI_PROC_NULL on both sides completes at once with the null status. */
  MPI_CHECK(MPI_Isendrecv(&token, 1, MPI_INT, MPI_PROC_NULL, 1, &got, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
  MPI_CHECK(MPI_Wait(&r, &st));
  CHECK_STATUS(&st, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Isendrecv with MPI_PROC_NULL");

  /* A receive too small for the message: MPI_ERR_TRUNCATE from the wait, in the status too. */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int two[2] = {rank, rank}, one = -1;
  MPI_CHECK(MPI_Isendrecv(two, 2, MPI_INT, right, 11, &one, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &r));
  MPI_Status sts[1];
  int rc = MPI_Waitall(1, &r, sts);
  int cls = -1;
  if (rc != MPI_SUCCESS) MPI_CHECK(MPI_Error_class(rc, &cls));
  if (rc != MPI_ERR_IN_STATUS || sts[0].MPI_ERROR != MPI_ERR_TRUNCATE)
    FAIL("truncated Isendrecv: Waitall returned class %d, status error %d", cls, sts[0].MPI_ERROR);

  /* Bad arguments are reported with the right class and start nothing. */
  rc = MPI_Isendrecv(&token, -1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &r);
  MPI_CHECK(MPI_Error_class(rc, &cls));
  if (cls != MPI_ERR_COUNT) FAIL("negative send count: class %d expected MPI_ERR_COUNT", cls);
  rc = MPI_Isendrecv(&token, 1, MPI_INT, right, 1, &got, 1, MPI_INT, size + 3, 1, MPI_COMM_WORLD, &r);
  MPI_CHECK(MPI_Error_class(rc, &cls));
  if (cls != MPI_ERR_RANK) FAIL("source out of range: class %d expected MPI_ERR_RANK", cls);
  rc = MPI_Isendrecv_replace(&token, 1, MPI_DATATYPE_NULL, right, 1, left, 1, MPI_COMM_WORLD, &r);
  MPI_CHECK(MPI_Error_class(rc, &cls));
  if (cls != MPI_ERR_TYPE) FAIL("null datatype: class %d expected MPI_ERR_TYPE", cls);
  /* The failed calls left no receive posted: a message of tag 1 goes to this receive. */
  int got2 = -1;
  MPI_CHECK(MPI_Sendrecv(&token, 1, MPI_INT, right, 1, &got2, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &st));
  if (got2 != left) FAIL("after failed calls: got %d expected %d", got2, left);
  return mt_finish();
}
