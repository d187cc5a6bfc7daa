/* The MPI C API layer: argument checks, handle translation, error handlers. It calls
 * into the core and is the only layer that knows MPI error classes. */
#ifndef SKN_API_H
#define SKN_API_H

#include <stdarg.h>

#include "core/core.h"

/* The MPI layer's own per-rank state: its tables by handle. skn_rank holds only a pointer
 * to it (core never sees the layout); skn_api_of creates it on the rank's first call that
 * needs it, which may come before MPI_Init (the Info functions). Like the rank, it lives
 * until the process ends. */
typedef struct skn_errhandler {
  bool live;
  MPI_Comm_errhandler_function *fn;
} skn_errhandler;
typedef struct skn_user_op {
  MPI_User_function *fn; /* NULL: free slot */
  bool commute;
} skn_user_op;
/* The MPI layer's state of one communicator view (skn_comm_view.api): made with the view
 * by skn_api_comm_add and freed with it by MPI_Comm_free; MPI_COMM_WORLD's and
 * MPI_COMM_SELF's are in skn_api_rank, given to their views at MPI_Init. Only errors and
 * the calls on names, handlers, attributes and info read it, never the message paths. */
typedef struct skn_api_comm_state {
  int errhandler;
  struct skn_attr *attrs; /* cached attributes (attr.c) */
  struct skn_info *info;  /* hints of MPI_Comm_set_info / dup_with_info (info.c), NULL: none */
  char name[MPI_MAX_OBJECT_NAME];
} skn_api_comm_state;
typedef struct skn_api_rank {
  /* error handlers by handle index (1, 2: MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN), and the
   * error classes and codes added by MPI_Add_error_class/code, NULL: none (errors.c) */
  skn_errhandler *errhs;
  int nerrhs;
  struct skn_user_errors *uerr;
  /* names and cached attributes of datatypes, by handle index, created on first use (attr.c) */
  struct skn_type_meta **tmeta;
  int ntmeta;
  /* groups, attribute keys and info objects, by handle (group.c, attr.c, info.c) */
  struct skn_group **groups;
  int ngroups;
  struct skn_keyval **keyvals;
  int nkeyvals;
  struct skn_info **infos;
  int ninfos;
  /* windows, by handle (win.c); index 0 is MPI_WIN_NULL */
  struct skn_win_view **wins;
  int nwins;
  /* user reduction operations, indexed by handle - SKN_OP_PREDEFINED_COUNT (coll.c) */
  skn_user_op *ops;
  int nops;
  /* MPI-IO: open files by handle index (file.c), and the error handler MPI_FILE_NULL
   * holds, given to files opened next (0: MPI_ERRORS_RETURN) */
  struct skn_file **files;
  int nfiles;
  int file_errh;
  /* the state of MPI_COMM_WORLD's and MPI_COMM_SELF's views, given to them at MPI_Init */
  skn_api_comm_state world, self;
  /* the types MPI_Type_create_f90_* returned, one per (combiner, p, r) (f90types.c) */
  struct skn_f90_type *f90;
  int nf90;
  /* the code a user's error handler left in its argument, which the failing call returns
   * in place of its class (MPICH's rule: a handler that sets MPI_SUCCESS makes the call
   * succeed); eh_set: one is waiting (errors.c, report; skn_api_rc). One per rank: two
   * threads of a rank failing at once may swap their codes. */
  int eh_code;
  bool eh_set;
} skn_api_rank;

SKN_INTERNAL skn_api_rank *skn_api_rank_new(skn_rank *me);
static inline skn_api_rank *skn_api_of(skn_rank *me) {
  skn_api_rank *a = __atomic_load_n(&me->api, __ATOMIC_ACQUIRE); /* another thread of the rank may create it */
  return SKN_LIKELY(a != NULL) ? a : skn_api_rank_new(me);
}

