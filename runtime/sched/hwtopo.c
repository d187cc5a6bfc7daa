/* Topology through hwloc, loaded once on first use. */
#include "hwtopo.h"

#include <hwloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

static hwloc_topology_t topo;
static int ncores;
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* This process's cores: [first, first + share) of the cores it may use (skn_hwtopo_share). */
static int first, share;

static void load(void) {
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
    topo = NULL;
    ncores = 1;
    return;
  }
  ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (ncores < 1) ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  if (ncores < 1) ncores = 1;
  share = ncores;
}

static hwloc_obj_t core_of(int worker) {
  if (!topo) return NULL;
  unsigned i = (unsigned)(first + worker % share);
  hwloc_obj_t c = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, i);
  if (!c) c = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, i);
  return c;
}

int skn_hwtopo_ncores(void) {
  pthread_once(&once, load);
  return share;
}

bool skn_hwtopo_share(int local_proc, int local_nprocs) {
  pthread_once(&once, load);
  if (local_nprocs <= 1 || local_proc < 0 || local_proc >= local_nprocs) return false;
  /* A launcher that bound the process has split the node already: keep its choice. */
  hwloc_bitmap_t mine = hwloc_bitmap_alloc();
  bool whole = mine && topo && hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0 &&
               hwloc_bitmap_isequal(mine, hwloc_topology_get_complete_cpuset(topo));
  hwloc_bitmap_free(mine);
  if (!whole) return false;
  if (local_nprocs >= ncores) {
    first = local_proc % ncores;
    share = 1;
  } else {
    first = (int)((long long)local_proc * ncores / local_nprocs);
    share = (int)((long long)(local_proc + 1) * ncores / local_nprocs) - first;
  }
  return local_nprocs > ncores;
}

int skn_hwtopo_nnuma(void) {
  pthread_once(&once, load);
  int n = topo ? hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE) : 1;
  return n < 1 ? 1 : n;
}

int skn_hwtopo_bind_thread(int worker) {
  pthread_once(&once, load);
  hwloc_obj_t c = core_of(worker);
  if (!c) return -1;
  hwloc_cpuset_t set = hwloc_bitmap_dup(c->cpuset);
  hwloc_bitmap_singlify(set);
  int rc = hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(set);
  return rc;
}

int skn_hwtopo_numa_of_worker(int worker) {
  pthread_once(&once, load);
  hwloc_obj_t c = core_of(worker);
  if (!c) return -1;
  /* NUMA nodes are memory children in hwloc 2: find the one whose cpuset covers the core */
  hwloc_obj_t n = NULL;
  while ((n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n)))
    if (hwloc_bitmap_isincluded(c->cpuset, n->cpuset)) return (int)n->os_index;
  return -1;
}

void skn_hwtopo_describe(char *buf, size_t len) {
  pthread_once(&once, load);
  if (!topo) {
    snprintf(buf, len, "unknown (hwloc failed to load the topology)");
    return;
  }
  snprintf(buf, len, "%d package(s), %d NUMA node(s), %d core(s), %d PU(s)",
           hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE), skn_hwtopo_nnuma(), ncores,
           hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));
}
