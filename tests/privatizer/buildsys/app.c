#include <mpi.h>
#include <stdio.h>
#include "app.h"

int app_rank = -1;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &app_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < 10; i++) {
    util_add(app_rank);
    counter_bump(app_rank + 1);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int ok = app_total == 10.0 * app_rank && counter_get() == 10 * (app_rank + 1);
  if (!ok) printf("FAIL buildsys: rank %d total %g counter %d\n", app_rank, app_total, counter_get());
  int all;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  MPI_Finalize();
  if (app_rank == 0 && all) printf("PASS buildsys\n");
  return !all;
}
