/* PMIx backend (Open MPI's mpirun, Slurm's srun --mpi=pmix, PRRTE). libpmix is loaded
 * with dlopen only when the environment names a PMIx server, so a Skein program neither
 * needs libpmix installed nor pays for loading it otherwise. Keys are put as byte objects
 * under "skn.<key>" (PMIx reserves "pmix.*"), with global scope. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "backend.h"

#define LIBPMIX "libpmix.so.2"

static struct {
  pmix_status_t (*init)(pmix_proc_t *, pmix_info_t[], size_t);
  pmix_status_t (*finalize)(const pmix_info_t[], size_t);
  pmix_status_t (*abort)(int, const char[], pmix_proc_t[], size_t);
  pmix_status_t (*put)(pmix_scope_t, const char[], pmix_value_t *);
  pmix_status_t (*commit)(void);
  pmix_status_t (*fence)(const pmix_proc_t[], size_t, const pmix_info_t[], size_t);
  pmix_status_t (*get)(const pmix_proc_t *, const char[], const pmix_info_t[], size_t, pmix_value_t **);
  void (*value_destruct)(pmix_value_t *);
  const char *(*error_string)(pmix_status_t);
} px;

static void *lib;
static pmix_proc_t me;
static int *node_cache; /* node of each process, -2 = not asked yet */

static const char *err(pmix_status_t rc) { return px.error_string ? px.error_string(rc) : "?"; }

static bool load(void) {
  lib = dlopen(LIBPMIX, RTLD_NOW | RTLD_GLOBAL); /* GLOBAL: its plugins link against it */
  if (!lib) {
    skn_log("PMI: the environment names a PMIx server but %s cannot be loaded: %s", LIBPMIX, dlerror());
    return false;
  }
  struct {
    void **fn;
    const char *name;
  } syms[] = {
      {(void **)&px.init, "PMIx_Init"},       {(void **)&px.finalize, "PMIx_Finalize"},
      {(void **)&px.abort, "PMIx_Abort"},     {(void **)&px.put, "PMIx_Put"},
      {(void **)&px.commit, "PMIx_Commit"},   {(void **)&px.fence, "PMIx_Fence"},
      {(void **)&px.get, "PMIx_Get"},         {(void **)&px.value_destruct, "PMIx_Value_destruct"},
      {(void **)&px.error_string, "PMIx_Error_string"},
  };
  for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
    if (!(*syms[i].fn = dlsym(lib, syms[i].name))) {
      skn_log("PMI: %s lacks %s", LIBPMIX, syms[i].name);
      return false;
    }
  return true;
}

static void release(pmix_value_t *v) {
  px.value_destruct(v);
  free(v);
}

/* An unsigned integer attribute of `proc` (PMIx hands out several integer widths). */
static bool get_uint(const pmix_proc_t *proc, const char *key, unsigned long *out) {
  pmix_value_t *v = NULL;
  if (px.get(proc, key, NULL, 0, &v) != PMIX_SUCCESS || !v) return false;
  bool ok = true;
  switch (v->type) {
  case PMIX_UINT8: *out = v->data.uint8; break;
  case PMIX_UINT16: *out = v->data.uint16; break;
  case PMIX_UINT32: *out = v->data.uint32; break;
  case PMIX_UINT64: *out = v->data.uint64; break;
  case PMIX_SIZE: *out = v->data.size; break;
  case PMIX_INT: ok = v->data.integer >= 0; *out = (unsigned long)v->data.integer; break;
  case PMIX_INT32: ok = v->data.int32 >= 0; *out = (unsigned long)v->data.int32; break;
  default: ok = false;
  }
  release(v);
  return ok;
}

static int pmix_init(skn_pmi_info *info) {
  if (!load()) return SKN_PMI_ERR;
  pmix_status_t rc = px.init(&me, NULL, 0);
  if (rc != PMIX_SUCCESS) {
    skn_log("PMI: PMIx_Init failed: %s", err(rc));
    return SKN_PMI_ERR;
  }
  pmix_proc_t job = me;
  job.rank = PMIX_RANK_WILDCARD;
  unsigned long size, lsize, lrank, node = 0, nnodes = 1;
  if (!get_uint(&job, PMIX_JOB_SIZE, &size) || size < 1 || size > (1u << 24) || me.rank >= size) {
    skn_log("PMI: PMIx gives no usable job size");
    px.finalize(NULL, 0);
    return SKN_PMI_ERR;
  }
  if (!get_uint(&job, PMIX_LOCAL_SIZE, &lsize) || !get_uint(&me, PMIX_LOCAL_RANK, &lrank)) {
    lsize = 1; /* not told: consider every process alone on its node */
    lrank = 0;
  }
  if (!get_uint(&me, PMIX_NODEID, &node)) node = 0;
  if (!get_uint(&job, PMIX_NUM_NODES, &nnodes) || nnodes <= node) nnodes = node + 1;
  node_cache = malloc(size * sizeof *node_cache);
  if (!node_cache) return SKN_PMI_ERR;
  for (unsigned long p = 0; p < size; p++) node_cache[p] = -2;
  node_cache[me.rank] = (int)node;
  info->proc = (int)me.rank;
  info->nprocs = (int)size;
  info->node = (int)node;
  info->nnodes = (int)nnodes;
  info->local_proc = (int)lrank;
  info->local_nprocs = (int)lsize;
  return SKN_PMI_OK;
}

