// Idiom test: globals used from inline functions and templates of a project header, from
// two sources. Each rank does rank-dependent work, yields in MPI calls, and checks.
#include <mpi.h>
#include <cstdio>
#include "util.hpp"

double total_sum;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  work(rank);
  MPI_Barrier(MPI_COMM_WORLD);
  tick();
  Pool<int>::put(rank * 10);
  accumulate<double>(0.5);
  MPI_Barrier(MPI_COMM_WORLD);
  if (step_count != rank + 2) bad++;
  if (work_calls() != rank + 1 || unit_calls != 1) bad++;
  if (generation != 100 + rank + 2) bad++;
  if (counter() != 2 || Pool<int>::last != rank * 10) bad++;
  if (total_sum != rank + 0.5) bad++;
  if (bad)
    std::printf("FAIL idiom_inline: rank %d: steps %d, generation %d, counter %d, sum %g\n", rank, step_count, generation,
                counter(), total_sum);
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s idiom_inline: %d ranks, %d wrong\n", total ? "FAIL" : "PASS", size, total);
  MPI_Finalize();
  return total ? 1 : 0;
}
