/* Demo: every rank integrates its share of 4/(1+x^2) over [0,1], the partial sums travel
 * around a ring, and rank 0 prints pi. Plain MPI: builds with any MPI's mpicc. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, len;
  char host[MPI_MAX_PROCESSOR_NAME], version[MPI_MAX_LIBRARY_VERSION_STRING];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(host, &len);

  const long steps = 10000000;
  const double h = 1.0 / (double)steps;
  double mine = 0.0;
  for (long i = rank; i < steps; i += size) {
    double x = h * ((double)i + 0.5);
    mine += 4.0 / (1.0 + x * x);
  }
  mine *= h;

  /* Ring: rank 0 starts the running sum, each rank adds its part and passes it on. */
  double sum = 0.0;
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  if (rank == 0) {
    sum = mine;
    if (size > 1) {
      MPI_Send(&sum, 1, MPI_DOUBLE, next, 0, MPI_COMM_WORLD);
      MPI_Recv(&sum, 1, MPI_DOUBLE, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Get_library_version(version, &len);
    printf("%s\n%d ranks on %s: pi = %.12f (error %.2e)\n", version, size, host, sum, fabs(sum - M_PI));
  } else {
    MPI_Recv(&sum, 1, MPI_DOUBLE, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sum += mine;
    MPI_Send(&sum, 1, MPI_DOUBLE, next, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return fabs(sum - M_PI) < 1e-9 || rank != 0 ? 0 : 1;
}
