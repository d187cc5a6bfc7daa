/* Attribute caching on communicators. Keyvals are the calling rank's own (a per-rank
 * table; handle = SKN_KEYVAL_BASE + index), and so are attributes: they hang off the
 * rank's view of the communicator, so two ranks caching under the same keyval value on
 * MPI_COMM_WORLD never see each other's values. Callbacks run outside the rank lock
 * (they may call MPI). */
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

/* ------------------------------------------------------------------ predefined attributes
 * Immutable values shared by all ranks; Comm_get_attr hands out pointers to them. */

static const int predef_values[] = {
    [MPI_TAG_UB] = SKN_TAG_UB,        [MPI_HOST] = MPI_PROC_NULL, [MPI_IO] = MPI_ANY_SOURCE,
    [MPI_WTIME_IS_GLOBAL] = 1, /* one process, one clock */
    [MPI_APPNUM] = 0,
};

static bool is_predefined(int keyval) { return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE; }

/* Pointer to the value of a predefined attribute, or NULL if it has none. */
static void *predefined_value(int keyval) {
  switch (keyval) {
  case MPI_TAG_UB:
  case MPI_HOST:
  case MPI_IO:
  case MPI_WTIME_IS_GLOBAL:
  case MPI_APPNUM:
    return (void *)(uintptr_t)&predef_values[keyval];
  case MPI_UNIVERSE_SIZE:
    return &skn_job_g.size; /* set before any rank starts, never changed */
  default:
    return NULL; /* MPI_LASTUSEDCODE: no user error codes yet */
  }
}

/* ------------------------------------------------------------------ keyvals */

/* Caller holds the rank lock. NULL unless keyval names a live entry (freed or not). */
static skn_keyval *kv_get(skn_rank *me, int keyval) {
  if (keyval < SKN_KEYVAL_BASE || keyval - SKN_KEYVAL_BASE >= me->nkeyvals) return NULL;
  return me->keyvals[keyval - SKN_KEYVAL_BASE];
}

/* Caller holds the rank lock. */
static void kv_unref(skn_rank *me, int keyval) {
  skn_keyval *k = kv_get(me, keyval);
  if (k && --k->refs == 0) {
    me->keyvals[keyval - SKN_KEYVAL_BASE] = NULL;
    free(k);
  }
}

static int keyval_error(skn_rank *me, MPI_Comm comm, const char *fn, int keyval) {
  return skn_api_error(me, comm, MPI_ERR_KEYVAL, fn, "keyval=%d is not a valid communicator keyval%s", keyval,
                       is_predefined(keyval) ? " for this call (predefined)" : "");
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn,
                            int *keyval, void *extra_state) {
  static const char fn[] = "MPI_Comm_create_keyval";
  skn_rank *me = skn_api_self(fn);
  if (!keyval) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "comm_keyval=NULL");
  skn_keyval *k = malloc(sizeof *k);
  if (!k) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
  *k = (skn_keyval){SKN_KEYVAL_COMM, copy_fn, delete_fn, extra_state, 1, false};
  skn_rank_lock(me);
  int idx;
  SKN_TABLE_SLOT(me->keyvals, me->nkeyvals, 0, idx);
  if (idx >= 0) me->keyvals[idx] = k;
  skn_rank_unlock(me);
  if (idx < 0) {
    free(k);
    return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
  }
  *keyval = SKN_KEYVAL_BASE + idx;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_create_keyval);

int PMPI_Comm_free_keyval(int *keyval) {
  static const char fn[] = "MPI_Comm_free_keyval";
  skn_rank *me = skn_api_self(fn);
  if (!keyval) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "comm_keyval=NULL");
  skn_rank_lock(me);
  skn_keyval *k = kv_get(me, *keyval);
  bool ok = k && !k->freed && k->kind == SKN_KEYVAL_COMM;
  if (ok) {
    k->freed = true; /* attributes still using it keep it alive */
    kv_unref(me, *keyval);
  }
  skn_rank_unlock(me);
  if (!ok) return keyval_error(me, MPI_COMM_WORLD, fn, *keyval);
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_free_keyval);

/* ------------------------------------------------------------------ attributes */

static skn_attr *find(skn_comm_view *v, int keyval) {
  for (skn_attr *a = v->attrs; a; a = a->next)
    if (a->keyval == keyval) return a;
  return NULL;
}

/* Checks comm and that keyval is a live user keyval; fills *v. */
static int check(skn_rank *me, const char *fn, MPI_Comm comm, int keyval, skn_comm_view **v) {
  *v = skn_api_comm(me, comm);
  if (!*v) return skn_api_error(me, comm, MPI_ERR_COMM, fn, "comm=%#x is not a valid communicator", (unsigned)comm);
  skn_rank_lock(me);
  skn_keyval *k = kv_get(me, keyval);
  bool ok = k && !k->freed && k->kind == SKN_KEYVAL_COMM;
  skn_rank_unlock(me);
  return ok ? MPI_SUCCESS : keyval_error(me, comm, fn, keyval);
}

/* Runs the delete callback of (keyval, val) on comm. */
static int run_delete(skn_rank *me, MPI_Comm comm, int keyval, void *val) {
  skn_rank_lock(me);
  skn_keyval *k = kv_get(me, keyval);
  MPI_Comm_delete_attr_function *del = k ? k->del : NULL;
  void *extra = k ? k->extra : NULL;
  skn_rank_unlock(me);
  return del ? del(comm, keyval, val, extra) : MPI_SUCCESS;
}

