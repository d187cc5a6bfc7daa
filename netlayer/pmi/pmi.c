/* Backend selection, argument checks, rank distribution, and the singleton backend (a
 * process started without a launcher: one process, everything local). */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "proto.h"

/* Calls are serialized: boot makes them from one thread, but the transport may look up a
   peer's address lazily from any worker. A call blocks its kernel thread until answered. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const skn_pmi_backend *backend;
static skn_pmi_info self; /* filled by skn_pmi_init */

/* Keys this process has put: each once per job, because the PMI-1 key space cannot
   replace a value (and one rule for every backend keeps programs portable). */
typedef struct key_seen {
  struct key_seen *next;
  char key[SKN_PMI_KEY_MAX + 1];
} key_seen;
static key_seen *keys_put;

bool skn_pmi_parse_int(const char *s, int *out) {
  if (!s || !*s) return false;
  long v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return false;
    v = v * 10 + (*s - '0');
    if (v > INT_MAX) return false;
  }
  *out = (int)v;
  return true;
}

int skn_pmi_env_int(const char *name, int *out) {
  const char *v = getenv(name);
  if (!v) return 0;
  if (!skn_pmi_parse_int(v, out)) {
    skn_log("%s=%s is not a non-negative integer", name, v);
    return -1;
  }
  return 1;
}

/* ------------------------------------------------------------------ singleton */

typedef struct kv {
  struct kv *next;
  char key[SKN_PMI_KEY_MAX + 1];
  size_t len;
  bool published;
  unsigned char value[];
} kv;
static kv *single_store;

static int single_init(skn_pmi_info *info) {
  info->proc = 0;
  info->nprocs = 1;
  info->node = 0;
  info->nnodes = 1;
  info->local_proc = 0;
  info->local_nprocs = 1;
  return SKN_PMI_OK;
}

/* pmi.c lets each key be put once, so an entry is never replaced. */
static int single_put(const char *key, const void *value, size_t len) {
  kv *e = malloc(sizeof *e + len);
  if (!e) return SKN_PMI_ERR;
  snprintf(e->key, sizeof e->key, "%s", key);
  e->len = len;
  e->published = false;
  if (len) memcpy(e->value, value, len);
  e->next = single_store;
  single_store = e;
  return SKN_PMI_OK;
}

static int single_fence(void) {
  for (kv *e = single_store; e; e = e->next) e->published = true;
  return SKN_PMI_OK;
}

static int single_get(int proc, const char *key, void **value, size_t *len) {
  for (kv *e = single_store; e; e = e->next)
    if (e->published && !strcmp(e->key, key)) {
      void *copy = malloc(e->len ? e->len : 1);
      if (!copy) return SKN_PMI_ERR;
      memcpy(copy, e->value, e->len);
      *value = copy;
      *len = e->len;
      return SKN_PMI_OK;
    }
  return SKN_PMI_NOTFOUND;
}

static int single_node_of(int proc) { return 0; }

static void single_abort(int code, const char *msg) {}

static int single_finalize(void) {
  while (single_store) {
    kv *e = single_store;
    single_store = e->next;
    free(e);
  }
  return SKN_PMI_OK;
}

static const skn_pmi_backend single_backend = {
    .name = "singleton",
    .init = single_init,
    .put = single_put,
    .fence = single_fence,
    .get = single_get,
    .node_of = single_node_of,
    .abort = single_abort,
    .finalize = single_finalize,
};

/* ------------------------------------------------------------------ interface */

static const skn_pmi_backend *choose(void) {
  const char *forced = getenv("SKEIN_PMI");
  if (forced && *forced) {
    if (!strcmp(forced, "skein")) return &skn_pmi_skein_backend;
    if (!strcmp(forced, "pmix")) return &skn_pmi_pmix_backend;
    if (!strcmp(forced, "pmi1")) return &skn_pmi_wire_backend;
    if (!strcmp(forced, "singleton")) return &single_backend;
    skn_log("SKEIN_PMI=%s: expected skein, pmix, pmi1 or singleton", forced);
    return NULL;
  }
  if (getenv(SKN_PMI_ENV_ADDR)) return &skn_pmi_skein_backend;
  if (getenv("PMIX_NAMESPACE")) return &skn_pmi_pmix_backend; /* mpirun, srun --mpi=pmix */
  if (getenv("PMI_FD")) return &skn_pmi_wire_backend;         /* srun --mpi=pmi2, hydra */
  return &single_backend;
}

static int init_unlocked(skn_pmi_info *info) {
  if (backend) {
    skn_log("PMI: initialized twice");
    return SKN_PMI_ERR;
  }
  const skn_pmi_backend *b = choose();
  if (!b) return SKN_PMI_ERR;
  skn_pmi_info in = {0};
  in.backend = b->name;
  int rc = b->init(&in);
  if (rc != SKN_PMI_OK) return rc;
  backend = b;

  int world = in.nprocs;
  if (skn_pmi_env_int("SKEIN_NP", &world) < 0) goto fail;
  if (world < in.nprocs) {
    skn_log("SKEIN_NP=%d ranks cannot fill %d processes: each process needs at least one rank",
            world, in.nprocs);
    goto fail;
  }
  in.world_size = world;
  skn_pmi_block(world, in.nprocs, in.proc, &in.first_rank, &in.nranks);

  /* skeinrun also states the distribution: a disagreement means mismatched versions. */
  int first, n;
  if ((getenv("SKEIN_FIRST_RANK") && (skn_pmi_env_int("SKEIN_FIRST_RANK", &first) < 0 || first != in.first_rank)) ||
      (getenv("SKEIN_LOCAL_NP") && (skn_pmi_env_int("SKEIN_LOCAL_NP", &n) < 0 || n != in.nranks))) {
    skn_log("PMI: SKEIN_FIRST_RANK/SKEIN_LOCAL_NP disagree with the block distribution of %d ranks "
            "over %d processes (process %d: first rank %d, %d ranks)",
            world, in.nprocs, in.proc, in.first_rank, in.nranks);
    goto fail;
  }
  self = in;
  *info = in;
  return SKN_PMI_OK;
fail:
  b->finalize();
  backend = NULL;
  return SKN_PMI_INVAL;
}

