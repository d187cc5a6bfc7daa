/* Fortran bindings that are not a plain by-reference call (the rest is generated into
 * fortran_glue.c by gen_fortran.py): the sentinel COMMON blocks, CHARACTER conversion,
 * attribute values (Fortran's are INTEGER(KIND=MPI_ADDRESS_KIND) values, or INTEGER for
 * the MPI-1 calls, where C stores pointers) and keyval callbacks written in Fortran (called
 * through trampolines with Fortran's argument conventions). */
#include <ISO_Fortran_binding.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "fortran_glue.h"

/* ---- sentinels: storage of mpif.h's COMMON blocks (the program's .comm copies, if any,
 * take precedence, and the glue reaches them through the GOT either way) */
SKN_FEXPORT MPI_Fint skn_mpi_bottom_, skn_mpi_in_place_;
/* skn_mpi_status(es)_ignore_ are defined in api/request.c: C's MPI_F_STATUS(ES)_IGNORE */
SKN_FEXPORT MPI_Fint skn_mpi_errcodes_ignore_[1], skn_mpi_unweighted_[1], skn_mpi_weights_empty_[1];
SKN_FEXPORT char skn_mpi_argv_null_[1], skn_mpi_argvs_null_[1];

/* ---- CHARACTER */
char *skn_fstr_in(const char *s, size_t len) {
  while (len > 0 && s[len - 1] == ' ') len--;
  char *c = malloc(len + 1);
  if (!c) skn_fatal("Fortran binding: out of memory for a string argument");
  memcpy(c, s, len);
  c[len] = 0;
  return c;
}

char *skn_fstr_in_trim(const char *s, size_t len) {
  while (len > 0 && *s == ' ') s++, len--;
  return skn_fstr_in(s, len);
}

char *skn_fstr_buf(size_t len, long max) {
  /* C writes up to max characters (functions.txt's max=) whatever the Fortran length; a
   * negative length argument is C's to reject */
  size_t m = max > 0 ? (size_t)max : 0;
  size_t n = (len > m ? len : m) + 1;
  char *c = calloc(1, n);
  if (!c) skn_fatal("Fortran binding: out of memory for a string argument");
  return c;
}

void skn_fstr_out(char *dst, size_t len, char *buf) {
  size_t n = strnlen(buf, len);
  memcpy(dst, buf, n);
  memset(dst + n, ' ', len - n);
  free(buf);
}

/* ---- MPI-1's INTEGER displacements */
MPI_Aint *skn_faints(const MPI_Fint *a, int n) {
  if (n <= 0) return NULL;
  MPI_Aint *w = malloc((size_t)n * sizeof *w);
  if (!w) skn_fatal("Fortran binding: out of memory for an array of displacements");
  for (int i = 0; i < n; i++) w[i] = a[i];
  return w;
}

/* ---- attributes */
static int is_predefined_key(int keyval) { return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE; }

/* C's predefined attributes point at ints; Fortran receives the value itself */
static MPI_Aint attr_out(int keyval, void *v) { return is_predefined_key(keyval) ? (MPI_Aint) * (int *)v : (MPI_Aint)v; }

/* the window's: MPI_WIN_BASE is the base itself, MPI_WIN_SIZE points to an MPI_Aint, the
 * others to ints */
static MPI_Aint win_attr_out(int keyval, void *v) {
  if (keyval == MPI_WIN_SIZE) return *(MPI_Aint *)v;
  if (keyval > MPI_WIN_SIZE && keyval <= MPI_WIN_MODEL) return *(int *)v;
  return (MPI_Aint)v;
}

/* MPI-3.1 17.2.7: a value set from Fortran reaches C as a pointer to its storage and
 * Fortran as itself; set from C, Fortran gets the pointer as an address. The C calls do the
 * work (interposers see them); skn_api_attr_fortran marks and tells which it is. */
#define fattr_out(obj, keyval, v) (skn_api_attr_fortran(obj, keyval, false) ? *(MPI_Aint *)(v) : attr_out(keyval, v))

