/* Idiom test: an stb-style single-header library whose implementation (mutable globals in
 * the header) is compiled in impl.c. Each rank sets its own level, yields, and checks. */
#include <mpi.h>
#include <stdio.h>
#include "mylib.h"

extern char mylib_last_error[64];

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (mylib_compression_level != 8) bad++; /* every rank starts from the initial value */
  MPI_Barrier(MPI_COMM_WORLD);
  mylib_set_level(rank + 1);
  for (int i = 0; i <= rank; i++) mylib_compress(i);
  MPI_Barrier(MPI_COMM_WORLD);
  if (mylib_compression_level != rank + 1) bad++;
  if (mylib_calls() != rank + 1) bad++;
  if (mylib_compress(2) != 2 * (rank + 1) + 1) bad++;
  if (mylib_last_error[0] != (char)('a' + (rank + 1) % 26)) bad++;
  if (bad) printf("FAIL idiom_stb: rank %d: level %d, %d calls\n", rank, mylib_compression_level, mylib_calls());
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s idiom_stb: %d ranks, %d wrong\n", total ? "FAIL" : "PASS", size, total);
  MPI_Finalize();
  return total ? 1 : 0;
}