/* Unlinks and frees the attribute of keyval on v, if any (no callback). */
static void unlink_attr(skn_rank *me, skn_comm_view *v, int keyval) {
  skn_rank_lock(me);
  for (skn_attr **p = &v->attrs; *p; p = &(*p)->next)
    if ((*p)->keyval == keyval) {
      skn_attr *a = *p;
      *p = a->next;
      free(a);
      kv_unref(me, keyval);
      break;
    }
  skn_rank_unlock(me);
}

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val) {
  static const char fn[] = "MPI_Comm_set_attr";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v;
  int rc = check(me, fn, comm, keyval, &v);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me);
  skn_attr *a = find(v, keyval);
  void *old = a ? a->val : NULL;
  skn_rank_unlock(me);
  if (a) { /* replacing: the old value is deleted first */
    rc = run_delete(me, comm, keyval, old);
    if (rc != MPI_SUCCESS)
      return skn_api_error(me, comm, skn_attr_errclass(rc), fn, "the delete callback of keyval %d returned %d",
                           keyval, rc);
  }
  skn_attr *fresh = malloc(sizeof *fresh);
  skn_rank_lock(me);
  if ((a = find(v, keyval))) { /* (the callback may have removed it) */
    a->val = attribute_val;
    free(fresh);
    fresh = a;
  } else if (fresh) {
    *fresh = (skn_attr){v->attrs, keyval, attribute_val};
    v->attrs = fresh;
    kv_get(me, keyval)->refs++;
  }
  skn_rank_unlock(me);
  if (!fresh) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_set_attr);

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag) {
  static const char fn[] = "MPI_Comm_get_attr";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return skn_api_error(me, comm, MPI_ERR_COMM, fn, "comm=%#x is not a valid communicator", (unsigned)comm);
  if (!attribute_val || !flag) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "attribute_val or flag NULL");
  if (is_predefined(keyval)) {
    void *p = predefined_value(keyval);
    *flag = p != NULL;
    if (p) *(void **)attribute_val = p;
    return MPI_SUCCESS;
  }
  int rc = check(me, fn, comm, keyval, &v);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me);
  skn_attr *a = find(v, keyval);
  *flag = a != NULL;
  if (a) *(void **)attribute_val = a->val;
  skn_rank_unlock(me);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_get_attr);

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval) {
  static const char fn[] = "MPI_Comm_delete_attr";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v;
  int rc = check(me, fn, comm, keyval, &v);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me);
  skn_attr *a = find(v, keyval);
  void *val = a ? a->val : NULL;
  skn_rank_unlock(me);
  if (!a) return MPI_SUCCESS; /* nothing cached: nothing to delete */
  rc = run_delete(me, comm, keyval, val);
  if (rc != MPI_SUCCESS) /* the attribute stays */
    return skn_api_error(me, comm, skn_attr_errclass(rc), fn, "the delete callback of keyval %d returned %d", keyval,
                         rc);
  unlink_attr(me, v, keyval);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_delete_attr);

/* ------------------------------------------------------------------ dup and free */

int skn_attr_copy_all(skn_rank *me, MPI_Comm oldcomm, skn_comm_view *from, skn_comm_view *to) {
  /* Snapshot the list: callbacks may change it. */
  skn_rank_lock(me);
  int n = 0;
  for (skn_attr *a = from->attrs; a; a = a->next) n++;
  skn_attr *snap = malloc(sizeof *snap * (size_t)(n ? n : 1));
  if (snap) {
    n = 0;
    for (skn_attr *a = from->attrs; a; a = a->next) snap[n++] = *a;
  }
  skn_rank_unlock(me);
  if (!snap) return MPI_ERR_NO_MEM;
  skn_attr **tail = &to->attrs;
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
    rc = copy(oldcomm, snap[i].keyval, extra, snap[i].val, &out, &flag);
    if (rc != MPI_SUCCESS || !flag) continue;
    skn_attr *a = malloc(sizeof *a);
    if (!a) {
      rc = MPI_ERR_NO_MEM;
      break;
    }
    *a = (skn_attr){NULL, snap[i].keyval, out};
    skn_rank_lock(me);
    *tail = a;
    tail = &a->next;
    kv_get(me, a->keyval)->refs++;
    skn_rank_unlock(me);
  }
  free(snap);
  return rc;
}

int skn_attr_delete_all(skn_rank *me, MPI_Comm comm, skn_comm_view *v) {
  for (;;) {
    skn_rank_lock(me);
    skn_attr *a = v->attrs;
    int keyval = a ? a->keyval : 0;
    void *val = a ? a->val : NULL;
    skn_rank_unlock(me);
    if (!a) return MPI_SUCCESS;
    int rc = run_delete(me, comm, keyval, val);
    if (rc != MPI_SUCCESS) return rc;
    unlink_attr(me, v, keyval);
  }
}

/* ------------------------------------------------------------------ MPI-1 names (deprecated) */

int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state) {
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}
SKN_WEAK_ALIAS(Keyval_create);

int PMPI_Keyval_free(int *keyval) { return PMPI_Comm_free_keyval(keyval); }
SKN_WEAK_ALIAS(Keyval_free);

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val) {
  return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}
SKN_WEAK_ALIAS(Attr_put);

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag) {
  return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
SKN_WEAK_ALIAS(Attr_get);

int PMPI_Attr_delete(MPI_Comm comm, int keyval) { return PMPI_Comm_delete_attr(comm, keyval); }
SKN_WEAK_ALIAS(Attr_delete);