#define GET_ATTR(fname, cfn, obj_t)                                                                        \
  SKN_FEXPORT void fname(const obj_t *obj, const MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierr) { \
    void *v = NULL;                                                                                        \
    int f = 0;                                                                                             \
    *ierr = cfn(*obj, *keyval, &v, &f);                                                                    \
    *flag = f != 0;                                                                                        \
    if (*ierr == MPI_SUCCESS && f) *val = fattr_out(*obj, *keyval, v);                                     \
  }
GET_ATTR(mpi_comm_get_attr_, MPI_Comm_get_attr, MPI_Comm)
GET_ATTR(pmpi_comm_get_attr_, PMPI_Comm_get_attr, MPI_Comm)
GET_ATTR(mpi_type_get_attr_, MPI_Type_get_attr, MPI_Datatype)
GET_ATTR(pmpi_type_get_attr_, PMPI_Type_get_attr, MPI_Datatype)
#define attr_out win_attr_out
GET_ATTR(mpi_win_get_attr_, MPI_Win_get_attr, MPI_Win)
GET_ATTR(pmpi_win_get_attr_, PMPI_Win_get_attr, MPI_Win)
#undef attr_out

#define SET_ATTR(fname, cfn, obj_t)                                                                 \
  SKN_FEXPORT void fname(const obj_t *obj, const MPI_Fint *keyval, const MPI_Aint *val, MPI_Fint *ierr) { \
    *ierr = cfn(*obj, *keyval, (void *)*val);                                                       \
    if (*ierr == MPI_SUCCESS) skn_api_attr_fortran(*obj, *keyval, true);                            \
  }
SET_ATTR(mpi_comm_set_attr_, MPI_Comm_set_attr, MPI_Comm)
SET_ATTR(pmpi_comm_set_attr_, PMPI_Comm_set_attr, MPI_Comm)
SET_ATTR(mpi_type_set_attr_, MPI_Type_set_attr, MPI_Datatype)
SET_ATTR(pmpi_type_set_attr_, PMPI_Type_set_attr, MPI_Datatype)
SET_ATTR(mpi_win_set_attr_, MPI_Win_set_attr, MPI_Win)
SET_ATTR(pmpi_win_set_attr_, PMPI_Win_set_attr, MPI_Win)

/* mpi_f08's MPI_X_get_attr_f08/MPI_X_set_attr_f08 (BIND(C), MPI-3.1 17.1.5 link names): the
 * object, keyval and a value of INTENT(IN) by value, ierror NULL when absent */
#define F08_GET_ATTR(fname, cfn, obj_t)                                                                  \
  SKN_FEXPORT void fname(obj_t obj, MPI_Fint keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror) { \
    void *v = NULL;                                                                                      \
    int f = 0, rc = cfn(obj, keyval, &v, &f);                                                            \
    *flag = f != 0;                                                                                      \
    if (rc == MPI_SUCCESS && f) *val = fattr_out(obj, keyval, v);                                        \
    if (ierror) *ierror = rc;                                                                            \
  }
F08_GET_ATTR(MPI_Comm_get_attr_f08, MPI_Comm_get_attr, MPI_Comm)
F08_GET_ATTR(PMPI_Comm_get_attr_f08, PMPI_Comm_get_attr, MPI_Comm)
F08_GET_ATTR(MPI_Type_get_attr_f08, MPI_Type_get_attr, MPI_Datatype)
F08_GET_ATTR(PMPI_Type_get_attr_f08, PMPI_Type_get_attr, MPI_Datatype)
#define attr_out win_attr_out
F08_GET_ATTR(MPI_Win_get_attr_f08, MPI_Win_get_attr, MPI_Win)
F08_GET_ATTR(PMPI_Win_get_attr_f08, PMPI_Win_get_attr, MPI_Win)
#undef attr_out

#define F08_SET_ATTR(fname, cfn, obj_t)                                                   \
  SKN_FEXPORT void fname(obj_t obj, MPI_Fint keyval, MPI_Aint val, MPI_Fint *ierror) { \
    int rc = cfn(obj, keyval, (void *)val);                                              \
    if (rc == MPI_SUCCESS) skn_api_attr_fortran(obj, keyval, true);                      \
    if (ierror) *ierror = rc;                                                            \
  }
