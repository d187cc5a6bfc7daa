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
/* One-line summary, e.g. "1 package, 1 NUMA node, 2 cores, 2 PUs". */
SKN_INTERNAL void skn_topo_describe(char *buf, size_t len);

#endif