/* MPI_X is a weak alias of PMPI_X so that profiling tools can wrap MPI_X. */
#define SKN_WEAK_ALIAS(name) \
  extern __typeof__(PMPI_##name) MPI_##name __attribute__((weak, alias("PMPI_" #name)))

#define SKN_TAG_UB 0x7fffffff

/* An impl_ function of the hot path, compiled into its generated entry point (no call,
 * no argument shuffling between the checks and the work). */
#define SKN_API_HOT static inline __attribute__((always_inline))

/* Where an error associated with no object is raised: a call with no communicator, window
 * or file argument, or whose communicator or window is not valid. Skein is MPI-3.1, which
 * says MPI_COMM_WORLD (section 8.3), as Debian's MPICH 4.0 and Open MPI 4.1 do: legacy codes
 * set MPI_ERRORS_RETURN on MPI_COMM_WORLD and expect these errors returned. MPI-4.0
 * (section 2.8) moves them to MPI_COMM_SELF; this is the one place to follow it. */
#define SKN_API_NOOBJ MPI_COMM_WORLD

/* Reports an error on `comm` (SKN_API_NOOBJ when comm is not valid; a file handle: that
 * file's handler, MPI_FILE_NULL's when invalid) through the calling rank's error handler,
 * and returns what the MPI call must return. */
SKN_INTERNAL int skn_api_error(skn_rank *me, int comm, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 5, 6), cold));

/* What an entry point returns for `rc`, the class its checks or impl_X returned: the code
 * the user's error handler left, when one ran for this error. Entries nested in impl_X
 * (PMPI_ calls inside the library) return it too, as a user handler saw their error. */
SKN_INTERNAL int skn_api_rc_slow(skn_rank *me, int rc) __attribute__((cold));
static inline int skn_api_rc(skn_rank *me, int rc) {
  return SKN_LIKELY(rc == MPI_SUCCESS) ? rc : skn_api_rc_slow(me, rc);
}

/* The calling rank; fatal when called from a thread that belongs to no rank, and (as in
 * MPICH) when the rank is not between MPI_Init and MPI_Finalize. One compare of the rank's
 * api_gate (next to `mt`, which the call reads anyway to lock) says "initialized, not
 * finalized, no libc hold"; the slow path ends a hold (its getopt parse is over: core.h)
 * and judges the state. */
SKN_INTERNAL skn_rank *skn_api_self_slow(const char *fn);
static inline skn_rank *skn_api_self(const char *fn) {
  skn_rank *me = skn_rank_self();
  return SKN_LIKELY(me != NULL && __atomic_load_n(&me->api_gate, __ATOMIC_RELAXED) == SKN_GATE_OPEN)
             ? me
             : skn_api_self_slow(fn);
}
/* The same for the calls the standard allows before MPI_Init and after MPI_Finalize
 * (MPI_Init itself, the MPI-4 Info functions): only a rank is required. */
SKN_INTERNAL skn_rank *skn_api_self_any_slow(const char *fn);
static inline skn_rank *skn_api_self_any(const char *fn) {
  skn_rank *me = skn_rank_self();
  return SKN_LIKELY(me != NULL && !skn_rank_libc_held(me)) ? me : skn_api_self_any_slow(fn);
}

/* Handle checks are one unsigned compare each: h minus its kind's base is below the
 * table's length only if h has that kind (another kind differs by at least 2^24, and
 * the tables are shorter). */
static inline skn_comm_view *skn_api_comm(skn_rank *me, int h) {
  unsigned idx = (unsigned)h - ((unsigned)SKN_KIND_COMM << 24);
  if (SKN_UNLIKELY(idx >= (unsigned)me->ncomms)) return NULL;
  skn_comm_view *v = skn_rank_comm_slot(me, idx);
  return SKN_LIKELY(v->comm != NULL) ? v : NULL;
}

/* Derived datatypes live in the rank's own table (api/datatype.c); NULL when h is not a
 * committed datatype of this rank. */
SKN_INTERNAL const skn_dtype *skn_api_dtype_derived(skn_rank *me, int h);
/* Any valid datatype of this rank, committed or not; NULL otherwise. */
SKN_INTERNAL const skn_dtype *skn_api_dtype_any(skn_rank *me, int h);

