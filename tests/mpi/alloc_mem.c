/* MPI_Alloc_mem / MPI_Free_mem: aligned memory a window can be built on (the common RMA
 * idiom), size 0, the info argument checked, bad sizes refused with MPI_ERR_ARG. */
#define TEST_NAME "alloc_mem"
#include "mpitest.h"

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  MPI_Info info;
  MPI_CHECK(MPI_Info_create(&info));
  MPI_CHECK(MPI_Info_set(info, "mpi_minimum_memory_alignment", "64"));
  double *base = NULL;
  MPI_CHECK(MPI_Alloc_mem((MPI_Aint)(size * sizeof(double)), info, &base));
  if (!base || ((uintptr_t)base & 63)) FAIL("Alloc_mem gave %p (not 64-byte aligned)", (void *)base);
  for (int i = 0; i < size; i++) base[i] = -1.0;
  MPI_Win win;
  MPI_CHECK(MPI_Win_create(base, (MPI_Aint)(size * sizeof(double)), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  MPI_CHECK(MPI_Win_fence(0, win));
  double mine = rank + 0.5;
  for (int t = 0; t < size; t++) MPI_CHECK(MPI_Put(&mine, 1, MPI_DOUBLE, t, rank, 1, MPI_DOUBLE, win));
  MPI_CHECK(MPI_Win_fence(0, win));
  for (int i = 0; i < size; i++)
    if (base[i] != i + 0.5) FAIL("window on Alloc_mem memory: slot %d holds %g", i, base[i]);
  MPI_CHECK(MPI_Win_free(&win));
  MPI_CHECK(MPI_Free_mem(base));

  void *empty = NULL;
  MPI_CHECK(MPI_Alloc_mem(0, MPI_INFO_NULL, &empty));
  MPI_CHECK(MPI_Free_mem(empty));

  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)); /* errors of no object (MPI-4.0) */
  void *p = (void *)0x1;
  int cls = -1, rc = MPI_Alloc_mem(-8, MPI_INFO_NULL, &p);
  MPI_CHECK(MPI_Error_class(rc, &cls));
  if (cls != MPI_ERR_ARG || p != (void *)0x1) FAIL("negative size: class %d, baseptr %p", cls, p);
  MPI_Info gone = info;
  MPI_CHECK(MPI_Info_free(&info));
  rc = MPI_Alloc_mem(8, gone, &p);
  MPI_CHECK(MPI_Error_class(rc, &cls));
  if (cls != MPI_ERR_INFO || p != (void *)0x1) FAIL("freed info: class %d, baseptr %p", cls, p);
  return mt_finish();
}
