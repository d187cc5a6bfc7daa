/* Attribute caching on communicators and datatypes, and datatype names. Keyvals are the
 * calling rank's own (a per-rank table; handle = SKN_KEYVAL_BASE + index), and so are
 * attributes: they hang off the rank's view of the communicator or the rank's metadata of
 * a datatype handle, so two ranks caching under the same keyval value on MPI_COMM_WORLD
 * or MPI_INT never see each other's values. Callbacks run outside the rank lock (they may
 * call MPI). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects.h"

/* ------------------------------------------------------------------ predefined callbacks */

int MPI_COMM_NULL_COPY_FN(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)oldcomm, (void)keyval, (void)extra, (void)in, (void)out;
  *flag = 0;
  return MPI_SUCCESS;
}

int MPI_COMM_DUP_FN(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)oldcomm, (void)keyval, (void)extra;
  *(void **)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}

int MPI_COMM_NULL_DELETE_FN(MPI_Comm comm, int keyval, void *val, void *extra) {
  (void)comm, (void)keyval, (void)val, (void)extra;
  return MPI_SUCCESS;
}

int MPI_TYPE_NULL_COPY_FN(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag) {
  return MPI_COMM_NULL_COPY_FN(t, keyval, extra, in, out, flag);
}
int MPI_TYPE_DUP_FN(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag) {
  return MPI_COMM_DUP_FN(t, keyval, extra, in, out, flag);
}
int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype t, int keyval, void *val, void *extra) {
  return MPI_COMM_NULL_DELETE_FN(t, keyval, val, extra);
}

int MPI_WIN_NULL_COPY_FN(MPI_Win w, int keyval, void *extra, void *in, void *out, int *flag) {
  return MPI_COMM_NULL_COPY_FN(w, keyval, extra, in, out, flag);
}
int MPI_WIN_DUP_FN(MPI_Win w, int keyval, void *extra, void *in, void *out, int *flag) {
  return MPI_COMM_DUP_FN(w, keyval, extra, in, out, flag);
}
int MPI_WIN_NULL_DELETE_FN(MPI_Win w, int keyval, void *val, void *extra) {
  return MPI_COMM_NULL_DELETE_FN(w, keyval, val, extra);
}

/* ------------------------------------------------------------------ predefined attributes
 * Immutable values shared by all ranks; Comm_get_attr hands out pointers to them. */

static const int predef_values[] = {
    [MPI_TAG_UB] = SKN_TAG_UB,        [MPI_HOST] = MPI_PROC_NULL, [MPI_IO] = MPI_ANY_SOURCE,
    [MPI_WTIME_IS_GLOBAL] = 1, /* one process, one clock */
    [MPI_APPNUM] = 0,
};
static const int wtime_not_global = 0; /* several processes: hosts' clocks differ */

static bool is_predefined(int keyval) { return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE; }

/* Pointer to the value of a predefined attribute, or NULL if it has none. */
static void *predefined_value(int keyval) {
  switch (keyval) {
  case MPI_WTIME_IS_GLOBAL:
    if (skn_job_g.nprocs > 1) return (void *)(uintptr_t)&wtime_not_global;
    return (void *)(uintptr_t)&predef_values[keyval];
  case MPI_TAG_UB:
  case MPI_HOST:
  case MPI_IO:
  case MPI_APPNUM:
    return (void *)(uintptr_t)&predef_values[keyval];
  case MPI_UNIVERSE_SIZE:
    return &skn_job_g.size; /* set before any rank starts, never changed */
  default:
    return NULL;
  }
}

/* ------------------------------------------------------------------ keyvals */

static const char *const kind_names[] = {"", "communicator", "datatype", "window"};

/* Caller holds the rank lock. NULL unless keyval names a live entry (freed or not). */
static skn_keyval *kv_get(skn_rank *me, int keyval) {
  skn_api_rank *api = skn_api_of(me);
  if (keyval < SKN_KEYVAL_BASE || keyval - SKN_KEYVAL_BASE >= api->nkeyvals) return NULL;
  return api->keyvals[keyval - SKN_KEYVAL_BASE];
}

/* Caller holds the rank lock. */
static void kv_unref(skn_rank *me, int keyval) {
  skn_keyval *k = kv_get(me, keyval);
  if (k && --k->refs == 0) {
    skn_api_of(me)->keyvals[keyval - SKN_KEYVAL_BASE] = NULL;
    if (k->release) k->release(k->extra);
    free(k);
  }
}