F08_SET_ATTR(MPI_Comm_set_attr_f08, MPI_Comm_set_attr, MPI_Comm)
F08_SET_ATTR(PMPI_Comm_set_attr_f08, PMPI_Comm_set_attr, MPI_Comm)
F08_SET_ATTR(MPI_Type_set_attr_f08, MPI_Type_set_attr, MPI_Datatype)
F08_SET_ATTR(PMPI_Type_set_attr_f08, PMPI_Type_set_attr, MPI_Datatype)
F08_SET_ATTR(MPI_Win_set_attr_f08, MPI_Win_set_attr, MPI_Win)
F08_SET_ATTR(PMPI_Win_set_attr_f08, PMPI_Win_set_attr, MPI_Win)

/* MPI-1: INTEGER attribute values */
#define ATTR_GET1(fname, cfn)                                                                                 \
  SKN_FEXPORT void fname(const MPI_Comm *comm, const MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag, MPI_Fint *ierr) { \
    void *v = NULL;                                                                                           \
    int f = 0;                                                                                                \
    *ierr = cfn(*comm, *keyval, &v, &f);                                                                      \
    *flag = f != 0;                                                                                           \
    if (*ierr == MPI_SUCCESS && f) *val = (MPI_Fint)fattr_out(*comm, *keyval, v);                             \
  }
ATTR_GET1(mpi_attr_get_, MPI_Attr_get)
ATTR_GET1(pmpi_attr_get_, PMPI_Attr_get)
#define ATTR_PUT1(fname, cfn)                                                                                 \
  SKN_FEXPORT void fname(const MPI_Comm *comm, const MPI_Fint *keyval, const MPI_Fint *val, MPI_Fint *ierr) { \
    *ierr = cfn(*comm, *keyval, (void *)(MPI_Aint)*val);                                                      \
    if (*ierr == MPI_SUCCESS) skn_api_attr_fortran(*comm, *keyval, true);                                     \
  }
ATTR_PUT1(mpi_attr_put_, MPI_Attr_put)
ATTR_PUT1(pmpi_attr_put_, PMPI_Attr_put)

/* ---- keyvals with callbacks written in Fortran. The C keyval gets trampolines and, as its
 * extra state, a record of the Fortran procedures and the Fortran extra state, which the
 * keyval owns (freed when it ends: after MPI_*_free_keyval and its last attribute). */
typedef void fcopy_fn(const MPI_Fint *old, const MPI_Fint *keyval, const MPI_Aint *extra, const MPI_Aint *in,
                      MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierr);
typedef void fdelete_fn(const MPI_Fint *obj, const MPI_Fint *keyval, const MPI_Aint *val, const MPI_Aint *extra,
                        MPI_Fint *ierr);
typedef void fcopy1_fn(const MPI_Fint *old, const MPI_Fint *keyval, const MPI_Fint *extra, const MPI_Fint *in,
                       MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierr);
typedef void fdelete1_fn(const MPI_Fint *obj, const MPI_Fint *keyval, const MPI_Fint *val, const MPI_Fint *extra,
                         MPI_Fint *ierr);
typedef struct fkeyval {
  void *copy, *del; /* Fortran procedures (the predefined ones never reach here) */
  MPI_Aint extra;
  int mpi1; /* MPI_KEYVAL_CREATE: INTEGER values */
} fkeyval;

static int tramp_copy(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag) {
  fkeyval *k = extra;
  MPI_Fint fold = old, fkey = keyval, fflag = 0, ierr = MPI_SUCCESS;
  if (k->mpi1) {
    MPI_Fint fextra = (MPI_Fint)k->extra, fin = (MPI_Fint)(MPI_Aint)in, fout = 0;
    ((fcopy1_fn *)k->copy)(&fold, &fkey, &fextra, &fin, &fout, &fflag, &ierr);
    *(void **)out = (void *)(MPI_Aint)fout;
  } else {
    MPI_Aint ain = (MPI_Aint)in, aout = 0;
    ((fcopy_fn *)k->copy)(&fold, &fkey, &k->extra, &ain, &aout, &fflag, &ierr);
    *(void **)out = (void *)aout;
  }
  *flag = fflag != 0;
  return ierr;
}

