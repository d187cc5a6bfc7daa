/* A hybrid MPI+OpenMP legacy code with globals: a parallel region updates a privatized
 * global (atomically), and a threadprivate counter is per rank and per thread. Run with
 * as many workers as ranks (see the user guide on OpenMP). */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

double total;
int rank_id;
int counter = 100;
#pragma omp threadprivate(counter)

int main(int argc, char **argv) {
  int provided, fails = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_id);
  for (int step = 0; step < 3; step++) {
    #pragma omp parallel num_threads(3)
    {
      #pragma omp atomic
      total += rank_id + 1;
      counter += 1;
      if (rank_id < 0) fails++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  /* three threads per region, three regions */
  if (total != 9.0 * (rank_id + 1)) {
    printf("FAIL openmp: rank %d total %g\n", rank_id, total);
    fails++;
  }
  if (counter != 103) { /* the master thread's copy: +1 per region */
    printf("FAIL openmp: rank %d counter %d\n", rank_id, counter);
    fails++;
  }
  int all;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank_id == 0 && all == 0) printf("PASS openmp\n");
  return all != 0;
}
