/* Groups, topologies, attribute keys and info objects (api/group.c, topo.c, attr.c,
 * info.c), and what those files and api/comm.c share.
 *
 * Ownership, following the design's per-rank views:
 *  - groups, keyvals and info objects are the calling rank's own: per-rank tables in
 *    skn_api_rank (groups/ngroups, keyvals/nkeyvals, infos/ninfos), mutated under the rank
 *    lock, never touched by another rank;
 *  - cached attributes hang off the MPI state of the rank's own communicator view
 *    (skn_api_comm_state.attrs, api.h);
 *  - a topology is shared by the members of its communicator (skn_comm.topo) and
 *    immutable once created; it counts the views that use it and the last
 *    MPI_Comm_free releases it. */
#ifndef SKN_API_OBJECTS_H
#define SKN_API_OBJECTS_H

#include <stdlib.h>

#include "api.h"

/* ---------------------------------------------------------------- per-rank tables
 * A table of pointers indexed by handle, grown in powers of two (from 8); `*n` is the
 * high-water mark. Finds a free (NULL) slot at index >= first or appends one; sets
 * idx to it, or to -1 when out of memory. The caller holds the rank lock. */
#define SKN_TABLE_SLOT(tab, n, first, idx)                                          \
  do {                                                                              \
    (idx) = -1;                                                                     \
    for (int skn_i_ = (first); skn_i_ < (n); skn_i_++)                              \
      if (!(tab)[skn_i_]) {                                                         \
        (idx) = skn_i_;                                                             \
        break;                                                                      \
      }                                                                             \
    if ((idx) < 0) {                                                                \
      if ((n) == 0 || ((n) >= 8 && ((n) & ((n) - 1)) == 0)) {                       \
        size_t skn_cap_ = (n) == 0 ? 8 : (size_t)(n) * 2;                            \
        void *skn_p_ = realloc((tab), sizeof *(tab) * skn_cap_);                     \
        if (!skn_p_) break;                                                         \
        (tab) = skn_p_;                                                             \
        for (size_t skn_j_ = (size_t)(n); skn_j_ < skn_cap_; skn_j_++) (tab)[skn_j_] = NULL; \
      }                                                                             \
      (idx) = (n)++;                                                                \
    }                                                                               \
  } while (0)

/* ---------------------------------------------------------------- groups */

/* An ordered set of processes, as world ranks. Handle index 0 is MPI_GROUP_NULL,
 * 1 is MPI_GROUP_EMPTY. */
typedef struct skn_group {
  int size;
  int *wranks;
} skn_group;

/* The calling rank's group for handle h, or NULL. */
SKN_INTERNAL const skn_group *skn_api_group(skn_rank *me, MPI_Group h);
/* A new group handle of the given ranks, in order (MPI_Comm_group, MPI_Win_get_group). */
SKN_INTERNAL int skn_api_members_group(skn_rank *me, const char *fn, int n, skn_rank *const *members,
                                       MPI_Group *group);

/* ---------------------------------------------------------------- topologies */

typedef struct skn_topo {
  int kind;           /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
  _Atomic(int) refs;  /* communicator views using it */
  int size;           /* members of the communicator */
  /* MPI_CART */
  int ndims;
  int *dims, *periods;
  /* MPI_GRAPH, as given to MPI_Graph_create */
  int nnodes;
  int *index, *edges;
  /* MPI_GRAPH and MPI_DIST_GRAPH: every member's neighbours (CSR). The in-neighbours of
   * rank i are in[in_off[i] .. in_off[i + 1]), the out-neighbours likewise. */
  int *in_off, *in, *out_off, *out;
  int *inw, *outw;    /* weights, aligned with in/out; NULL when unweighted */
  bool weighted;      /* some member gave weights (inw/outw exist) */
  bool *member_weighted; /* MPI_DIST_GRAPH: member i did not say MPI_UNWEIGHTED */
  /* For in-edge e (an index into in[]): the index within the source's out-list of the
   * edge that feeds it (k-th occurrence matches k-th occurrence), or -1. This is what
   * the neighbour collectives read. */
  int *in_match;
} skn_topo;

/* Adds n references; returns t. */
SKN_INTERNAL skn_topo *skn_topo_ref(skn_topo *t, int n);
/* Drops one reference; frees t with the last. */
SKN_INTERNAL void skn_topo_release(skn_topo *t);

/* ---------------------------------------------------------------- attributes */

#define SKN_KEYVAL_BASE 64 /* user keyvals are SKN_KEYVAL_BASE + table index */

enum { SKN_KEYVAL_COMM = 1, SKN_KEYVAL_TYPE = 2, SKN_KEYVAL_WIN = 3 };

/* Copy and delete callbacks of both kinds share one shape (the handle is an int). */
typedef struct skn_keyval {
  int kind;                 /* SKN_KEYVAL_COMM, _TYPE or _WIN */
  MPI_Comm_copy_attr_function *copy;
  MPI_Comm_delete_attr_function *del;
  void *extra;
  int refs;                 /* the handle (until freed) + attributes using it */
  bool freed;               /* MPI_Comm_free_keyval / MPI_Type_free_keyval called */
  void (*release)(void *);  /* frees extra when the keyval ends (skn_api_keyval_own_extra) */
} skn_keyval;

