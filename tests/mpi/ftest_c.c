/* ftest_c.c - C side of the helpers of the Fortran MPI-level tests (ftest.inc declares them
 * for Fortran). The tests keep their state in Fortran globals on purpose (they check the
 * privatizer), so these helpers carry none: rank and size come back to the caller.
 *   ftest_check  prints "WRONG <name>: rank R: <what> (expected X got Y)" on a mismatch:
 *                a value that is not the rank's own. Unprivatized builds are expected to
 *                print it (testlist: fail:WRONG ...), so it is not a "FAIL " line.
 *   ftest_finish rank 0 prints "PASS <name>" when every rank's checks held, else the job
 *                ends with exit code 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

void ftest_init(int *rank, int *size);
void ftest_barrier(void);
void ftest_check(const char *name, const char *what, long expected, long got, int *ok);
void ftest_finish(const char *name, int ok);

void ftest_init(int *rank, int *size) {
  MPI_Init(NULL, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

void ftest_barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }

void ftest_check(const char *name, const char *what, long expected, long got, int *ok) {
  if (expected == got) return;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("WRONG %s: rank %d: %s (expected %ld got %ld)\n", name, rank, what, expected, got);
  fflush(stdout);
  *ok = 0;
}

void ftest_finish(const char *name, int ok) {
  int all = 0, rank;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!all) {
    if (rank == 0) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD); /* rank 0 ends the job */
  }
  MPI_Finalize();
  if (rank == 0) {
    printf("PASS %s\n", name);
    fflush(stdout);
  }
}
