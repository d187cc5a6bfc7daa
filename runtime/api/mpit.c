/* The MPI tools interface (MPI-3.1 chapter 14).
 * Control variables: Skein's settings (the SKEIN_* environment variables,
 * docs/user-guide.md), read-only for the job's life (scope MPI_T_SCOPE_READONLY: they are
 * read at start-up); the values are the process's.
 * Performance variables: the calling rank's own figures (a rank is what a process is to
 * a process-based MPI): messages and bytes it sent, messages that reached it, its
 * unexpected queue and its heap. Counters count while a handle is started, per handle;
 * levels and high-water marks are continuous. The send counters count only while the rank
 * has the tools interface initialized (no handle can be started otherwise).
 * Categories: settings, point-to-point, memory. Callable before MPI_Init and from any
 * thread of a rank. */
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
enum { CVAR_BIND = 6 };

/* The values SKEIN_BIND takes, for tools that show names. */
struct skn_t_enum {
  const char *name;
  int n;
  struct { int value; const char *name; } items[2];
};
static const struct skn_t_enum bind_enum = {"skein_bind", 2, {{0, "off"}, {1, "cores"}}};
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
  if (enumtype) *enumtype = i == CVAR_BIND ? (MPI_T_enum)&bind_enum : MPI_T_ENUM_NULL;
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

/* ------------------------------------------------------------------ enumerations */


static const struct skn_t_enum *enum_of(MPI_T_enum e) { return e == &bind_enum ? e : NULL; }

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len) {
  NEED_INIT();
  const struct skn_t_enum *e = enum_of(enumtype);
  if (!e) return MPI_T_ERR_INVALID_HANDLE;
  if (num) *num = e->n;
  return copy_str(e->name, name, name_len);
}
SKN_WEAK_ALIAS(T_enum_get_info);

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len) {
  NEED_INIT();
  const struct skn_t_enum *e = enum_of(enumtype);
  if (!e) return MPI_T_ERR_INVALID_HANDLE;
  if (index < 0 || index >= e->n) return MPI_T_ERR_INVALID_ITEM;
  if (value) *value = e->items[index].value;
  return copy_str(e->items[index].name, name, name_len);
}
SKN_WEAK_ALIAS(T_enum_get_item);

/* ------------------------------------------------------------------ performance variables */

enum { CAT_SETTINGS, CAT_P2P, CAT_MEMORY, NCATS };

typedef struct pvar {
  const char *name, *desc;
  int var_class;
  MPI_Datatype type; /* MPI_UNSIGNED_LONG_LONG or MPI_UNSIGNED */
  int category;
} pvar;

static const pvar pvars[] = {
    {"skein_sent_messages", "point-to-point messages this rank sent", MPI_T_PVAR_CLASS_COUNTER,
     MPI_UNSIGNED_LONG_LONG, CAT_P2P},
    {"skein_sent_bytes", "bytes of data this rank's sends carried", MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
     CAT_P2P},
    {"skein_arrived_messages", "point-to-point messages that reached this rank (matched or queued)",
     MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, CAT_P2P},
    {"skein_unexpected_length", "messages in this rank's unexpected queue now", MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED,
     CAT_P2P},
    {"skein_unexpected_peak", "longest this rank's unexpected queue has been", MPI_T_PVAR_CLASS_HIGHWATERMARK,
     MPI_UNSIGNED, CAT_P2P},
    {"skein_heap_in_use", "bytes allocated and not freed by this rank and its threads (0: no per-rank heap)",
     MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED_LONG_LONG, CAT_MEMORY},
    {"skein_heap_peak", "high-water mark of skein_heap_in_use", MPI_T_PVAR_CLASS_HIGHWATERMARK,
     MPI_UNSIGNED_LONG_LONG, CAT_MEMORY},
};
enum { NPVARS = sizeof pvars / sizeof pvars[0] };

/* Counters count only while started; levels and marks always show the state. */
static bool continuous(int i) { return pvars[i].var_class != MPI_T_PVAR_CLASS_COUNTER; }

static uint64_t pvar_now(skn_rank *me, int i) {
  switch (i) {
  case 0: return atomic_load_explicit(&me->sent_msgs, memory_order_relaxed);
  case 1: return atomic_load_explicit(&me->sent_bytes, memory_order_relaxed);
  case 5:
  case 6: {
    MPIX_Heap_stats h;
    if (MPIX_Heap_get_stats(&h) != MPI_SUCCESS) return 0;
    return i == 5 ? h.in_use : h.peak;
  }
  default: { /* the receive side, under its lock */
    skn_spin_lock(&me->mq.lock);
    uint64_t v = i == 2 ? skn_mq_arrived(&me->mq) : i == 3 ? me->mq.unexp_len : me->mq.unexp_peak;
    skn_spin_unlock(&me->mq.lock);
    return v;
  }
  }
}

struct skn_t_pvar {
  int index;
  bool started;
  uint64_t accum; /* counters: what was counted while started, before `base` */
  uint64_t base;  /* counters: the raw value when last started, reset or written */
  struct skn_t_session *session;
  struct skn_t_pvar *next;
};
struct skn_t_session {
  skn_rank *owner;
  struct skn_t_pvar *handles;
};