static int tramp_delete(MPI_Comm obj, int keyval, void *val, void *extra) {
  fkeyval *k = extra;
  MPI_Fint fobj = obj, fkey = keyval, ierr = MPI_SUCCESS;
  if (k->mpi1) {
    MPI_Fint fval = (MPI_Fint)(MPI_Aint)val, fextra = (MPI_Fint)k->extra;
    ((fdelete1_fn *)k->del)(&fobj, &fkey, &fval, &fextra, &ierr);
  } else {
    MPI_Aint aval = (MPI_Aint)val;
    ((fdelete_fn *)k->del)(&fobj, &fkey, &aval, &k->extra, &ierr);
  }
  return ierr;
}

/* Fortran's predefined callbacks (mpif.h declares them EXTERNAL): recognized by address
 * and replaced by C's, so they cost no trampoline. A program may also call them itself
 * (with Fortran's arguments, the values by reference): they do what they say. */
#define FNULL_COPY(fname, val_t)                                                                        \
  SKN_FEXPORT void fname(const MPI_Fint *old, const MPI_Fint *keyval, const val_t *extra, const val_t *in, \
                         val_t *out, MPI_Fint *flag, MPI_Fint *ierr) {                                 \
    *flag = 0;                                                                                          \
    *ierr = MPI_SUCCESS;                                                                                \
  }
#define FDUP(fname, val_t)                                                                              \
  SKN_FEXPORT void fname(const MPI_Fint *old, const MPI_Fint *keyval, const val_t *extra, const val_t *in, \
                         val_t *out, MPI_Fint *flag, MPI_Fint *ierr) {                                 \
    *out = *in;                                                                                         \
    *flag = 1; /* .TRUE. */                                                                             \
    *ierr = MPI_SUCCESS;                                                                                \
  }
#define FNULL_DELETE(fname, val_t)                                                                        \
  SKN_FEXPORT void fname(const MPI_Fint *obj, const MPI_Fint *keyval, const val_t *val, const val_t *extra, \
                         MPI_Fint *ierr) {                                                               \
    *ierr = MPI_SUCCESS;                                                                                  \
  }
FNULL_COPY(mpi_comm_null_copy_fn_, MPI_Aint)
FDUP(mpi_comm_dup_fn_, MPI_Aint)
FNULL_DELETE(mpi_comm_null_delete_fn_, MPI_Aint)
FNULL_COPY(mpi_type_null_copy_fn_, MPI_Aint)
FDUP(mpi_type_dup_fn_, MPI_Aint)
FNULL_DELETE(mpi_type_null_delete_fn_, MPI_Aint)
FNULL_COPY(mpi_null_copy_fn_, MPI_Fint) /* MPI-1's: INTEGER values */
FDUP(mpi_dup_fn_, MPI_Fint)
FNULL_DELETE(mpi_null_delete_fn_, MPI_Fint)
FNULL_COPY(mpi_win_null_copy_fn_, MPI_Aint)
FDUP(mpi_win_dup_fn_, MPI_Aint)
FNULL_DELETE(mpi_win_null_delete_fn_, MPI_Aint)

static MPI_Comm_copy_attr_function *pick_copy(void *f) {
  if (f == (void *)mpi_comm_null_copy_fn_ || f == (void *)mpi_type_null_copy_fn_ || f == (void *)mpi_null_copy_fn_ ||
      f == (void *)mpi_win_null_copy_fn_)
    return MPI_COMM_NULL_COPY_FN;
  if (f == (void *)mpi_comm_dup_fn_ || f == (void *)mpi_type_dup_fn_ || f == (void *)mpi_dup_fn_ ||
      f == (void *)mpi_win_dup_fn_)
    return MPI_COMM_DUP_FN;
  return NULL;
}
static MPI_Comm_delete_attr_function *pick_delete(void *f) {
  if (f == (void *)mpi_comm_null_delete_fn_ || f == (void *)mpi_type_null_delete_fn_ ||
      f == (void *)mpi_null_delete_fn_ || f == (void *)mpi_win_null_delete_fn_)
    return MPI_COMM_NULL_DELETE_FN;
  return NULL;
}

