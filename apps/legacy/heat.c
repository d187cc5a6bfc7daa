/* Explicit heat diffusion on a square plate, hot left edge, rows split between ranks.
 * Rank 0 gathers the final grid and prints a checksum that does not depend on the number
 * of ranks, so every build and rank count must print the same lines. */
#include <mpi.h>
#include <stdio.h>
#include "heat.h"

int rank, nprocs, nrows, row0;
double grid[MAXROWS][NX + 2], next[MAXROWS][NX + 2];
long cell_updates;
static double full[NX][NX]; /* rank 0: the gathered result */

static void step(void) {
  exchange_halos();
  for (int i = 1; i <= nrows; i++)
    for (int j = 1; j <= NX; j++)
      next[i][j] = CELL(i, j) + alpha * (CELL(i - 1, j) + CELL(i + 1, j) + CELL(i, j - 1) + CELL(i, j + 1) - 4 * CELL(i, j));
  for (int i = 1; i <= nrows; i++)
    for (int j = 1; j <= NX; j++) grid[i][j] = next[i][j];
  cell_updates += (long)nrows * NX;
}

void report(void) {
  int counts[1024], displs[1024];
  static double rows[NX * NX];
  int mine = nrows * NX;
  for (int i = 0; i < nrows; i++)
    for (int j = 0; j < NX; j++) rows[i * NX + j] = grid[i + 1][j + 1];
  MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int p = 0, off = 0; p < nprocs; p++) displs[p] = off, off += counts[p];
  MPI_Gatherv(rows, mine, MPI_DOUBLE, full, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  long total_updates, total_messages;
  MPI_Reduce(&cell_updates, &total_updates, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&halo_messages, &total_messages, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  double sum = 0, weighted = 0;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NX; j++) sum += full[i][j], weighted += full[i][j] * (i + 1) * (j + 1);
  printf("heat %dx%d, %d steps, alpha %.3f\n", NX, NX, nsteps, alpha);
  printf("sum %.12e weighted %.12e centre %.12e\n", sum, weighted, full[NX / 2][NX / 2]);
  printf("cell updates %ld, halo messages %s\n", total_updates,
         total_messages == 2L * (nprocs - 1) * nsteps ? "as expected" : "WRONG");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (nprocs > NX || nprocs > 1024) {
    if (rank == 0) fprintf(stderr, "heat: at most %d ranks\n", NX);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  read_params(argc, argv);
  nrows = NX / nprocs + (rank < NX % nprocs);
  row0 = rank * (NX / nprocs) + (rank < NX % nprocs ? rank : NX % nprocs);
  for (int i = 0; i < nrows + 2; i++) grid[i][0] = 1.0; /* hot left edge */
  for (int s = 0; s < nsteps; s++) step();
  report();
  MPI_Finalize();
  return 0;
}