int PMPI_T_pvar_get_num(int *num) {
  NEED_INIT();
  if (!num) return MPI_ERR_ARG;
  *num = NPVARS;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_pvar_get_num);

int PMPI_T_pvar_get_info(int i, char *name, int *name_len, int *verbosity, int *var_class, MPI_Datatype *datatype,
                         MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *readonly,
                         int *is_continuous, int *atomic) {
  NEED_INIT();
  if (i < 0 || i >= NPVARS) return MPI_T_ERR_INVALID_INDEX;
  copy_str(pvars[i].name, name, name_len);
  copy_str(pvars[i].desc, desc, desc_len);
  if (verbosity) *verbosity = MPI_T_VERBOSITY_USER_BASIC;
  if (var_class) *var_class = pvars[i].var_class;
  if (datatype) *datatype = pvars[i].type;
  if (enumtype) *enumtype = MPI_T_ENUM_NULL;
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  if (readonly) *readonly = continuous(i); /* a counter may be written and reset, per handle */
  if (is_continuous) *is_continuous = continuous(i);
  if (atomic) *atomic = 0;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_pvar_get_info);

int PMPI_T_pvar_get_index(const char *name, int var_class, int *index) {
  NEED_INIT();
  if (!name || !index) return MPI_ERR_ARG;
  for (int i = 0; i < NPVARS; i++)
    if (pvars[i].var_class == var_class && !strcmp(pvars[i].name, name)) {
      *index = i;
      return MPI_SUCCESS;
    }
  return MPI_T_ERR_INVALID_NAME;
}
SKN_WEAK_ALIAS(T_pvar_get_index);

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session) {
  NEED_INIT();
  if (!session) return MPI_ERR_ARG;
  struct skn_t_session *s = calloc(1, sizeof *s);
  if (!s) return MPI_T_ERR_MEMORY;
  s->owner = skn_rank_self();
  *session = s;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_pvar_session_create);

/* A session is its rank's: another rank's session is as invalid as a freed one. */
static struct skn_t_session *session_of(MPI_T_pvar_session s) {
  return s && s->owner == skn_rank_self() ? s : NULL;
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session) {
  NEED_INIT();
  struct skn_t_session *s = session ? session_of(*session) : NULL;
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  for (struct skn_t_pvar *h = s->handles, *next; h; h = next) {
    next = h->next;
    free(h);
  }
  free(s);
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_pvar_session_free);

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int i, void *obj, MPI_T_pvar_handle *handle, int *count) {
  (void)obj; /* bound to no object */
  NEED_INIT();
  struct skn_t_session *s = session_of(session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  if (i < 0 || i >= NPVARS) return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_ERR_ARG;
  struct skn_t_pvar *h = calloc(1, sizeof *h);
  if (!h) return MPI_T_ERR_MEMORY;
  h->index = i;
  h->session = s;
  h->started = continuous(i);
  h->next = s->handles;
  s->handles = h;
  *handle = h;
  *count = 1;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_pvar_handle_alloc);

/* The handle if it belongs to session s, else NULL. */
static struct skn_t_pvar *handle_of(struct skn_t_session *s, MPI_T_pvar_handle handle) {
  for (struct skn_t_pvar *h = s->handles; h; h = h->next)
    if (h == handle) return h;
  return NULL;
}

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle) {
  NEED_INIT();
  struct skn_t_session *s = session_of(session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  struct skn_t_pvar *h = handle ? handle_of(s, *handle) : NULL;
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  struct skn_t_pvar **at = &s->handles;
  while (*at != h) at = &(*at)->next;
  *at = h->next;
  free(h);
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_pvar_handle_free);

static uint64_t counter_value(skn_rank *me, const struct skn_t_pvar *h) {
  return h->accum + (h->started ? pvar_now(me, h->index) - h->base : 0);
}

enum pvar_action { START, STOP, RESET };

static int act(struct skn_t_pvar *h, enum pvar_action a) {
  skn_rank *me = skn_rank_self();
  if (continuous(h->index)) return a == RESET ? MPI_T_ERR_PVAR_NO_WRITE : MPI_T_ERR_PVAR_NO_STARTSTOP;
  switch (a) {
  case START:
    if (!h->started) h->base = pvar_now(me, h->index);
    h->started = true;
    break;
  case STOP:
    h->accum = counter_value(me, h);
    h->started = false;
    break;
  case RESET:
    h->accum = 0;
    h->base = pvar_now(me, h->index);
    break;
  }
  return MPI_SUCCESS;
}

/* Start, stop or reset one handle, or with MPI_T_PVAR_ALL_HANDLES every handle of the
 * session that allows it (the others are skipped, as the standard says). */
static int act_on(MPI_T_pvar_session session, MPI_T_pvar_handle handle, enum pvar_action a) {
  NEED_INIT();
  struct skn_t_session *s = session_of(session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  if (handle == MPI_T_PVAR_ALL_HANDLES) {
    for (struct skn_t_pvar *h = s->handles; h; h = h->next)
      if (!continuous(h->index)) act(h, a);
    return MPI_SUCCESS;
  }
  struct skn_t_pvar *h = handle_of(s, handle);
  return h ? act(h, a) : MPI_T_ERR_INVALID_HANDLE;
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) { return act_on(session, handle, START); }
SKN_WEAK_ALIAS(T_pvar_start);
int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) { return act_on(session, handle, STOP); }
SKN_WEAK_ALIAS(T_pvar_stop);
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) { return act_on(session, handle, RESET); }
SKN_WEAK_ALIAS(T_pvar_reset);

