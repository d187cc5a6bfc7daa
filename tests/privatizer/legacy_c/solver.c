/* Part of libsolver.a: globals with and without initializers, a static local, an array
 * whose address goes to MPI. */
#include <mpi.h>
#include "state.h"

double grid[N];
int solver_iters = 0;
union bits last_bits;
static double weights[4] = {0.5, 0.25, 0.125, 0.125};
static double *wp = &weights[1];   /* address of another privatized global */

void solver_step(int step) {
  for (int i = 0; i < N; i++) grid[i] = MYRANK * 1000.0 + i + step * weights[0] * 0 + *wp * 0;
  solver_iters++;
  common_steps++;
  TICK();
  last_bits.d = grid[N - 1];
}

double solver_sum(void) {
  double s = 0, total;
  for (int i = 0; i < N; i++) s += grid[i];
  MPI_Allreduce(&s, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* yields */
  return s;
}

int solver_calls(void) {
  static int calls;  /* function-local static */
  return ++calls;
}
