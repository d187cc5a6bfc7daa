/* Topology through hwloc, loaded once on first use. */
#include "topo.h"

#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>

static hwloc_topology_t topo;
static int ncores;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
    topo = NULL;
    ncores = 1;
    return;
  }
  ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (ncores < 1) ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  if (ncores < 1) ncores = 1;
}

static hwloc_obj_t core_of(int worker) {
  if (!topo) return NULL;
  hwloc_obj_t c = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)(worker % ncores));
  if (!c) c = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)(worker % ncores));
  return c;
}

int skn_topo_ncores(void) {
  pthread_once(&once, load);
  return ncores;
}

int skn_topo_nnuma(void) {
  pthread_once(&once, load);
  int n = topo ? hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE) : 1;
  return n < 1 ? 1 : n;
}

int skn_topo_bind_thread(int worker) {
  pthread_once(&once, load);
  hwloc_obj_t c = core_of(worker);
  if (!c) return -1;
  hwloc_cpuset_t set = hwloc_bitmap_dup(c->cpuset);
  hwloc_bitmap_singlify(set);
  int rc = hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(set);
  return rc;
}

int skn_topo_numa_of_worker(int worker) {
  pthread_once(&once, load);
  hwloc_obj_t c = core_of(worker);
  if (!c) return -1;
  /* NUMA nodes are memory children in hwloc 2: find the one whose cpuset covers the core */
  hwloc_obj_t n = NULL;
  while ((n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n)))
    if (hwloc_bitmap_isincluded(c->cpuset, n->cpuset)) return (int)n->os_index;
  return -1;
}

void skn_topo_describe(char *buf, size_t len) {
  pthread_once(&once, load);
  if (!topo) {
    snprintf(buf, len, "unknown (hwloc failed to load the topology)");
    return;
  }
  snprintf(buf, len, "%d package(s), %d NUMA node(s), %d core(s), %d PU(s)",
           hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE), skn_topo_nnuma(), ncores,
           hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));
}
