/* Calls outside MPI_Init..MPI_Finalize. The calls the standard allows there work
 * (Initialized, Finalized, Get_version, Get_library_version, the MPI-4 Info functions);
 * any other ends the job with a message naming the call (argument "before": MPI_Send
 * before MPI_Init; "after": MPI_Comm_rank after MPI_Finalize). The testlist expects the
 * failure and its message. */
#define TEST_NAME "outside_init"
#include "mpitest.h"

static void allowed(int expect_init, int expect_fin) {
  int flag = -1, v = 0, sv = 0, len = 0;
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  MPI_Initialized(&flag);
  if (flag != expect_init) FAIL("MPI_Initialized: %d", flag);
  MPI_Finalized(&flag);
  if (flag != expect_fin) FAIL("MPI_Finalized: %d", flag);
  MPI_Get_version(&v, &sv);
  if (v < 3) FAIL("MPI_Get_version: %d.%d", v, sv);
  MPI_Get_library_version(lib, &len);
  if (len <= 0) FAIL("MPI_Get_library_version: length %d", len);
  MPI_Info info;
  char val[16];
  if (MPI_Info_create(&info) != MPI_SUCCESS || MPI_Info_set(info, "k", "v") != MPI_SUCCESS ||
      MPI_Info_get(info, "k", 15, val, &flag) != MPI_SUCCESS || !flag || strcmp(val, "v") ||
      MPI_Info_free(&info) != MPI_SUCCESS)
    FAIL("Info functions outside MPI_Init..MPI_Finalize");
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  int x = 7;
  allowed(0, 0);
  if (!strcmp(mode, "before")) {
    MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); /* ends the job */
    printf("FAIL %s: MPI_Send before MPI_Init returned\n", TEST_NAME);
    return 1;
  }
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Finalize();
  allowed(1, 1);
  if (!strcmp(mode, "after")) {
    MPI_Comm_rank(MPI_COMM_WORLD, &x); /* ends the job */
    printf("FAIL %s: MPI_Comm_rank after MPI_Finalize returned\n", TEST_NAME);
    return 1;
  }
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