static inline const skn_dtype *skn_api_dtype(skn_rank *me, int h) {
  unsigned idx = (unsigned)h - (((unsigned)SKN_KIND_DATATYPE << 24) | 1u); /* slot 0 is MPI_DATATYPE_NULL */
  if (SKN_LIKELY(idx < SKN_DT_PREDEFINED_COUNT - 1)) return &skn_dt_predefined[1 + idx];
  return skn_api_dtype_derived(me, h);
}

/* Why h is no committed datatype of this rank, for a message: "is not committed" when it
 * is a valid one, else "is not a valid datatype". */
static inline const char *skn_api_dtype_fault(skn_rank *me, int h) {
  return skn_api_dtype_any(me, h) ? "is not committed" : "is not a valid datatype";
}

/* A predefined datatype; NULL for any other handle (the RMA atomics take only these). */
static inline const skn_dtype *skn_api_dtype_predefined(int h) {
  unsigned idx = (unsigned)h - (((unsigned)SKN_KIND_DATATYPE << 24) | 1u);
  return idx < SKN_DT_PREDEFINED_COUNT - 1 ? &skn_dt_predefined[1 + idx] : NULL;
}

/* The error handler of file handle h (MPI_FILE_NULL: the one new files get); *h_out is
 * the handle to pass to it (api/file.c). */
SKN_INTERNAL int skn_api_file_errhandler(skn_rank *me, int h, int *h_out);

SKN_INTERNAL const char *skn_api_comm_name(skn_rank *me, int comm);
/* A handle for a message: the name of a predefined one (MPI_COMM_NULL, MPI_COMM_WORLD,
 * MPI_DATATYPE_NULL...), else its value in hex, written in buf. */
SKN_INTERNAL const char *skn_api_handle_str(int h, char *buf, size_t len) __attribute__((cold));
#define SKN_HSTR(h) skn_api_handle_str((h), (char[24]){0}, 24)

/* The rank's MPI_LASTUSEDCODE (api/errors.c): MPI_ERR_LASTCODE until MPI_Add_error_class
 * or MPI_Add_error_code add one; the attribute of MPI_COMM_WORLD points at it. */
SKN_INTERNAL const int *skn_api_lastusedcode(skn_rank *me);
/* Whether code is a valid error code of this rank (predefined or added). */
SKN_INTERNAL bool skn_api_valid_code(skn_rank *me, int code);

/* Whether a Fortran status is NULL or MPI_F_STATUS(ES)_IGNORE (api/request.c). */
SKN_INTERNAL bool skn_api_f_status_ignored(const MPI_Fint *f);

/* Status of a completed request. */
static inline void skn_api_set_status(MPI_Status *st, const skn_req *r) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = r->st_src;
  st->MPI_TAG = r->st_tag;
  st->skn_cancelled = r->cancelled;
  st->skn_bytes = (long long)r->bytes;
}

static inline void skn_api_empty_status(MPI_Status *st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->MPI_ERROR = MPI_SUCCESS;
  st->skn_cancelled = 0;
  st->skn_bytes = 0;
}

static inline void skn_api_proc_null_status(MPI_Status *st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_PROC_NULL;
  st->MPI_TAG = MPI_ANY_TAG;
  st->skn_cancelled = 0;
  st->skn_bytes = 0;
}

/* Records what the rank blocks in, for the deadlock report. */
static inline void skn_api_enter(skn_rank *me, const char *fn, const char *origin, int peer, int tag) {
  skn_call_record(&me->call, (skn_call){fn, origin, peer, tag});
}
static inline void skn_api_leave(skn_rank *me) { __atomic_store_n(&me->call.fn, NULL, __ATOMIC_RELAXED); }