void skn_api_keyval_own_extra(int keyval, void (*release)(void *extra)) {
  skn_rank *me = skn_api_self_any("skn_api_keyval_own_extra");
  skn_rank_lock(me);
  skn_keyval *k = kv_get(me, keyval);
  if (k) k->release = release;
  skn_rank_unlock(me);
}

static int keyval_error(skn_rank *me, MPI_Comm comm, const char *fn, int kind, int keyval) {
  return skn_api_error(me, comm, MPI_ERR_KEYVAL, fn, "keyval=%d is not a valid %s keyval%s", keyval,
                       kind_names[kind], is_predefined(keyval) ? " for this call (predefined)" : "");
}

/* The entry points generated from runtime/binding/functions.txt (entries_attr.h, included
 * at the end) find the rank and check handles and pointers before calling the impl_
 * functions below; keyvals are checked here, against the object's kind. */

static int keyval_create(skn_rank *me, const char *fn, int kind, MPI_Comm_copy_attr_function *copy_fn,
                         MPI_Comm_delete_attr_function *delete_fn, int *keyval, void *extra_state) {
  skn_keyval *k = malloc(sizeof *k);
  if (!k) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  *k = (skn_keyval){kind, copy_fn, delete_fn, extra_state, 1, false, NULL};
  skn_api_rank *api = skn_api_of(me);
  skn_rank_lock(me);
  int idx;
  SKN_TABLE_SLOT(api->keyvals, api->nkeyvals, 0, idx);
  if (idx >= 0) api->keyvals[idx] = k;
  skn_rank_unlock(me);
  if (idx < 0) {
    free(k);
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  }
  *keyval = SKN_KEYVAL_BASE + idx;
  return MPI_SUCCESS;
}

static int keyval_free(skn_rank *me, const char *fn, int kind, int *keyval) {
  skn_rank_lock(me);
  skn_keyval *k = kv_get(me, *keyval);
  bool ok = k && k->kind == kind;
  if (ok && !k->freed) { /* freeing again while attributes still use it does nothing, as in MPICH */
    k->freed = true; /* attributes still using it keep it alive */
    kv_unref(me, *keyval);
  }
  skn_rank_unlock(me);
  if (!ok) return keyval_error(me, SKN_API_NOOBJ, fn, kind, *keyval);
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

static int impl_Comm_create_keyval(skn_rank *me, const char *fn, MPI_Comm_copy_attr_function *copy_fn,
                                   MPI_Comm_delete_attr_function *delete_fn, int *keyval, void *extra_state) {
  return keyval_create(me, fn, SKN_KEYVAL_COMM, copy_fn, delete_fn, keyval, extra_state);
}

static int impl_Comm_free_keyval(skn_rank *me, const char *fn, int *keyval) {
  return keyval_free(me, fn, SKN_KEYVAL_COMM, keyval);
}

static int impl_Type_create_keyval(skn_rank *me, const char *fn, MPI_Type_copy_attr_function *copy_fn,
                                   MPI_Type_delete_attr_function *delete_fn, int *keyval, void *extra_state) {
  return keyval_create(me, fn, SKN_KEYVAL_TYPE, copy_fn, delete_fn, keyval, extra_state);
}

static int impl_Type_free_keyval(skn_rank *me, const char *fn, int *keyval) {
  return keyval_free(me, fn, SKN_KEYVAL_TYPE, keyval);
}

/* ------------------------------------------------------------------ attribute lists
 * The object an attribute call names: its kind, handle, the rank's attribute list for it
 * and the communicator whose error handler reports errors. */

typedef struct attr_obj {
  int kind, handle;
  skn_attr **list;
  MPI_Comm errcomm;
} attr_obj;

static skn_attr *find(skn_attr *list, int keyval) {
  for (skn_attr *a = list; a; a = a->next)
    if (a->keyval == keyval) return a;
  return NULL;
}

static int check_keyval(skn_rank *me, const char *fn, const attr_obj *o, int keyval) {
  skn_rank_lock(me);
  skn_keyval *k = kv_get(me, keyval);
  /* A freed keyval stays usable by the attributes that still hold it (until the last is
   * deleted, its delete callback runs), so a saved copy of the handle still works. */
  bool ok = k && k->kind == o->kind;
  skn_rank_unlock(me);
  return ok ? MPI_SUCCESS : keyval_error(me, o->errcomm, fn, o->kind, keyval);
}

/* Runs the delete callback of (keyval, val) on the object. */
static int run_delete(skn_rank *me, int handle, int keyval, void *val) {
  skn_rank_lock(me);
  skn_keyval *k = kv_get(me, keyval);
  MPI_Comm_delete_attr_function *del = k ? k->del : NULL;
  void *extra = k ? k->extra : NULL;
  skn_rank_unlock(me);
  return del ? del(handle, keyval, val, extra) : MPI_SUCCESS;
}

/* Unlinks and frees the attribute of keyval in *list, if any (no callback). */
static void unlink_attr(skn_rank *me, skn_attr **list, int keyval) {
  skn_rank_lock(me);
  for (skn_attr **p = list; *p; p = &(*p)->next)
    if ((*p)->keyval == keyval) {
      skn_attr *a = *p;
      *p = a->next;
      free(a);
      kv_unref(me, keyval);
      break;
    }
  skn_rank_unlock(me);
}

static int attr_set(skn_rank *me, const char *fn, const attr_obj *o, int keyval, void *attribute_val) {
  int rc = check_keyval(me, fn, o, keyval);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me);
  skn_attr *a = find(*o->list, keyval);
  void *old = a ? a->val : NULL;
  skn_rank_unlock(me);
  if (a) { /* replacing: the old value is deleted first */
    rc = run_delete(me, o->handle, keyval, old);
    if (rc != MPI_SUCCESS)
      return skn_api_error(me, o->errcomm, skn_attr_errclass(rc), fn, "the delete callback of keyval %d returned %d",
                           keyval, rc);
  }
  skn_attr *fresh = malloc(sizeof *fresh);
  skn_rank_lock(me);
  if ((a = find(*o->list, keyval))) { /* (the callback may have removed it) */
    a->val = attribute_val;
    a->fortran = false; /* C's until skn_api_attr_fortran marks it */
    free(fresh);
    fresh = a;
  } else if (fresh) {
    *fresh = (skn_attr){*o->list, keyval, attribute_val, false};
    *o->list = fresh;
    kv_get(me, keyval)->refs++;
  }
  skn_rank_unlock(me);
  if (!fresh) return skn_api_error(me, o->errcomm, MPI_ERR_NO_MEM, fn, "out of memory");
  return MPI_SUCCESS;
}