static int create_keyval(int type, void *copy, void *del, int *keyval, MPI_Aint extra, int mpi1, int prof) {
  MPI_Comm_copy_attr_function *c = pick_copy(copy);
  MPI_Comm_delete_attr_function *d = pick_delete(del);
  fkeyval *k = NULL;
  if (!c || !d) {
    k = malloc(sizeof *k);
    if (!k) return MPI_ERR_NO_MEM;
    *k = (fkeyval){copy, del, extra, mpi1};
    if (!c) c = tramp_copy;
    if (!d) d = tramp_delete;
  }
  void *state = k ? (void *)k : (void *)extra;
  int rc;
  /* the datatype and window callbacks have the same shapes with their handle (an int too) */
  if (type == 2)
    rc = (prof ? PMPI_Win_create_keyval : MPI_Win_create_keyval)((MPI_Win_copy_attr_function *)c,
                                                                  (MPI_Win_delete_attr_function *)d, keyval, state);
  else if (type)
    rc = (prof ? PMPI_Type_create_keyval : MPI_Type_create_keyval)((MPI_Type_copy_attr_function *)c,
                                                                    (MPI_Type_delete_attr_function *)d, keyval, state);
  else if (mpi1)
    rc = (prof ? PMPI_Keyval_create : MPI_Keyval_create)(c, d, keyval, state);
  else
    rc = (prof ? PMPI_Comm_create_keyval : MPI_Comm_create_keyval)(c, d, keyval, state);
  if (k && rc == MPI_SUCCESS) skn_api_keyval_own_extra(*keyval, free); /* freed when the keyval ends */
  else free(k);
  return rc;
}

#define CREATE_KEYVAL(fname, type, prof)                                                                  \
  SKN_FEXPORT void fname(void *copy, void *del, MPI_Fint *keyval, const MPI_Aint *extra, MPI_Fint *ierr) { \
    *ierr = create_keyval(type, copy, del, keyval, *extra, 0, prof);                                      \
  }
CREATE_KEYVAL(mpi_comm_create_keyval_, 0, 0)
CREATE_KEYVAL(pmpi_comm_create_keyval_, 0, 1)
CREATE_KEYVAL(mpi_type_create_keyval_, 1, 0)
CREATE_KEYVAL(pmpi_type_create_keyval_, 1, 1)
CREATE_KEYVAL(mpi_win_create_keyval_, 2, 0)
CREATE_KEYVAL(pmpi_win_create_keyval_, 2, 1)
/* mpi_f08's (BIND(C)): the callbacks arrive as C_FUNLOCs of the Fortran procedures, which
 * take every argument by reference as mpi's do (their handles are one-INTEGER types) */
#define F08_CREATE_KEYVAL(fname, type, prof)                                                             \
  SKN_FEXPORT void fname(void *copy, void *del, MPI_Fint *keyval, MPI_Aint extra, MPI_Fint *ierror) { \
    int rc = create_keyval(type, copy, del, keyval, extra, 0, prof);                                    \
    if (ierror) *ierror = rc;                                                                           \
  }
F08_CREATE_KEYVAL(MPI_Comm_create_keyval_f08, 0, 0)
F08_CREATE_KEYVAL(PMPI_Comm_create_keyval_f08, 0, 1)
F08_CREATE_KEYVAL(MPI_Type_create_keyval_f08, 1, 0)
F08_CREATE_KEYVAL(PMPI_Type_create_keyval_f08, 1, 1)
F08_CREATE_KEYVAL(MPI_Win_create_keyval_f08, 2, 0)
F08_CREATE_KEYVAL(PMPI_Win_create_keyval_f08, 2, 1)
SKN_FEXPORT void mpi_keyval_create_(void *copy, void *del, MPI_Fint *keyval, const MPI_Fint *extra, MPI_Fint *ierr) {
  *ierr = create_keyval(0, copy, del, keyval, *extra, 1, 0);
}
SKN_FEXPORT void pmpi_keyval_create_(void *copy, void *del, MPI_Fint *keyval, const MPI_Fint *extra, MPI_Fint *ierr) {
  *ierr = create_keyval(0, copy, del, keyval, *extra, 1, 1);
}