typedef struct skn_attr {
  struct skn_attr *next;    /* newest first */
  int keyval;
  void *val;
  bool fortran; /* set from Fortran, a value: C reads a pointer to val (MPI-3.1 17.2.7) */
} skn_attr;

/* A rank's name and attributes for one datatype handle (predefined or derived). */
typedef struct skn_type_meta {
  char name[MPI_MAX_OBJECT_NAME];
  skn_attr *attrs;
} skn_type_meta;

/* Dup: copies `from`'s attributes of object `oldhandle` to the list `to` through their
 * copy callbacks. Returns MPI_SUCCESS or the first failing callback's code. */
SKN_INTERNAL int skn_attr_copy_all(skn_rank *me, int oldhandle, skn_attr *from, skn_attr **to);
/* Free: runs the delete callbacks of the attributes in *list (newest first) and removes
 * them. Returns MPI_SUCCESS or the first failing callback's code (the attributes after
 * it stay). */
SKN_INTERNAL int skn_attr_delete_all(skn_rank *me, int handle, skn_attr **list);
/* Datatypes: MPI_Type_dup copies names' absence and attributes; MPI_Type_free deletes. */
SKN_INTERNAL int skn_type_attrs_dup(skn_rank *me, MPI_Datatype oldtype, MPI_Datatype newtype);
SKN_INTERNAL int skn_type_attrs_free(skn_rank *me, MPI_Datatype type);

/* An error code returned by a user callback, as an error class skn_api_error accepts. */
static inline int skn_attr_errclass(int code) {
  return code > MPI_SUCCESS && code <= MPI_ERR_LASTCODE ? code : MPI_ERR_OTHER;
}

/* ---------------------------------------------------------------- windows (api/win.c) */

struct skn_win;

/* A rank's view of a window: what the standard makes per process (name, attributes,
 * error handler, info) and the rank's epochs. Touched by the rank only. */
typedef struct skn_win_view {
  struct skn_win *win;
  int rank, size;
  int errhandler;
  char name[MPI_MAX_OBJECT_NAME];
  skn_attr *attrs;
  int *wranks;            /* window rank -> world rank */
  /* epochs */
  bool fence;             /* a fence opened an epoch (no MPI_MODE_NOSUCCEED) */
  int lock_all;           /* 0, or 1 + whether MPI_MODE_NOCHECK skipped the lock words */
  uint8_t *locked;        /* per target: 0, or SKN_WLOCK_* bits */
  int nlocked;
  int *access, naccess;   /* PSCW access epoch: targets (window ranks), -1 when none */
  uint8_t *in_access;     /* per target: in the access group */
  int nexposure;          /* PSCW exposure epoch: origins, -1 when none */
  /* predefined attribute values (Win_get_attr hands out pointers to them) */
  void *base;
  MPI_Aint size_attr;
  int disp_unit, flavor, model;
  /* info keys (Win_set_info / Win_get_info) */
  bool no_locks, same_size, same_disp_unit, noncontig;
  char acc_ordering[64], acc_ops[32];
} skn_win_view;

enum { SKN_WLOCK_SHARED = 1, SKN_WLOCK_EXCL = 2, SKN_WLOCK_NOCHECK = 4 };

/* The calling rank's view for handle h, or NULL. */
SKN_INTERNAL skn_win_view *skn_api_win(skn_rank *me, MPI_Win h);
/* Reports an error on window `win` through its error handler (MPI_COMM_WORLD's when
 * win is not valid), as skn_api_error does for communicators. */
SKN_INTERNAL int skn_api_win_error(skn_rank *me, MPI_Win win, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ---- issue 13 (gen13): handle lookups of the generated entry points (binding/gen_c.py);
 * NULL when h is not a valid handle of the calling rank. */
SKN_INTERNAL struct skn_info *skn_api_info(skn_rank *me, MPI_Info h);
SKN_INTERNAL skn_errhandler *skn_api_errhandler(skn_rank *me, MPI_Errhandler h);

/* ---------------------------------------------------------------- info */

typedef struct skn_info {
  int n, cap;
  char **keys, **vals; /* in insertion order */
} skn_info;

/* Info kept by an object (communicators now; windows and files the same way): set_info
 * stores a copy of the user's info (skn_info_copy_handle), get_info hands out a new handle
 * holding a copy (skn_info_new_handle), dup copies (skn_info_clone), free destroys.
 * All return MPI_SUCCESS or report through skn_api_error on MPI_COMM_WORLD... except
 * clone, which returns NULL when out of memory (or when src is NULL). */
SKN_INTERNAL int skn_info_copy_handle(skn_rank *me, const char *fn, MPI_Info h, skn_info **out);
SKN_INTERNAL int skn_info_new_handle(skn_rank *me, const char *fn, const skn_info *src, MPI_Info *out);
SKN_INTERNAL skn_info *skn_info_clone(const skn_info *src);
SKN_INTERNAL void skn_info_destroy(skn_info *i);

#endif