static int attr_get(skn_rank *me, const char *fn, const attr_obj *o, int keyval, void *attribute_val, int *flag) {
  if (!attribute_val || !flag) return skn_api_error(me, o->errcomm, MPI_ERR_ARG, fn, "attribute_val or flag NULL");
  int rc = check_keyval(me, fn, o, keyval);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me);
  skn_attr *a = o->list ? find(*o->list, keyval) : NULL;
  *flag = a != NULL;
  if (a) *(void **)attribute_val = a->fortran ? (void *)&a->val : a->val;
  skn_rank_unlock(me);
  return MPI_SUCCESS;
}

static int attr_delete(skn_rank *me, const char *fn, const attr_obj *o, int keyval) {
  int rc = check_keyval(me, fn, o, keyval);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me);
  skn_attr *a = o->list ? find(*o->list, keyval) : NULL;
  void *val = a ? a->val : NULL;
  skn_rank_unlock(me);
  if (!a) return MPI_SUCCESS; /* nothing cached: nothing to delete */
  rc = run_delete(me, o->handle, keyval, val);
  if (rc != MPI_SUCCESS) /* the attribute stays */
    return skn_api_error(me, o->errcomm, skn_attr_errclass(rc), fn, "the delete callback of keyval %d returned %d",
                         keyval, rc);
  unlink_attr(me, o->list, keyval);
  return MPI_SUCCESS;
}

