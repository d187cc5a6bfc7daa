/* fbind_f08_prof.c - a profiling interposer for fbind_f08_attr.f90: counts MPI_Send calls
 * per world rank (ranks are threads of one process) and forwards them to PMPI_Send. */
#include <mpi.h>

static int sends[4096];

static int world_rank(void) {
  int r = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  __atomic_fetch_add(&sends[world_rank() % 4096], 1, __ATOMIC_RELAXED);
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int fbind_prof_sends(void);
int fbind_prof_sends(void) { return __atomic_load_n(&sends[world_rank() % 4096], __ATOMIC_RELAXED); }