/* ---- MPI_PCONTROL(LEVEL): no IERROR in Fortran (MPI-3.1 14.2.4) */
SKN_FEXPORT void mpi_pcontrol_(const MPI_Fint *level) { MPI_Pcontrol(*level); }
SKN_FEXPORT void pmpi_pcontrol_(const MPI_Fint *level) { PMPI_Pcontrol(*level); }
/* mpi_f08's (BIND(C), LEVEL by value) */
SKN_FEXPORT void MPI_Pcontrol_f08(MPI_Fint level) { MPI_Pcontrol(level); }
SKN_FEXPORT void PMPI_Pcontrol_f08(MPI_Fint level) { PMPI_Pcontrol(level); }

/* ---- generalized requests with callbacks written in Fortran: C's callbacks are
 * trampolines, C's extra state a record of the Fortran procedures and the Fortran extra
 * state, freed after the free callback (MPI-3.1 12.2: it runs once, at completion). */
typedef void fgquery_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierr);
typedef void fgfree_fn(MPI_Aint *extra, MPI_Fint *ierr);
typedef void fgcancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierr);
typedef struct fgreq {
  fgquery_fn *query;
  fgfree_fn *free;
  fgcancel_fn *cancel;
  MPI_Aint extra;
} fgreq;

static int greq_query(void *state, MPI_Status *st) {
  fgreq *g = state;
  MPI_Fint ierr = MPI_SUCCESS;
  g->query(&g->extra, (MPI_Fint *)st, &ierr); /* Fortran's status is C's, INTEGER by INTEGER */
  return ierr;
}
static int greq_free(void *state) {
  fgreq *g = state;
  MPI_Fint ierr = MPI_SUCCESS;
  g->free(&g->extra, &ierr);
  free(g);
  return ierr;
}
static int greq_cancel(void *state, int complete) {
  fgreq *g = state;
  MPI_Fint c = complete != 0, ierr = MPI_SUCCESS;
  g->cancel(&g->extra, &c, &ierr);
  return ierr;
}

static int grequest_start(void *query, void *fr, void *cancel, MPI_Aint extra, MPI_Request *req, int prof) {
  fgreq *g = malloc(sizeof *g);
  if (!g) return MPI_ERR_NO_MEM;
  *g = (fgreq){(fgquery_fn *)query, (fgfree_fn *)fr, (fgcancel_fn *)cancel, extra};
  int rc = (prof ? PMPI_Grequest_start : MPI_Grequest_start)(greq_query, greq_free, greq_cancel, g, req);
  if (rc != MPI_SUCCESS) free(g);
  return rc;
}
SKN_FEXPORT void mpi_grequest_start_(void *q, void *f, void *c, const MPI_Aint *extra, MPI_Request *req, MPI_Fint *ierr) {
  *ierr = grequest_start(q, f, c, *extra, req, 0);
}
SKN_FEXPORT void pmpi_grequest_start_(void *q, void *f, void *c, const MPI_Aint *extra, MPI_Request *req, MPI_Fint *ierr) {
  *ierr = grequest_start(q, f, c, *extra, req, 1);
}

/* mpi_f08's (BIND(C)): the callbacks as C_FUNLOCs, the extra state by value */
SKN_FEXPORT void MPI_Grequest_start_f08(void *q, void *f, void *c, MPI_Aint extra, MPI_Request *req, MPI_Fint *ierror) {
  int rc = grequest_start(q, f, c, extra, req, 0);
  if (ierror) *ierror = rc;
}
SKN_FEXPORT void PMPI_Grequest_start_f08(void *q, void *f, void *c, MPI_Aint extra, MPI_Request *req, MPI_Fint *ierror) {
  int rc = grequest_start(q, f, c, extra, req, 1);
  if (ierror) *ierror = rc;
}

/* ---- data representations with conversion functions written in Fortran (MPI-3.1 13.5.3):
 * trampolines again, C's extra state a record of the procedures and the Fortran extra state
 * (kept for the life of the process, as C keeps the registration). The buffers reach Fortran
 * as addresses, which is both mpi's USERBUF(*) by reference and mpi_f08's TYPE(C_PTR), VALUE. */
typedef void fdconv_fn(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf, MPI_Offset *position,
                       MPI_Aint *extra, MPI_Fint *ierr);
typedef void fdextent_fn(MPI_Fint *datatype, MPI_Aint *extent, MPI_Aint *extra, MPI_Fint *ierr);
typedef struct fdatarep {
  fdconv_fn *rd, *wr;
  fdextent_fn *extent;
  MPI_Aint extra;
} fdatarep;

