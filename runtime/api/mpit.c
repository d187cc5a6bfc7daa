/* The MPI tools interface (MPI-3.1 chapter 14), first part: Skein's settings (the SKEIN_*
 * environment variables, docs/user-guide.md) as control variables, read-only for the
 * job's life (scope MPI_T_SCOPE_READONLY: they are read at start-up), in one category
 * "skein". No performance variables yet (MPI_T_pvar_get_num answers 0). Callable before
 * MPI_Init and from any thread; the values are the process's. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "boot/boot.h"

typedef struct cvar {
  const char *name, *desc;
  MPI_Datatype type; /* MPI_UNSIGNED_LONG_LONG or MPI_INT */
} cvar;

static const cvar cvars[] = {
    {"SKEIN_EAGER_LIMIT", "largest message (bytes) buffered when no receive is posted", MPI_UNSIGNED_LONG_LONG},
    {"SKEIN_BUFFER_BUDGET", "bytes of early-completed envelopes one receiver may hold", MPI_UNSIGNED_LONG_LONG},
    {"SKEIN_SPIN", "polling iterations before a waiting rank or idle worker blocks", MPI_UNSIGNED_LONG_LONG},
    {"SKEIN_DEADLOCK_MS", "quiet time (ms) before a job with every rank blocked is reported", MPI_UNSIGNED_LONG_LONG},
    {"SKEIN_STACK_SIZE", "stack size (bytes) of each rank", MPI_UNSIGNED_LONG_LONG},
    {"SKEIN_WORKERS", "worker kernel threads of this process", MPI_INT},
    {"SKEIN_BIND", "workers are bound to cores (1) or not (0)", MPI_INT},
};
enum { NCVARS = sizeof cvars / sizeof cvars[0] };

/* Whether MPI_T is initialized is each rank's own state, as it is each process's in a
 * process-based MPI; a thread of no rank has nothing to count on and is refused. */
static int *t_refs(void) {
  skn_rank *me = skn_rank_self();
  return me ? &me->mpit_refs : NULL;
}

struct skn_t_cvar {
  int index;
};

static int copy_str(const char *src, char *dst, int *len) {
  if (!len) return MPI_SUCCESS;
  int n = (int)strlen(src);
  if (dst && *len > 0) {
    int m = n < *len - 1 ? n : *len - 1;
    memcpy(dst, src, (size_t)m);
    dst[m] = '\0';
  }
  *len = n + 1;
  return MPI_SUCCESS;
}

int PMPI_T_init_thread(int required, int *provided) {
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE || !provided) return MPI_ERR_ARG;
  int *refs = t_refs();
  if (!refs) return MPI_T_ERR_CANNOT_INIT;
  __atomic_fetch_add(refs, 1, __ATOMIC_RELAXED); /* threads of the rank may call it too */
  *provided = MPI_THREAD_MULTIPLE; /* the tables are immutable */
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_init_thread);

