/* Machine topology (hwloc): how many cores this process may use, and pinning. */
#ifndef SKN_SCHED_TOPO_H
#define SKN_SCHED_TOPO_H

#include <stddef.h>

#include "../base/base.h"

/* Cores in the process's allowed cpuset (>= 1). */
SKN_INTERNAL int skn_topo_ncores(void);
/* NUMA nodes with memory (>= 1). */
SKN_INTERNAL int skn_topo_nnuma(void);
/* Pins the calling thread to core (worker % ncores). Returns 0 on success. */
SKN_INTERNAL int skn_topo_bind_thread(int worker);
/* OS index of the NUMA node holding the core of `worker` (see skn_topo_bind_thread),
 * or -1 when unknown. */
SKN_INTERNAL int skn_topo_numa_of_worker(int worker);
/* One-line summary, e.g. "1 package, 1 NUMA node, 2 cores, 2 PUs". */
SKN_INTERNAL void skn_topo_describe(char *buf, size_t len);

#endif
