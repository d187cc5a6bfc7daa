// C++ new/delete go through the rank's heap (libstdc++'s operators call malloc).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#define FAIL(...)                                       \
  do {                                                  \
    std::printf("FAIL cxx: " __VA_ARGS__);              \
    std::printf("\n");                                  \
    MPI_Abort(MPI_COMM_WORLD, 1);                       \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPIX_Heap_stats s0, s1, s2;
  MPIX_Heap_get_stats(&s0);
  {
    std::vector<std::unique_ptr<std::string>> v;
    for (int i = 0; i < 1000; i++) v.push_back(std::make_unique<std::string>(100 + i % 50, 'x'));
    auto *arr = new double[100000];
    arr[99999] = 1;
    MPIX_Heap_get_stats(&s1);
    if (s1.nmalloc - s0.nmalloc < 2001) FAIL("rank %d: only %llu allocations counted", rank, s1.nmalloc - s0.nmalloc);
    if (s1.in_use < s0.in_use + 100000 * sizeof(double)) FAIL("rank %d: in_use %zu", rank, s1.in_use);
    delete[] arr;
  }
  MPIX_Heap_get_stats(&s2);
  if (s2.in_use != s0.in_use) FAIL("rank %d: in_use %zu after delete, was %zu", rank, s2.in_use, s0.in_use);
  MPI_Finalize();
  if (rank == 0) std::printf("PASS cxx\n");
  return 0;
}