/* Refuses, with MPI_ERR_COMM, a call the standard defines on intracommunicators only. */
static inline int skn_api_intra_only(skn_rank *me, skn_comm_view *v, int comm, const char *fn) {
  if (SKN_LIKELY(!skn_comm_is_inter(v->comm))) return MPI_SUCCESS;
  return skn_api_error(me, comm, MPI_ERR_COMM, fn, "not defined on an intercommunicator");
}

/* Whether root names a collective's root on c: a rank of c, or on an intercommunicator
 * MPI_ROOT (the root), MPI_PROC_NULL (the rest of the root's group) or a rank of the
 * remote group (the other group). */
static inline bool skn_api_root_ok(const skn_comm *c, int root) {
  if (skn_comm_is_inter(c)) return root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->rsize);
  return root >= 0 && root < c->size;
}

/* Generalized requests (grequest.c), kind SKN_REQ_GREQ. settle: on completion for the
 * user, runs the query function into the request's status fields and then the free
 * function; returns the first error code they returned. query: the query function only
 * (MPI_Request_get_status). cancel: the cancel function. */
SKN_INTERNAL int skn_api_greq_settle(skn_rank *me, skn_req *r);
SKN_INTERNAL int skn_api_greq_query(skn_rank *me, skn_req *r, MPI_Status *st);
SKN_INTERNAL int skn_api_greq_cancel(skn_rank *me, skn_req *r);
/* MPI_Request_free of a generalized request: the free function runs now if it completed,
 * else at MPI_Grequest_complete. */
SKN_INTERNAL int skn_api_greq_user_free(skn_rank *me, skn_req *r);

/* Completes a finished request for the user: status, error, handle release. */
SKN_INTERNAL int skn_api_request_finish(skn_rank *me, const char *fn, int *handle, skn_req *r, MPI_Status *st);
/* The request instance that actually completes: r itself, or a persistent request's
 * active instance (NULL when inactive). */
static inline skn_req *skn_api_active(skn_req *r) { return r->kind == SKN_REQ_PERSISTENT ? r->inner : r; }

/* Waits until every nonblocking collective this rank started on v has completed, so a
 * blocking collective keeps the issue order (core/nbc.c). */
static inline void skn_api_coll_order(skn_rank *me, skn_comm_view *v) { skn_nbc_order(me, v); }

/* Makes the calling rank's view of c (as member `rank`) with fresh MPI state (error
 * handler errh, no name, attributes or info) and its handle *out; an error on parent when
 * c is NULL or out of memory (comm.c). */
SKN_INTERNAL int skn_api_comm_add(skn_rank *me, const char *fn, MPI_Comm parent, skn_comm *c, int rank, int errh,
                                  MPI_Comm *out);

/* Duplicates v (handle comm) now, without ordering against pending collectives (comm.c). */
SKN_INTERNAL int skn_api_comm_dup_now(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v,
                                      MPI_Comm *newcomm);

/* Frees a persistent request's saved arguments (p2p.c). */
SKN_INTERNAL void skn_api_persistent_free(skn_req *r);

/* Gives the calling rank's keyval its extra state to own: release(extra) runs when the
 * keyval ends (freed and its last attribute deleted), e.g. the Fortran bindings' record of
 * the Fortran callbacks (attr.c). */
SKN_INTERNAL void skn_api_keyval_own_extra(int keyval, void (*release)(void *extra));
/* The Fortran bindings' side of MPI-3.1 17.2.7: whether the calling rank's attribute of
 * keyval on the communicator, datatype or window `handle` was set from Fortran (after
 * marking it so, when mark). Such a value reaches C as a pointer to the storage that holds
 * it, Fortran as the value (attr.c). */
SKN_INTERNAL bool skn_api_attr_fortran(int handle, int keyval, bool mark);
/* A new committed type of combiner MPI_COMBINER_F90_* standing for the predefined type
 * base, with contents ints[0..ni) (datatype.c, for f90types.c). */
SKN_INTERNAL int skn_api_type_f90(skn_rank *me, const char *fn, int combiner, int ni, const int *ints,
                                  MPI_Datatype base, MPI_Datatype *newtype);

#endif
