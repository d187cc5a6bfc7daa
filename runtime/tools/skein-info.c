/* skein-info: what this Skein installation is and how a job would run here. */
#include <stdio.h>

#include "boot/boot.h"
#include "core/core.h"
#include "sched/hwtopo.h"

int main(void) {
  skn_boot_config c;
  skn_boot_read_config(&c);
  int workers = c.nworkers > c.nranks ? c.nranks : c.nworkers;
  char topo[256];
  skn_hwtopo_describe(topo, sizeof topo);
  printf("Skein %s (MPI %d.%d)\n", SKEIN_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
  printf("build:          %s, %s, compiler %s\n", SKEIN_BUILD_TYPE, SKEIN_BUILD_OPTIONS, __VERSION__);
  printf("fortran:        %s (mpifort, mpif90, mpif77; -fprivatize through a GCC plugin)\n", SKEIN_FC_VERSION);
  printf("topology:       %s\n", topo);
  printf("transports:     local (one copy within the process)\n");
  printf("ranks:          %d (SKEIN_NP, skeinrun -n)\n", c.nranks);
  printf("workers:        %d of %d usable cores (SKEIN_WORKERS, skeinrun --workers), %s\n", workers,
         skn_hwtopo_ncores(), c.bind ? "pinned" : "not pinned");
  printf("balance:        %s (SKEIN_BALANCE=steal|off; SKEIN_SCHEDSTATS=1 reports moves)\n",
         workers < 2 ? "none (one worker)"
         : c.steal ? "steal: an idle worker takes ranks that wait behind a running one on another worker"
                   : "off: ranks stay on the worker they were placed on");
  printf("stack per rank: %zu KiB virtual, guard page below (SKEIN_STACK_SIZE)\n", c.stack_size >> 10);
  printf("tiny messages:  <= %d bytes inside the envelope\n", SKN_CELL_SIZE);
  printf("eager limit:    %zu bytes (SKEIN_EAGER_LIMIT); larger messages are copied once by the receiver\n",
         c.eager_limit);
  printf("buffer budget:  %zu bytes of early-completed unexpected messages per rank (SKEIN_BUFFER_BUDGET)\n",
         c.buffer_budget);
  printf("spin:           %u iterations before a waiting rank blocks (SKEIN_SPIN)\n", c.spin_iters);
  printf("deadlock:       reported after %u ms with every rank blocked (SKEIN_DEADLOCK_MS)\n", c.deadlock_ms);
  return 0;
}
