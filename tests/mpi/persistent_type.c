/* A persistent request keeps its datatype: MPI_Start still works after MPI_Type_free
 * (MPI-3.1 section 4.1.9: freeing a type does not affect operations that use it). */
#define TEST_NAME "persistent_type"
#include "mpitest.h"

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  /* every other int of 8: a vector type on both sides */
  MPI_Datatype every_other;
  MPI_CHECK(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other));
  MPI_CHECK(MPI_Type_commit(&every_other));
  int out[8], in[8];
  MPI_Request rq[2];
  MPI_CHECK(MPI_Send_init(out, 1, every_other, next, 9, MPI_COMM_WORLD, &rq[0]));
  MPI_CHECK(MPI_Recv_init(in, 1, every_other, prev, 9, MPI_COMM_WORLD, &rq[1]));
  MPI_CHECK(MPI_Type_free(&every_other));
  CHECK(every_other == MPI_DATATYPE_NULL, "Type_free did not null the handle");
  for (int round = 0; round < 5; round++) {
    for (int k = 0; k < 8; k++) {
      out[k] = rank * 100 + round * 10 + k;
      in[k] = -1;
    }
    MPI_CHECK(MPI_Startall(2, rq));
    MPI_CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 8; k++) {
      int want = k % 2 ? -1 : prev * 100 + round * 10 + k;
      CHECK(in[k] == want, "round %d in[%d] = %d, expected %d", round, k, in[k], want);
    }
  }
  MPI_CHECK(MPI_Request_free(&rq[0]));
  MPI_CHECK(MPI_Request_free(&rq[1]));
  return mt_finish();
}