int skn_attr_copy_all(skn_rank *me, int oldhandle, skn_attr *from, skn_attr **to) {
  /* Snapshot the list: callbacks may change it. */
  skn_rank_lock(me);
  int n = 0;
  for (skn_attr *a = from; a; a = a->next) n++;
  skn_attr *snap = malloc(sizeof *snap * (size_t)(n ? n : 1));
  if (snap) {
    n = 0;
    for (skn_attr *a = from; a; a = a->next) snap[n++] = *a;
  }
  skn_rank_unlock(me);
  if (!snap) return MPI_ERR_NO_MEM;
  skn_attr **tail = to;
  while (*tail) tail = &(*tail)->next;
  int rc = MPI_SUCCESS;
  for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
    skn_rank_lock(me);
    skn_keyval *k = kv_get(me, snap[i].keyval);
    MPI_Comm_copy_attr_function *copy = k ? k->copy : NULL;
    void *extra = k ? k->extra : NULL;
    skn_rank_unlock(me);
    if (!copy) continue;
    void *out = NULL;
    int flag = 0;
    rc = copy(oldhandle, snap[i].keyval, extra, snap[i].val, &out, &flag);
    if (rc != MPI_SUCCESS || !flag) continue;
    skn_attr *a = malloc(sizeof *a);
    if (!a) {
      rc = MPI_ERR_NO_MEM;
      break;
    }
    /* a copy of a Fortran value (Fortran's callbacks, or C's MPI_*_DUP_FN that stand for
     * Fortran's) is a Fortran value */
    *a = (skn_attr){NULL, snap[i].keyval, out, snap[i].fortran};
    skn_rank_lock(me);
    *tail = a;
    tail = &a->next;
    kv_get(me, a->keyval)->refs++;
    skn_rank_unlock(me);
  }
  free(snap);
  return rc;
}

int skn_attr_delete_all(skn_rank *me, int handle, skn_attr **list) {
  for (;;) {
    skn_rank_lock(me);
    skn_attr *a = *list;
    int keyval = a ? a->keyval : 0;
    void *val = a ? a->val : NULL;
    skn_rank_unlock(me);
    if (!a) return MPI_SUCCESS;
    int rc = run_delete(me, handle, keyval, val);
    if (rc != MPI_SUCCESS) return rc;
    unlink_attr(me, list, keyval);
  }
}

static skn_type_meta *type_meta(skn_rank *me, MPI_Datatype t, bool create);

bool skn_api_attr_fortran(int handle, int keyval, bool mark) {
  skn_rank *me = skn_api_self_any("skn_api_attr_fortran");
  skn_attr **list = NULL;
  skn_rank_lock(me);
  switch ((unsigned)handle >> 24) {
  case SKN_KIND_COMM: {
    skn_rank_unlock(me);
    skn_comm_view *v = skn_api_comm(me, handle);
    skn_rank_lock(me);
    list = v ? &v->api->attrs : NULL;
    break;
  }
  case SKN_KIND_DATATYPE: {
    skn_type_meta *m = type_meta(me, handle, false);
    list = m ? &m->attrs : NULL;
    break;
  }
  case SKN_KIND_WIN: {
    skn_rank_unlock(me);
    skn_win_view *v = skn_api_win(me, handle);
    skn_rank_lock(me);
    list = v ? &v->attrs : NULL;
    break;
  }
  }
  skn_attr *a = list ? find(*list, keyval) : NULL;
  if (a && mark) a->fortran = true;
  bool fortran = a && a->fortran;
  skn_rank_unlock(me);
  return fortran;
}

/* ------------------------------------------------------------------ communicator attributes */

static attr_obj comm_obj(MPI_Comm comm, skn_comm_view *v) {
  return (attr_obj){SKN_KEYVAL_COMM, comm, &v->api->attrs, comm};
}

static int impl_Comm_set_attr(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int keyval,
                              void *attribute_val) {
  attr_obj o = comm_obj(comm, v);
  return attr_set(me, fn, &o, keyval, attribute_val);
}

static int impl_Comm_get_attr(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int keyval,
                              void *attribute_val, int *flag) {
  attr_obj o = comm_obj(comm, v);
  if (is_predefined(keyval)) {
    if (!attribute_val) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "attribute_val=NULL");
    void *p = keyval == MPI_LASTUSEDCODE ? (void *)(uintptr_t)skn_api_lastusedcode(me) : predefined_value(keyval);
    *flag = p != NULL;
    if (p) *(void **)attribute_val = p;
    return MPI_SUCCESS;
  }
  return attr_get(me, fn, &o, keyval, attribute_val, flag);
}

static int impl_Comm_delete_attr(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int keyval) {
  attr_obj o = comm_obj(comm, v);
  return attr_delete(me, fn, &o, keyval);
}

/* ------------------------------------------------------------------ datatype names and attributes */

/* The rank's metadata of type handle t, created when `create`; NULL if none (or out of
 * memory when creating). Caller holds the rank lock. */