/* MPI_CONVERSION_FN_NULL of mpif.h, mpi and mpi_f08 (EXTERNAL): recognized by address */
SKN_FEXPORT void mpi_conversion_fn_null_(void) {}

static int drep_conv(fdconv_fn *fn, void *user, MPI_Datatype t, int count, void *file, MPI_Offset pos, fdatarep *d) {
  MPI_Fint ft = t, fcount = count, ierr = MPI_SUCCESS;
  fn(user, &ft, &fcount, file, &pos, &d->extra, &ierr);
  return ierr;
}
static int drep_read(void *user, MPI_Datatype t, int count, void *file, MPI_Offset pos, void *state) {
  return drep_conv(((fdatarep *)state)->rd, user, t, count, file, pos, state);
}
static int drep_write(void *user, MPI_Datatype t, int count, void *file, MPI_Offset pos, void *state) {
  return drep_conv(((fdatarep *)state)->wr, user, t, count, file, pos, state);
}
static int drep_extent(MPI_Datatype t, MPI_Aint *extent, void *state) {
  fdatarep *d = state;
  MPI_Fint ft = t, ierr = MPI_SUCCESS;
  d->extent(&ft, extent, &d->extra, &ierr);
  return ierr;
}

static int register_datarep(const char *name, void *rd, void *wr, void *extent, MPI_Aint extra, int prof) {
  fdatarep *d = malloc(sizeof *d);
  if (!d) return MPI_ERR_NO_MEM;
  *d = (fdatarep){rd == (void *)mpi_conversion_fn_null_ ? NULL : (fdconv_fn *)rd,
                  wr == (void *)mpi_conversion_fn_null_ ? NULL : (fdconv_fn *)wr, (fdextent_fn *)extent, extra};
  int rc = (prof ? PMPI_Register_datarep : MPI_Register_datarep)(name, d->rd ? drep_read : MPI_CONVERSION_FN_NULL,
                                                                 d->wr ? drep_write : MPI_CONVERSION_FN_NULL,
                                                                 extent ? drep_extent : NULL, d);
  if (rc != MPI_SUCCESS) free(d);
  return rc;
}
#define REGISTER_DATAREP(fname, prof)                                                                           \
  SKN_FEXPORT void fname(const char *name, void *rd, void *wr, void *extent, const MPI_Aint *extra, MPI_Fint *ierr, \
                         size_t name_len) {                                                                     \
    char *c = skn_fstr_in(name, name_len);                                                                      \
    *ierr = register_datarep(c, rd, wr, extent, *extra, prof);                                                  \
    free(c);                                                                                                    \
  }
REGISTER_DATAREP(mpi_register_datarep_, 0)
REGISTER_DATAREP(pmpi_register_datarep_, 1)
/* mpi_f08's (BIND(C)): the name as a descriptor, the procedures as C_FUNLOCs */
#define F08_REGISTER_DATAREP(fname, prof)                                                                  \
  SKN_FEXPORT void fname(CFI_cdesc_t *name, void *rd, void *wr, void *extent, MPI_Aint extra, MPI_Fint *ierror) { \
    char *c = skn_fstr_in(name->base_addr, name->elem_len);                                                \
    int rc = register_datarep(c, rd, wr, extent, extra, prof);                                             \
    free(c);                                                                                               \
    if (ierror) *ierror = rc;                                                                              \
  }
F08_REGISTER_DATAREP(MPI_Register_datarep_f08, 0)
F08_REGISTER_DATAREP(PMPI_Register_datarep_f08, 1)

/* ---- MPI_F_SYNC_REG(BUF) (MPI-3.1 17.1.8, Fortran only): does nothing, but as an external
 * procedure that receives BUF's address it makes the compiler store a register copy of BUF
 * before the call and reload it after */
SKN_FEXPORT void mpi_f_sync_reg_(void *buf) {}
SKN_FEXPORT void pmpi_f_sync_reg_(void *buf) {}
SKN_FEXPORT void MPI_F_sync_reg_f08(void *buf) {}
SKN_FEXPORT void PMPI_F_sync_reg_f08(void *buf) {}
