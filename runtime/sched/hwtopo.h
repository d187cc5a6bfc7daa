/* Machine topology (hwloc): how many cores this process may use, and pinning. */
#ifndef SKN_SCHED_TOPO_H
#define SKN_SCHED_TOPO_H

#include <stdbool.h>
#include <stddef.h>

#include "base/base.h"

/* Cores this process uses (>= 1): those of its allowed cpuset, or its share of them. */
SKN_INTERNAL int skn_hwtopo_ncores(void);
/* Several processes of a job on one node that the launcher did not bind: process
 * local_proc of local_nprocs takes its own consecutive share of the cores, so that their
 * workers do not pin to the same ones. Returns whether the processes outnumber the cores. */
SKN_INTERNAL bool skn_hwtopo_share(int local_proc, int local_nprocs);
/* NUMA nodes with memory (>= 1). */
SKN_INTERNAL int skn_hwtopo_nnuma(void);
/* Pins the calling thread to this process's core (worker % its cores). Returns 0 on success. */
SKN_INTERNAL int skn_hwtopo_bind_thread(int worker);
/* OS index of the NUMA node holding the core of `worker` (see skn_hwtopo_bind_thread),
 * or -1 when unknown. */
SKN_INTERNAL int skn_hwtopo_numa_of_worker(int worker);
/* One-line summary, e.g. "1 package, 1 NUMA node, 2 cores, 2 PUs". */
SKN_INTERNAL void skn_hwtopo_describe(char *buf, size_t len);

#endif