static bool ready(const char *call) {
  if (backend) return true;
  skn_log("PMI: %s before skn_pmi_init", call);
  return false;
}

static int put_unlocked(const char *key, const void *value, size_t len) {
  if (!ready("put")) return SKN_PMI_ERR;
  if (!key || !skn_pmi_key_ok(key, strlen(key))) {
    skn_log("PMI: put: invalid key '%s' (1-%d characters of [A-Za-z0-9_.-])", key ? key : "(null)",
            SKN_PMI_KEY_MAX);
    return SKN_PMI_INVAL;
  }
  if (len > SKN_PMI_VALUE_MAX || (len && !value)) {
    skn_log("PMI: put %s: value of %zu bytes (at most %u)", key, len, SKN_PMI_VALUE_MAX);
    return SKN_PMI_INVAL;
  }
  for (key_seen *k = keys_put; k; k = k->next)
    if (!strcmp(k->key, key)) {
      skn_log("PMI: put: this process already put key %s (each key once per job)", key);
      return SKN_PMI_INVAL;
    }
  key_seen *k = malloc(sizeof *k);
  if (!k) return SKN_PMI_ERR;
  snprintf(k->key, sizeof k->key, "%s", key);
  int rc = backend->put(key, value, len);
  if (rc != SKN_PMI_OK) {
    free(k);
    return rc;
  }
  k->next = keys_put;
  keys_put = k;
  return SKN_PMI_OK;
}

static int fence_unlocked(void) {
  if (!ready("fence")) return SKN_PMI_ERR;
  return backend->fence();
}

static int get_unlocked(int proc, const char *key, void **value, size_t *len) {
  if (!ready("get")) return SKN_PMI_ERR;
  if (proc < 0 || proc >= self.nprocs) {
    skn_log("PMI: get: process %d out of range [0, %d)", proc, self.nprocs);
    return SKN_PMI_INVAL;
  }
  if (!key || !skn_pmi_key_ok(key, strlen(key))) {
    skn_log("PMI: get: invalid key '%s'", key ? key : "(null)");
    return SKN_PMI_INVAL;
  }
  return backend->get(proc, key, value, len);
}

static int node_of_unlocked(int proc) {
  if (!backend || proc < 0 || proc >= self.nprocs) return -1;
  return backend->node_of(proc);
}

void skn_pmi_abort(int code, const char *msg) {
  if (!msg) msg = "";
  /* Another thread may be blocked in a fence holding the lock: wait a little, then end
     this process without the launcher's help (it reports the exit code). */
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 2;
  if (pthread_mutex_timedlock(&lock, &until) != 0) {
    skn_log("%s", msg);
    _exit(code);
  }
  if (backend && backend != &skn_pmi_skein_backend) { /* skeinrun prints it itself */
    char ranks[48];
    if (self.nranks == 1) snprintf(ranks, sizeof ranks, "rank %d", self.first_rank);
    else snprintf(ranks, sizeof ranks, "ranks %d-%d", self.first_rank, self.first_rank + self.nranks - 1);
    skn_log("process %d (%s) aborted the job with code %d: %s", self.proc, ranks, code, msg);
    /* These launchers relay our stderr through a pipe and may stop relaying as soon as
       they hear of the abort: give the message a head start (seen lost under hydra). */
    usleep(100000);
  }
  if (backend) backend->abort(code, msg);
  /* No launcher to tell, or it did not end us: end this process. */
  if (!backend) skn_log("%s", msg);
  _exit(code);
}

static int finalize_unlocked(void) {
  if (!ready("finalize")) return SKN_PMI_ERR;
  int rc = backend->finalize();
  backend = NULL;
  while (keys_put) {
    key_seen *k = keys_put;
    keys_put = k->next;
    free(k);
  }
  return rc;
}

/* ------------------------------------------------------------------ serialized entry points */

int skn_pmi_init(skn_pmi_info *info) {
  pthread_mutex_lock(&lock);
  int rc = init_unlocked(info);
  pthread_mutex_unlock(&lock);
  return rc;
}

int skn_pmi_put(const char *key, const void *value, size_t len) {
  pthread_mutex_lock(&lock);
  int rc = put_unlocked(key, value, len);
  pthread_mutex_unlock(&lock);
  return rc;
}

int skn_pmi_fence(void) {
  pthread_mutex_lock(&lock);
  int rc = fence_unlocked();
  pthread_mutex_unlock(&lock);
  return rc;
}

int skn_pmi_get(int proc, const char *key, void **value, size_t *len) {
  pthread_mutex_lock(&lock);
  int rc = get_unlocked(proc, key, value, len);
  pthread_mutex_unlock(&lock);
  return rc;
}

int skn_pmi_node_of(int proc) {
  pthread_mutex_lock(&lock);
  int rc = node_of_unlocked(proc);
  pthread_mutex_unlock(&lock);
  return rc;
}

int skn_pmi_finalize(void) {
  pthread_mutex_lock(&lock);
  int rc = finalize_unlocked();
  pthread_mutex_unlock(&lock);
  return rc;
}