static int read_one(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf, bool reset) {
  NEED_INIT();
  struct skn_t_session *s = session_of(session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  struct skn_t_pvar *h = handle == MPI_T_PVAR_ALL_HANDLES ? NULL : handle_of(s, handle);
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  if (!buf) return MPI_ERR_ARG;
  if (reset && continuous(h->index)) return MPI_T_ERR_PVAR_NO_WRITE;
  skn_rank *me = skn_rank_self();
  uint64_t v = continuous(h->index) ? pvar_now(me, h->index) : counter_value(me, h);
  if (pvars[h->index].type == MPI_UNSIGNED) *(unsigned *)buf = (unsigned)v;
  else *(unsigned long long *)buf = v;
  if (reset) act(h, RESET);
  return MPI_SUCCESS;
}

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
  return read_one(session, handle, buf, false);
}
SKN_WEAK_ALIAS(T_pvar_read);

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
  return read_one(session, handle, buf, true);
}
SKN_WEAK_ALIAS(T_pvar_readreset);

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf) {
  NEED_INIT();
  struct skn_t_session *s = session_of(session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  struct skn_t_pvar *h = handle == MPI_T_PVAR_ALL_HANDLES ? NULL : handle_of(s, handle);
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  if (continuous(h->index)) return MPI_T_ERR_PVAR_NO_WRITE;
  if (!buf) return MPI_ERR_ARG;
  h->accum = *(const unsigned long long *)buf; /* every counter is MPI_UNSIGNED_LONG_LONG */
  h->base = pvar_now(skn_rank_self(), h->index);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_pvar_write);

/* ------------------------------------------------------------------ categories */

static const struct {
  const char *name, *desc;
} cats[NCATS] = {
    [CAT_SETTINGS] = {"skein", "Skein runtime settings (SKEIN_* environment variables)"},
    [CAT_P2P] = {"skein_p2p", "point-to-point traffic of the calling rank"},
    [CAT_MEMORY] = {"skein_memory", "the calling rank's heap"},
};

static int pvars_in(int cat, int len, int *indices) {
  int n = 0;
  for (int i = 0; i < NPVARS; i++)
    if (pvars[i].category == cat) {
      if (indices && n < len) indices[n] = i;
      n++;
    }
  return n;
}

int PMPI_T_category_get_num(int *num) {
  NEED_INIT();
  if (!num) return MPI_ERR_ARG;
  *num = NCATS;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_category_get_num);

int PMPI_T_category_get_info(int i, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
                             int *num_pvars, int *num_categories) {
  NEED_INIT();
  if (i < 0 || i >= NCATS) return MPI_T_ERR_INVALID_INDEX;
  copy_str(cats[i].name, name, name_len);
  copy_str(cats[i].desc, desc, desc_len);
  if (num_cvars) *num_cvars = i == CAT_SETTINGS ? NCVARS : 0;
  if (num_pvars) *num_pvars = pvars_in(i, 0, NULL);
  if (num_categories) *num_categories = 0;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_category_get_info);

int PMPI_T_category_get_index(const char *name, int *index) {
  NEED_INIT();
  if (!name || !index) return MPI_ERR_ARG;
  for (int i = 0; i < NCATS; i++)
    if (!strcmp(cats[i].name, name)) {
      *index = i;
      return MPI_SUCCESS;
    }
  return MPI_T_ERR_INVALID_NAME;
}
SKN_WEAK_ALIAS(T_category_get_index);

int PMPI_T_category_get_cvars(int i, int len, int indices[]) {
  NEED_INIT();
  if (i < 0 || i >= NCATS) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && !indices)) return MPI_ERR_ARG;
  for (int k = 0; i == CAT_SETTINGS && k < len && k < NCVARS; k++) indices[k] = k;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_category_get_cvars);

int PMPI_T_category_get_pvars(int i, int len, int indices[]) {
  NEED_INIT();
  if (i < 0 || i >= NCATS) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && !indices)) return MPI_ERR_ARG;
  pvars_in(i, len, indices);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_category_get_pvars);

int PMPI_T_category_get_categories(int i, int len, int indices[]) {
  (void)indices; /* no category holds another */
  NEED_INIT();
  if (i < 0 || i >= NCATS) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0) return MPI_ERR_ARG;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_category_get_categories);

int PMPI_T_category_changed(int *stamp) {
  NEED_INIT();
  if (!stamp) return MPI_ERR_ARG;
  *stamp = 0; /* the categories never change */
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(T_category_changed);
