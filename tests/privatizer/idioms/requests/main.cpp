// Idiom test: `static std::vector<MPI_Request> requests;` in a header included by three
// sources. Each unit's copy must be per rank: the ranks post different numbers of requests
// into a.cpp's and b.cpp's vectors, yield in MPI calls, and check their own counts.
#include <cstdio>
#include "requests.hpp"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int bad = 0;
  post_a(rank);
  MPI_Barrier(MPI_COMM_WORLD);  // every other rank of the process runs in between
  post_b(rank);
  for (int i = 0; i < rank; i++) post(MPI_REQUEST_NULL, "main");
  MPI_Barrier(MPI_COMM_WORLD);
  bad += check_a(rank);
  MPI_Barrier(MPI_COMM_WORLD);
  bad += check_b(rank);
  if ((int)requests.size() != rank || posted != rank || last_tag != (rank ? "main" : "none")) bad++;
  if (bad) std::printf("FAIL idiom_requests: rank %d: main's vector has %zu requests\n", rank, requests.size());
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s idiom_requests: %d ranks, %d wrong\n", total ? "FAIL" : "PASS", size, total);
  MPI_Finalize();
  return total ? 1 : 0;
}
