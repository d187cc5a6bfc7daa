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

/* Whether MPI_T is initialized is each rank's own state (skn_rank.mpit_refs), as it is each
 * process's in a process-based MPI; a thread of no rank has nothing to count on and is
 * refused. The generated entry points (functions.txt: `tools`) return
 * MPI_T_ERR_NOT_INITIALIZED before an impl_ function runs, and return errors as codes:
 * MPI_T calls no error handler. */

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

/* me: NULL on a thread of no rank (`anytime`) */
static int impl_T_init_thread(skn_rank *me, int required, int *provided) {
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE || !provided) return MPI_ERR_ARG;
  if (!me) return MPI_T_ERR_CANNOT_INIT;
  /* threads of the rank may call it too; the first of the rank counts its sends from now */
  if (__atomic_fetch_add(&me->mpit_refs, 1, __ATOMIC_RELAXED) == 0) skn_dev_count_sends(true);
  *provided = MPI_THREAD_MULTIPLE; /* the tables are immutable */
  return MPI_SUCCESS;
}

static int impl_T_finalize(skn_rank *me) {
  int n = me ? __atomic_load_n(&me->mpit_refs, __ATOMIC_RELAXED) : 0;
  do
    if (n == 0) return MPI_T_ERR_NOT_INITIALIZED;
  while (!__atomic_compare_exchange_n(&me->mpit_refs, &n, n - 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  if (n == 1) skn_dev_count_sends(false); /* the rank's last */
  return MPI_SUCCESS;
}

static int impl_T_cvar_get_num(skn_rank *me, int *num) {
  *num = NCVARS;
  return MPI_SUCCESS;
}

static int impl_T_cvar_get_info(skn_rank *me, int i, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                         MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope) {
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

static int impl_T_cvar_get_index(skn_rank *me, const char *name, int *index) {
  for (int i = 0; i < NCVARS; i++)
    if (!strcmp(cvars[i].name, name)) {
      *index = i;
      return MPI_SUCCESS;
    }
  return MPI_T_ERR_INVALID_NAME;
}

static int impl_T_cvar_handle_alloc(skn_rank *me, int i, void *obj, MPI_T_cvar_handle *handle, int *count) {
  (void)obj; /* bound to no object */
  if (i < 0 || i >= NCVARS) return MPI_T_ERR_INVALID_INDEX;
  struct skn_t_cvar *h = malloc(sizeof *h);
  if (!h) return MPI_T_ERR_MEMORY;
  h->index = i;
  *handle = h;
  *count = 1;
  return MPI_SUCCESS;
}

static int impl_T_cvar_handle_free(skn_rank *me, MPI_T_cvar_handle *handle) {
  if (!*handle) return MPI_T_ERR_INVALID_HANDLE;
  free(*handle);
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

static int impl_T_cvar_read(skn_rank *me, MPI_T_cvar_handle handle, void *buf) {
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

static int impl_T_cvar_write(skn_rank *me, MPI_T_cvar_handle handle, const void *buf) {
  (void)buf;
  if (!handle) return MPI_T_ERR_INVALID_HANDLE;
  return MPI_T_ERR_CVAR_SET_NEVER; /* read at start-up only */
}

/* ------------------------------------------------------------------ enumerations */


static const struct skn_t_enum *enum_of(MPI_T_enum e) { return e == &bind_enum ? e : NULL; }

static int impl_T_enum_get_info(skn_rank *me, MPI_T_enum enumtype, int *num, char *name, int *name_len) {
  const struct skn_t_enum *e = enum_of(enumtype);
  if (!e) return MPI_T_ERR_INVALID_HANDLE;
  if (num) *num = e->n;
  return copy_str(e->name, name, name_len);
}

static int impl_T_enum_get_item(skn_rank *me, MPI_T_enum enumtype, int index, int *value, char *name, int *name_len) {
  const struct skn_t_enum *e = enum_of(enumtype);
  if (!e) return MPI_T_ERR_INVALID_HANDLE;
  if (index < 0 || index >= e->n) return MPI_T_ERR_INVALID_ITEM;
  if (value) *value = e->items[index].value;
  return copy_str(e->items[index].name, name, name_len);
}

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

static int impl_T_pvar_get_num(skn_rank *me, int *num) {
  *num = NPVARS;
  return MPI_SUCCESS;
}

static int impl_T_pvar_get_info(skn_rank *me, int i, char *name, int *name_len, int *verbosity, int *var_class,
                                MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                                int *readonly, int *is_continuous, int *atomic) {
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

static int impl_T_pvar_get_index(skn_rank *me, const char *name, int var_class, int *index) {
  for (int i = 0; i < NPVARS; i++)
    if (pvars[i].var_class == var_class && !strcmp(pvars[i].name, name)) {
      *index = i;
      return MPI_SUCCESS;
    }
  return MPI_T_ERR_INVALID_NAME;
}

static int impl_T_pvar_session_create(skn_rank *me, MPI_T_pvar_session *session) {
  struct skn_t_session *s = calloc(1, sizeof *s);
  if (!s) return MPI_T_ERR_MEMORY;
  s->owner = me;
  *session = s;
  return MPI_SUCCESS;
}

/* A session is its rank's: another rank's session is as invalid as a freed one. */
static struct skn_t_session *session_of(skn_rank *me, MPI_T_pvar_session s) {
  return s && s->owner == me ? s : NULL;
}

static int impl_T_pvar_session_free(skn_rank *me, MPI_T_pvar_session *session) {
  struct skn_t_session *s = session_of(me, *session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  for (struct skn_t_pvar *h = s->handles, *next; h; h = next) {
    next = h->next;
    free(h);
  }
  free(s);
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}

static int impl_T_pvar_handle_alloc(skn_rank *me, MPI_T_pvar_session session, int i, void *obj,
                                    MPI_T_pvar_handle *handle, int *count) {
  (void)obj; /* bound to no object */
  struct skn_t_session *s = session_of(me, session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  if (i < 0 || i >= NPVARS) return MPI_T_ERR_INVALID_INDEX;
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

/* The handle if it belongs to session s, else NULL. */
static struct skn_t_pvar *handle_of(struct skn_t_session *s, MPI_T_pvar_handle handle) {
  for (struct skn_t_pvar *h = s->handles; h; h = h->next)
    if (h == handle) return h;
  return NULL;
}

static int impl_T_pvar_handle_free(skn_rank *me, MPI_T_pvar_session session, MPI_T_pvar_handle *handle) {
  struct skn_t_session *s = session_of(me, session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  struct skn_t_pvar *h = handle_of(s, *handle);
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  struct skn_t_pvar **at = &s->handles;
  while (*at != h) at = &(*at)->next;
  *at = h->next;
  free(h);
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

static uint64_t counter_value(skn_rank *me, const struct skn_t_pvar *h) {
  return h->accum + (h->started ? pvar_now(me, h->index) - h->base : 0);
}

enum pvar_action { START, STOP, RESET };

static int act(skn_rank *me, struct skn_t_pvar *h, enum pvar_action a) {
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
static int act_on(skn_rank *me, MPI_T_pvar_session session, MPI_T_pvar_handle handle, enum pvar_action a) {
  struct skn_t_session *s = session_of(me, session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  if (handle == MPI_T_PVAR_ALL_HANDLES) {
    for (struct skn_t_pvar *h = s->handles; h; h = h->next)
      if (!continuous(h->index)) act(me, h, a);
    return MPI_SUCCESS;
  }
  struct skn_t_pvar *h = handle_of(s, handle);
  return h ? act(me, h, a) : MPI_T_ERR_INVALID_HANDLE;
}

static int impl_T_pvar_start(skn_rank *me, MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return act_on(me, session, handle, START);
}
static int impl_T_pvar_stop(skn_rank *me, MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return act_on(me, session, handle, STOP);
}
static int impl_T_pvar_reset(skn_rank *me, MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return act_on(me, session, handle, RESET);
}

static int read_one(skn_rank *me, MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf, bool reset) {
  struct skn_t_session *s = session_of(me, session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  struct skn_t_pvar *h = handle == MPI_T_PVAR_ALL_HANDLES ? NULL : handle_of(s, handle);
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  if (!buf) return MPI_ERR_ARG;
  if (reset && continuous(h->index)) return MPI_T_ERR_PVAR_NO_WRITE;
  uint64_t v = continuous(h->index) ? pvar_now(me, h->index) : counter_value(me, h);
  if (pvars[h->index].type == MPI_UNSIGNED) *(unsigned *)buf = (unsigned)v;
  else *(unsigned long long *)buf = v;
  if (reset) act(me, h, RESET);
  return MPI_SUCCESS;
}

static int impl_T_pvar_read(skn_rank *me, MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
  return read_one(me, session, handle, buf, false);
}

static int impl_T_pvar_readreset(skn_rank *me, MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
  return read_one(me, session, handle, buf, true);
}

static int impl_T_pvar_write(skn_rank *me, MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf) {
  struct skn_t_session *s = session_of(me, session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  struct skn_t_pvar *h = handle == MPI_T_PVAR_ALL_HANDLES ? NULL : handle_of(s, handle);
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  if (continuous(h->index)) return MPI_T_ERR_PVAR_NO_WRITE;
  if (!buf) return MPI_ERR_ARG;
  h->accum = *(const unsigned long long *)buf; /* every counter is MPI_UNSIGNED_LONG_LONG */
  h->base = pvar_now(me, h->index);
  return MPI_SUCCESS;
}

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

static int impl_T_category_get_num(skn_rank *me, int *num) {
  *num = NCATS;
  return MPI_SUCCESS;
}

static int impl_T_category_get_info(skn_rank *me, int i, char *name, int *name_len, char *desc, int *desc_len,
                                    int *num_cvars, int *num_pvars, int *num_categories) {
  if (i < 0 || i >= NCATS) return MPI_T_ERR_INVALID_INDEX;
  copy_str(cats[i].name, name, name_len);
  copy_str(cats[i].desc, desc, desc_len);
  if (num_cvars) *num_cvars = i == CAT_SETTINGS ? NCVARS : 0;
  if (num_pvars) *num_pvars = pvars_in(i, 0, NULL);
  if (num_categories) *num_categories = 0;
  return MPI_SUCCESS;
}

static int impl_T_category_get_index(skn_rank *me, const char *name, int *index) {
  for (int i = 0; i < NCATS; i++)
    if (!strcmp(cats[i].name, name)) {
      *index = i;
      return MPI_SUCCESS;
    }
  return MPI_T_ERR_INVALID_NAME;
}

static int impl_T_category_get_cvars(skn_rank *me, int i, int len, int indices[]) {
  if (i < 0 || i >= NCATS) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0) return MPI_ERR_ARG;
  for (int k = 0; i == CAT_SETTINGS && k < len && k < NCVARS; k++) indices[k] = k;
  return MPI_SUCCESS;
}

static int impl_T_category_get_pvars(skn_rank *me, int i, int len, int indices[]) {
  if (i < 0 || i >= NCATS) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0) return MPI_ERR_ARG;
  pvars_in(i, len, indices);
  return MPI_SUCCESS;
}

static int impl_T_category_get_categories(skn_rank *me, int i, int len, int indices[]) {
  (void)indices; /* no category holds another */
  if (i < 0 || i >= NCATS) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0) return MPI_ERR_ARG;
  return MPI_SUCCESS;
}

static int impl_T_category_changed(skn_rank *me, int *stamp) {
  *stamp = 0; /* the categories never change */
  return MPI_SUCCESS;
}

#include "entries_mpit.h"
