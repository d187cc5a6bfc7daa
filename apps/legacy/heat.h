/* heat: a legacy-style 2-D heat-diffusion solver. Its grid, parameters and counters are
 * globals shared between files through this header, as in many old MPI codes. */
#ifndef HEAT_H
#define HEAT_H

#define NX 96            /* global grid: NX x NX interior points */
#define MAXROWS (NX + 2) /* local rows at most (one rank) plus two halo rows */

/* decomposition (heat.c) */
extern int rank, nprocs, nrows, row0;
/* grids (heat.c): local rows 1..nrows, halos 0 and nrows+1 */
extern double grid[MAXROWS][NX + 2], next[MAXROWS][NX + 2];
/* parameters (params.c) */
extern double alpha;
extern int nsteps;
/* counters (halo.c, heat.c) */
extern long halo_messages, cell_updates;

#define CELL(i, j) grid[i][j]
#define UP (rank > 0 ? rank - 1 : MPI_PROC_NULL)
#define DOWN (rank < nprocs - 1 ? rank + 1 : MPI_PROC_NULL)

void read_params(int argc, char **argv);
void exchange_halos(void);
void report(void);
#endif
