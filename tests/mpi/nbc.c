/* Nonblocking collectives: several outstanding at once, completed in any order, mixed
 * with blocking collectives on the same communicator, progressing while ranks poll
 * with MPI_Test, and Ibarrier semantics. */
#define TEST_NAME "nbc"
#include "mpitest.h"

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  const int n = 1000;
  int *a = mt_malloc(sizeof(int) * n), *b = mt_malloc(sizeof(int) * n), *c = mt_malloc(sizeof(int) * n);
  int *g = mt_malloc(sizeof(int) * (size_t)size);
  for (int round = 0; round < 20; round++) {
    for (int k = 0; k < n; k++) a[k] = rank + k + round;
    int bval = rank == round % size ? 4242 + round : -1;
    MPI_Request rq[4];
    MPI_CHECK(MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]));
    MPI_CHECK(MPI_Ibcast(&bval, 1, MPI_INT, round % size, MPI_COMM_WORLD, &rq[1]));
    MPI_CHECK(MPI_Iallgather(&rank, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD, &rq[2]));
    MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[3]));
    /* a blocking collective after them must see them complete first, in order */
    int one = 1, total = 0;
    MPI_CHECK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == size, "blocking allreduce after nonblocking ones: %d", total);
    /* complete in reverse order, polling */
    for (int i = 3; i >= 0; i--) {
      int flag = 0;
      while (!flag) MPI_CHECK(MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE));
      CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not freed", i);
    }
    for (int k = 0; k < n; k++) {
      long long want = (long long)size * (k + round) + (long long)size * (size - 1) / 2;
      CHECK(b[k] == want, "round %d iallreduce [%d] = %d, expected %lld", round, k, b[k], want);
    }
    CHECK(bval == 4242 + round, "round %d ibcast got %d", round, bval);
    for (int j = 0; j < size; j++) CHECK(g[j] == j, "round %d iallgather [%d] = %d", round, j, g[j]);
  }
  /* Ibarrier: nobody leaves it before everybody entered (rank 0 enters 50 ms late) */
  MPI_Request br;
  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_CHECK(MPI_Barrier(dup));
  double entered = 0;
  if (rank == 0) {
    mt_poll_delay(0.05);
    entered = MPI_Wtime();
  }
  MPI_CHECK(MPI_Ibarrier(dup, &br));
  MPI_CHECK(MPI_Wait(&br, MPI_STATUS_IGNORE));
  double left = MPI_Wtime();
  /* compared with rank 0's entry time, sent afterwards: exact whatever the scheduling */
  MPI_CHECK(MPI_Bcast(&entered, 1, MPI_DOUBLE, 0, dup));
  CHECK(left >= entered, "left the Ibarrier %.6f s before rank 0 entered it", entered - left);
  /* Ireduce to every root with a 2-rank-at-a-time overlap */
  for (int root = 0; root < size; root++) {
    int v = rank + 1, r = -1;
    MPI_Request q;
    MPI_CHECK(MPI_Ireduce(&v, &r, 1, MPI_INT, MPI_PROD, root, dup, &q));
    MPI_CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    if (rank == root) {
      long long f = 1;
      for (int j = 1; j <= size; j++) f = (f * j) % 2147483648LL;
      CHECK(size > 12 || r == (int)f, "ireduce prod root %d = %d", root, r);
    }
  }
  MPI_CHECK(MPI_Comm_free(&dup));
  /* Comm_idup: the new communicator is usable once the request completes */
  MPI_Comm idup = MPI_COMM_NULL;
  MPI_Request iq;
  int sum = 0, me1 = rank + 1;
  MPI_CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &idup, &iq));
  MPI_CHECK(MPI_Wait(&iq, MPI_STATUS_IGNORE));
  CHECK(idup != MPI_COMM_NULL, "Comm_idup gave MPI_COMM_NULL");
  MPI_CHECK(MPI_Allreduce(&me1, &sum, 1, MPI_INT, MPI_SUM, idup));
  CHECK(sum == size * (size + 1) / 2, "allreduce on idup %d", sum);
  MPI_CHECK(MPI_Comm_free(&idup));
  free(a); free(b); free(c); free(g);
  return mt_finish();
}