static void pmix_key(char *out, const char *key) {
  strcpy(out, "skn.");
  strcat(out, key);
}

static int pmix_put(const char *key, const void *value, size_t len) {
  char k[SKN_PMI_KEY_MAX + 8];
  pmix_key(k, key);
  pmix_value_t v;
  memset(&v, 0, sizeof v);
  v.type = PMIX_BYTE_OBJECT;
  v.data.bo.bytes = (char *)value; /* PMIx_Put copies */
  v.data.bo.size = len;
  pmix_status_t rc = px.put(PMIX_GLOBAL, k, &v);
  if (rc != PMIX_SUCCESS) {
    skn_log("PMI: PMIx_Put(%s, %zu bytes) failed: %s", k, len, err(rc));
    return SKN_PMI_ERR;
  }
  return SKN_PMI_OK;
}

static int pmix_fence(void) {
  pmix_status_t rc = px.commit();
  if (rc != PMIX_SUCCESS) {
    skn_log("PMI: PMIx_Commit failed: %s", err(rc));
    return SKN_PMI_ERR;
  }
  pmix_info_t collect;
  memset(&collect, 0, sizeof collect);
  strcpy(collect.key, PMIX_COLLECT_DATA); /* everyone's data arrives with the fence */
  collect.value.type = PMIX_BOOL;
  collect.value.data.flag = true;
  pmix_proc_t all = me;
  all.rank = PMIX_RANK_WILDCARD;
  rc = px.fence(&all, 1, &collect, 1);
  if (rc != PMIX_SUCCESS) {
    skn_log("PMI: PMIx_Fence failed: %s", err(rc));
    return SKN_PMI_ERR;
  }
  return SKN_PMI_OK;
}

static int pmix_get(int proc, const char *key, void **value, size_t *len) {
  char k[SKN_PMI_KEY_MAX + 8];
  pmix_key(k, key);
  pmix_proc_t peer = me;
  peer.rank = (pmix_rank_t)proc;
  /* After a collecting fence every value is in the local store: look only there, so that
     a missing key fails at once instead of waiting for the server. */
  pmix_info_t local;
  memset(&local, 0, sizeof local);
  strcpy(local.key, PMIX_OPTIONAL);
  local.value.type = PMIX_BOOL;
  local.value.data.flag = true;
  pmix_value_t *v = NULL;
  pmix_status_t rc = px.get(&peer, k, &local, 1, &v);
  if (rc == PMIX_ERR_NOT_FOUND) return SKN_PMI_NOTFOUND;
  if (rc != PMIX_SUCCESS || !v) {
    skn_log("PMI: PMIx_Get(process %d, %s) failed: %s", proc, k, err(rc));
    return SKN_PMI_ERR;
  }
  int ret = SKN_PMI_OK;
  if (v->type != PMIX_BYTE_OBJECT) {
    skn_log("PMI: PMIx_Get(process %d, %s): not a byte object (type %d)", proc, k, (int)v->type);
    ret = SKN_PMI_ERR;
  } else {
    size_t n = v->data.bo.size;
    void *copy = malloc(n ? n : 1);
    if (!copy) {
      ret = SKN_PMI_ERR;
    } else {
      if (n) memcpy(copy, v->data.bo.bytes, n);
      *value = copy;
      *len = n;
    }
  }
  release(v);
  return ret;
}

static int pmix_node_of(int proc) {
  if (node_cache[proc] == -2) {
    pmix_proc_t peer = me;
    peer.rank = (pmix_rank_t)proc;
    unsigned long node;
    node_cache[proc] = get_uint(&peer, PMIX_NODEID, &node) ? (int)node : -1;
  }
  return node_cache[proc];
}

static void pmix_abort(int code, const char *msg) {
  if (px.abort) px.abort(code, msg, NULL, 0); /* NULL: the whole job */
}

static int pmix_finalize(void) {
  pmix_status_t rc = px.finalize ? px.finalize(NULL, 0) : PMIX_SUCCESS;
  free(node_cache);
  node_cache = NULL;
  /* libpmix stays loaded: its threads and atexit handlers may still refer to it. */
  if (rc != PMIX_SUCCESS) {
    skn_log("PMI: PMIx_Finalize failed: %s", err(rc));
    return SKN_PMI_ERR;
  }
  return SKN_PMI_OK;
}

const skn_pmi_backend skn_pmi_pmix_backend = {
    .name = "pmix",
    .init = pmix_init,
    .put = pmix_put,
    .fence = pmix_fence,
    .get = pmix_get,
    .node_of = pmix_node_of,
    .abort = pmix_abort,
    .finalize = pmix_finalize,
};