static skn_type_meta *type_meta(skn_rank *me, MPI_Datatype t, bool create) {
  skn_api_rank *api = skn_api_of(me);
  int idx = (int)((unsigned)t & 0xffffffu);
  if (idx >= api->ntmeta) {
    if (!create) return NULL;
    int n = api->ntmeta ? api->ntmeta : 64;
    while (n <= idx) n *= 2;
    skn_type_meta **grown = realloc(api->tmeta, sizeof *grown * (size_t)n);
    if (!grown) return NULL;
    memset(grown + api->ntmeta, 0, sizeof *grown * (size_t)(n - api->ntmeta));
    api->tmeta = grown;
    api->ntmeta = n;
  }
  if (!api->tmeta[idx] && create) api->tmeta[idx] = calloc(1, sizeof(skn_type_meta));
  return api->tmeta[idx];
}

/* t: a valid datatype (the entry point checked it). */
static int type_obj(skn_rank *me, const char *fn, MPI_Datatype t, bool create, attr_obj *o) {
  skn_rank_lock(me);
  skn_type_meta *m = type_meta(me, t, create);
  skn_rank_unlock(me);
  if (create && !m) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  *o = (attr_obj){SKN_KEYVAL_TYPE, t, m ? &m->attrs : NULL, SKN_API_NOOBJ};
  return MPI_SUCCESS;
}

static int impl_Type_set_attr(skn_rank *me, const char *fn, MPI_Datatype t, const skn_dtype *d, int keyval,
                              void *attribute_val) {
  attr_obj o;
  int rc = type_obj(me, fn, t, true, &o);
  return rc != MPI_SUCCESS ? rc : attr_set(me, fn, &o, keyval, attribute_val);
}

static int impl_Type_get_attr(skn_rank *me, const char *fn, MPI_Datatype t, const skn_dtype *d, int keyval,
                              void *attribute_val, int *flag) {
  attr_obj o;
  int rc = type_obj(me, fn, t, false, &o);
  return rc != MPI_SUCCESS ? rc : attr_get(me, fn, &o, keyval, attribute_val, flag);
}

static int impl_Type_delete_attr(skn_rank *me, const char *fn, MPI_Datatype t, const skn_dtype *d, int keyval) {
  attr_obj o;
  int rc = type_obj(me, fn, t, false, &o);
  return rc != MPI_SUCCESS ? rc : attr_delete(me, fn, &o, keyval);
}

static int impl_Type_set_name(skn_rank *me, const char *fn, MPI_Datatype t, const skn_dtype *d, const char *name) {
  attr_obj o;
  int rc = type_obj(me, fn, t, true, &o);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me);
  skn_type_meta *m = type_meta(me, t, false);
  snprintf(m->name, sizeof m->name, "%s", name);
  skn_rank_unlock(me);
  return MPI_SUCCESS;
}

static int impl_Type_get_name(skn_rank *me, const char *fn, MPI_Datatype t, char *name, int *resultlen) {
  const skn_dtype *d = skn_api_dtype_any(me, t);
  if (!d && (t == MPI_LB || t == MPI_UB)) { /* markers, not types, but named as MPICH names them */
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", t == MPI_LB ? "MPI_LB" : "MPI_UB");
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
  }
  if (!d) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_TYPE, fn, "datatype=%#x is not a valid datatype", (unsigned)t);
  skn_rank_lock(me);
  skn_type_meta *m = type_meta(me, t, false);
  /* a name set by this rank, else the predefined type's own, else "" */
  const char *src = m && m->name[0] ? m->name : (d->flags & SKN_DT_DERIVED) ? "" : d->name;
  snprintf(name, MPI_MAX_OBJECT_NAME, "%s", src ? src : "");
  skn_rank_unlock(me);
  *resultlen = (int)strlen(name);
  return MPI_SUCCESS;
}

int skn_type_attrs_dup(skn_rank *me, MPI_Datatype oldtype, MPI_Datatype newtype) {
  skn_rank_lock(me);
  skn_type_meta *from = type_meta(me, oldtype, false);
  skn_attr *list = from ? from->attrs : NULL;
  skn_type_meta *to = list ? type_meta(me, newtype, true) : NULL;
  skn_rank_unlock(me);
  if (!list) return MPI_SUCCESS;
  if (!to) return MPI_ERR_NO_MEM;
  return skn_attr_copy_all(me, oldtype, list, &to->attrs);
}

