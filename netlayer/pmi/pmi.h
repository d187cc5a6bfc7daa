/* Process management interface: how the processes of one job learn who they are and
 * exchange small blobs (UCX worker addresses) before they can talk to each other.
 * One interface over four backends chosen at run time from the environment: skeinrun's
 * own key-value service, PMIx (Open MPI's mpirun, Slurm --mpi=pmix), the PMI-1 wire
 * protocol on PMI_FD (Slurm --mpi=pmi2, MPICH's hydra) and a singleton (no launcher).
 * Knows nothing of MPI or the scheduler. Thread-safe: calls are serialized, and each
 * blocks its kernel thread until the launcher answers. */
#ifndef SKN_PMI_H
#define SKN_PMI_H

#include <stddef.h>

#include "base/base.h"

/* Status codes: 0 success, negative failure. Every failure has been logged already. */
enum {
  SKN_PMI_OK = 0,
  SKN_PMI_ERR = -1,      /* protocol, I/O or backend error; the job cannot go on */
  SKN_PMI_NOTFOUND = -2, /* get: that process published no such key (before the last fence) */
  SKN_PMI_INVAL = -3,    /* bad argument: key syntax, value too large, process out of range */
};

/* Keys: 1..SKN_PMI_KEY_MAX characters from [A-Za-z0-9_.-] (the PMI-1 wire protocol
 * forbids spaces and '='). Values: any bytes, at most SKN_PMI_VALUE_MAX. */
#define SKN_PMI_KEY_MAX 48
#define SKN_PMI_VALUE_MAX (1u << 20)

typedef struct skn_pmi_info {
  int proc;         /* this process's index, 0 <= proc < nprocs */
  int nprocs;       /* processes in the job */
  int world_size;   /* MPI ranks in the job (SKEIN_NP; default: one per process) */
  int first_rank;   /* first world rank of this process: ranks are block-distributed */
  int nranks;       /* ranks of this process: first_rank .. first_rank + nranks - 1 */
  int node;         /* index of this process's node (host), 0 <= node < nnodes */
  int nnodes;       /* nodes of the job */
  int local_proc;   /* index among the job's processes on this node */
  int local_nprocs; /* the job's processes on this node */
  const char *backend; /* "skein", "pmix", "pmi1" or "singleton" */
} skn_pmi_info;

/* Connects to the launcher named by the environment (SKEIN_PMI forces one: skein, pmix,
 * pmi1, singleton) and fills *info. Call once, before anything else here. */
SKN_INTERNAL int skn_pmi_init(skn_pmi_info *info);

/* Publishes key=value for this process; visible to others after the next fence. Each key
 * is put at most once per process and job (a second put is refused: SKN_PMI_INVAL). */
SKN_INTERNAL int skn_pmi_put(const char *key, const void *value, size_t len);

/* Collective over all processes: returns when every process has called it; every put
 * made before it by any process is then visible to get. */
SKN_INTERNAL int skn_pmi_fence(void);

/* Value that process `proc` put under `key` before the last fence: *value is malloc'ed
 * (free it), *len its length. Getting one's own keys works too. */
SKN_INTERNAL int skn_pmi_get(int proc, const char *key, void **value, size_t *len);

/* Node index of process `proc` (the same numbering as info.node), or -1 if unknown. */
SKN_INTERNAL int skn_pmi_node_of(int proc);

/* Ends the whole job: the launcher prints msg naming this process, kills the other
 * processes and exits with `code`. Does not return. */
SKN_INTERNAL _Noreturn void skn_pmi_abort(int code, const char *msg);

/* Leaves the job's process management; call after the last get. */
SKN_INTERNAL int skn_pmi_finalize(void);

/* Block distribution of world_size ranks over nprocs processes (the first
 * world_size % nprocs processes get one more): process p's first rank and count. */
static inline void skn_pmi_block(int world_size, int nprocs, int p, int *first, int *count) {
  int base = world_size / nprocs, extra = world_size % nprocs;
  *count = base + (p < extra);
  *first = p * base + (p < extra ? p : extra);
}
/* The inverse: the process holding world rank r (0 <= r < world_size). */
static inline int skn_pmi_block_proc(int world_size, int nprocs, int r) {
  int base = world_size / nprocs, extra = world_size % nprocs;
  int big = extra * (base + 1); /* ranks held by the first `extra` processes */
  return r < big ? r / (base + 1) : extra + (r - big) / base;
}

#endif