int PMPI_T_finalize(void) {
  int *refs = t_refs();
  int n = refs ? __atomic_load_n(refs, __ATOMIC_RELAXED) : 0;
  do
    if (n == 0) return MPI_T_ERR_NOT_INITIALIZED;
  while (!__atomic_compare_exchange_n(refs, &n, n - 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_finalize);

#define NEED_INIT()                                              \
  do {                                                           \
    const int *refs_ = t_refs();                                 \
    if (!refs_ || __atomic_load_n(refs_, __ATOMIC_RELAXED) == 0) return MPI_T_ERR_NOT_INITIALIZED; \
  } while (0)

int PMPI_T_cvar_get_num(int *num) {
  NEED_INIT();
  if (!num) return MPI_ERR_ARG;
  *num = NCVARS;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_cvar_get_num);

int PMPI_T_cvar_get_info(int i, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                         MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope) {
  NEED_INIT();
  if (i < 0 || i >= NCVARS) return MPI_T_ERR_INVALID_INDEX;
  copy_str(cvars[i].name, name, name_len);
  copy_str(cvars[i].desc, desc, desc_len);
  if (verbosity) *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
  if (datatype) *datatype = cvars[i].type;
  if (enumtype) *enumtype = MPI_T_ENUM_NULL;
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  if (scope) *scope = MPI_T_SCOPE_READONLY;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_cvar_get_info);

int PMPI_T_cvar_get_index(const char *name, int *index) {
  NEED_INIT();
  if (!name || !index) return MPI_ERR_ARG;
  for (int i = 0; i < NCVARS; i++)
    if (!strcmp(cvars[i].name, name)) {
      *index = i;
      return MPI_SUCCESS;
    }
  return MPI_T_ERR_INVALID_NAME;
}
SKN_WEAK_ALIAS(T_cvar_get_index);

int PMPI_T_cvar_handle_alloc(int i, void *obj, MPI_T_cvar_handle *handle, int *count) {
  (void)obj; /* bound to no object */
  NEED_INIT();
  if (i < 0 || i >= NCVARS) return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_ERR_ARG;
  struct skn_t_cvar *h = malloc(sizeof *h);
  if (!h) return MPI_T_ERR_MEMORY;
  h->index = i;
  *handle = h;
  *count = 1;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_cvar_handle_alloc);

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle) {
  NEED_INIT();
  if (!handle || !*handle) return MPI_T_ERR_INVALID_HANDLE;
  free(*handle);
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_cvar_handle_free);

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf) {
  NEED_INIT();
  if (!handle || handle->index < 0 || handle->index >= NCVARS) return MPI_T_ERR_INVALID_HANDLE;
  if (!buf) return MPI_ERR_ARG;
  /* what start-up read: the same environment, the same defaults (boot/config.c) */
  skn_boot_config c;
  skn_boot_read_config(&c);
  unsigned long long v = 0;
  switch (handle->index) {
  case 0: v = skn_job_g.eager_limit ? skn_job_g.eager_limit : c.eager_limit; break;
  case 1: v = skn_job_g.buffer_budget ? skn_job_g.buffer_budget : c.buffer_budget; break;
  case 2: v = c.spin_iters; break;
  case 3: v = c.deadlock_ms; break;
  case 4: v = c.stack_size; break;
  case 5: *(int *)buf = c.nworkers; return MPI_SUCCESS;
  default: *(int *)buf = c.bind; return MPI_SUCCESS;
  }
  *(unsigned long long *)buf = v;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_cvar_read);

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf) {
  (void)buf;
  NEED_INIT();
  if (!handle) return MPI_T_ERR_INVALID_HANDLE;
  return MPI_T_ERR_CVAR_SET_NEVER; /* read at start-up only */
}
SKN_WEAK_ALIAS(T_cvar_write);

int PMPI_T_pvar_get_num(int *num) {
  NEED_INIT();
  if (!num) return MPI_ERR_ARG;
  *num = 0;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_pvar_get_num);

int PMPI_T_category_get_num(int *num) {
  NEED_INIT();
  if (!num) return MPI_ERR_ARG;
  *num = 1;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_category_get_num);

int PMPI_T_category_get_info(int i, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
                             int *num_pvars, int *num_categories) {
  NEED_INIT();
  if (i != 0) return MPI_T_ERR_INVALID_INDEX;
  copy_str("skein", name, name_len);
  copy_str("Skein runtime settings (SKEIN_* environment variables)", desc, desc_len);
  if (num_cvars) *num_cvars = NCVARS;
  if (num_pvars) *num_pvars = 0;
  if (num_categories) *num_categories = 0;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_category_get_info);

int PMPI_T_category_get_cvars(int i, int len, int indices[]) {
  NEED_INIT();
  if (i != 0) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && !indices)) return MPI_ERR_ARG;
  for (int k = 0; k < len && k < NCVARS; k++) indices[k] = k;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_category_get_cvars);

int PMPI_T_category_changed(int *stamp) {
  NEED_INIT();
  if (!stamp) return MPI_ERR_ARG;
  *stamp = 0; /* the categories never change */
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_category_changed);