int skn_type_attrs_free(skn_rank *me, MPI_Datatype t) {
  skn_rank_lock(me);
  skn_type_meta *m = type_meta(me, t, false);
  skn_rank_unlock(me);
  if (!m) return MPI_SUCCESS;
  int rc = skn_attr_delete_all(me, t, &m->attrs);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me); /* the handle may be reused: it starts without a name */
  skn_api_of(me)->tmeta[(unsigned)t & 0xffffffu] = NULL;
  skn_rank_unlock(me);
  free(m);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ window attributes
 * Windows are never duplicated, so copy callbacks are kept but never called. Errors go
 * to the window's error handler through skn_api_win_error. */

static int impl_Win_create_keyval(skn_rank *me, const char *fn, MPI_Win_copy_attr_function *copy_fn,
                                  MPI_Win_delete_attr_function *delete_fn, int *keyval, void *extra_state) {
  return keyval_create(me, fn, SKN_KEYVAL_WIN, (MPI_Comm_copy_attr_function *)copy_fn,
                       (MPI_Comm_delete_attr_function *)delete_fn, keyval, extra_state);
}

static int impl_Win_free_keyval(skn_rank *me, const char *fn, int *keyval) {
  return keyval_free(me, fn, SKN_KEYVAL_WIN, keyval);
}

/* attr_obj's errcomm is a communicator; window calls check the keyval first so that a
 * bad one reports on the window. */
static int win_obj(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, int keyval, bool predefined_ok,
                   attr_obj *o) {
  if (predefined_ok && keyval >= MPI_WIN_BASE && keyval <= MPI_WIN_MODEL) {
    *o = (attr_obj){SKN_KEYVAL_WIN, win, NULL, SKN_API_NOOBJ};
    return MPI_SUCCESS;
  }
  skn_rank_lock(me);
  skn_keyval *k = kv_get(me, keyval);
  bool ok = k && !k->freed && k->kind == SKN_KEYVAL_WIN;
  skn_rank_unlock(me);
  if (!ok) return skn_api_win_error(me, win, MPI_ERR_KEYVAL, fn, "keyval=%d is not a valid window keyval", keyval);
  *o = (attr_obj){SKN_KEYVAL_WIN, win, &v->attrs, SKN_API_NOOBJ};
  return MPI_SUCCESS;
}

static int impl_Win_set_attr(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, int keyval,
                             void *attribute_val) {
  attr_obj o;
  int rc = win_obj(me, fn, win, v, keyval, false, &o);
  return rc != MPI_SUCCESS ? rc : attr_set(me, fn, &o, keyval, attribute_val);
}

static int impl_Win_get_attr(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, int keyval, void *attribute_val,
                             int *flag) {
  attr_obj o;
  int rc = win_obj(me, fn, win, v, keyval, true, &o);
  if (rc != MPI_SUCCESS) return rc;
  if (!attribute_val) return skn_api_win_error(me, win, MPI_ERR_ARG, fn, "attribute_val=NULL");
  if (!o.list) { /* predefined: MPI_WIN_BASE is the base itself, the others point to values */
    void *p = keyval == MPI_WIN_BASE ? v->base
              : keyval == MPI_WIN_SIZE ? (void *)&v->size_attr
              : keyval == MPI_WIN_DISP_UNIT ? (void *)&v->disp_unit
              : keyval == MPI_WIN_CREATE_FLAVOR ? (void *)&v->flavor
                                                : (void *)&v->model;
    *(void **)attribute_val = p;
    *flag = 1;
    return MPI_SUCCESS;
  }
  return attr_get(me, fn, &o, keyval, attribute_val, flag);
}

static int impl_Win_delete_attr(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, int keyval) {
  attr_obj o;
  int rc = win_obj(me, fn, win, v, keyval, false, &o);
  return rc != MPI_SUCCESS ? rc : attr_delete(me, fn, &o, keyval);
}

/* ------------------------------------------------------------------ MPI-1 names (deprecated) */

static int impl_Keyval_create(skn_rank *me, const char *fn, MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn,
                              int *keyval, void *extra_state) {
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

static int impl_Keyval_free(skn_rank *me, const char *fn, int *keyval) { return PMPI_Comm_free_keyval(keyval); }

static int impl_Attr_put(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int keyval,
                         void *attribute_val) {
  return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}

static int impl_Attr_get(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int keyval,
                         void *attribute_val, int *flag) {
  return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

static int impl_Attr_delete(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int keyval) {
  return PMPI_Comm_delete_attr(comm, keyval);
}

#include "entries_attr.h"
