/* MPI_Finalize runs the delete callbacks of MPI_COMM_SELF's attributes first (MPI-3.1
 * section 8.7.1), in every rank, each with that rank's own value. */
#define TEST_NAME "finalize_attr"
#include "mpitest.h"

static int on_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm; (void)keyval; (void)extra;
  *(int *)value += 1;
  return MPI_SUCCESS;
}

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, key, deleted = 0;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &key, NULL));
  MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, key, &deleted));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_CHECK(MPI_Finalize());
  if (deleted != 1) {
    printf("FAIL finalize_attr: rank %d: the delete callback ran %d times, expected 1\n", rank, deleted);
    return 1;
  }
  if (rank == 0) printf("PASS finalize_attr\n");
  return 0;
}
