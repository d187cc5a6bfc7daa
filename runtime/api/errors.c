/* Error classes, error strings and error handlers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "objects.h"

static const char *const class_names[MPI_ERR_LASTCODE + 1][2] = {
    [MPI_SUCCESS] = {"MPI_SUCCESS", "no error"},
    [MPI_ERR_BUFFER] = {"MPI_ERR_BUFFER", "invalid buffer pointer"},
    [MPI_ERR_COUNT] = {"MPI_ERR_COUNT", "invalid count argument"},
    [MPI_ERR_TYPE] = {"MPI_ERR_TYPE", "invalid datatype"},
    [MPI_ERR_TAG] = {"MPI_ERR_TAG", "invalid tag"},
    [MPI_ERR_COMM] = {"MPI_ERR_COMM", "invalid communicator"},
    [MPI_ERR_RANK] = {"MPI_ERR_RANK", "invalid rank"},
    [MPI_ERR_REQUEST] = {"MPI_ERR_REQUEST", "invalid request"},
    [MPI_ERR_ROOT] = {"MPI_ERR_ROOT", "invalid root"},
    [MPI_ERR_GROUP] = {"MPI_ERR_GROUP", "invalid group"},
    [MPI_ERR_OP] = {"MPI_ERR_OP", "invalid operation"},
    [MPI_ERR_TOPOLOGY] = {"MPI_ERR_TOPOLOGY", "invalid topology"},
    [MPI_ERR_DIMS] = {"MPI_ERR_DIMS", "invalid dimension argument"},
    [MPI_ERR_ARG] = {"MPI_ERR_ARG", "invalid argument"},
    [MPI_ERR_UNKNOWN] = {"MPI_ERR_UNKNOWN", "unknown error"},
    [MPI_ERR_TRUNCATE] = {"MPI_ERR_TRUNCATE", "message truncated"},
    [MPI_ERR_OTHER] = {"MPI_ERR_OTHER", "other error"},
    [MPI_ERR_INTERN] = {"MPI_ERR_INTERN", "internal error"},
    [MPI_ERR_PENDING] = {"MPI_ERR_PENDING", "pending request"},
    [MPI_ERR_IN_STATUS] = {"MPI_ERR_IN_STATUS", "error code is in status"},
    [MPI_ERR_ACCESS] = {"MPI_ERR_ACCESS", "permission denied"},
    [MPI_ERR_AMODE] = {"MPI_ERR_AMODE", "invalid amode"},
    [MPI_ERR_ASSERT] = {"MPI_ERR_ASSERT", "invalid assert"},
    [MPI_ERR_BAD_FILE] = {"MPI_ERR_BAD_FILE", "invalid file name"},
    [MPI_ERR_BASE] = {"MPI_ERR_BASE", "invalid base"},
    [MPI_ERR_CONVERSION] = {"MPI_ERR_CONVERSION", "data conversion error"},
    [MPI_ERR_DISP] = {"MPI_ERR_DISP", "invalid displacement"},
    [MPI_ERR_DUP_DATAREP] = {"MPI_ERR_DUP_DATAREP", "data representation already defined"},
    [MPI_ERR_FILE_EXISTS] = {"MPI_ERR_FILE_EXISTS", "file exists"},
    [MPI_ERR_FILE_IN_USE] = {"MPI_ERR_FILE_IN_USE", "file in use"},
    [MPI_ERR_FILE] = {"MPI_ERR_FILE", "invalid file"},
    [MPI_ERR_INFO_KEY] = {"MPI_ERR_INFO_KEY", "invalid info key"},
    [MPI_ERR_INFO_NOKEY] = {"MPI_ERR_INFO_NOKEY", "info key not defined"},
    [MPI_ERR_INFO_VALUE] = {"MPI_ERR_INFO_VALUE", "invalid info value"},
    [MPI_ERR_INFO] = {"MPI_ERR_INFO", "invalid info object"},
    [MPI_ERR_IO] = {"MPI_ERR_IO", "I/O error"},
    [MPI_ERR_KEYVAL] = {"MPI_ERR_KEYVAL", "invalid keyval"},
    [MPI_ERR_LOCKTYPE] = {"MPI_ERR_LOCKTYPE", "invalid lock type"},
    [MPI_ERR_NAME] = {"MPI_ERR_NAME", "invalid service name"},
    [MPI_ERR_NO_MEM] = {"MPI_ERR_NO_MEM", "out of memory"},
    [MPI_ERR_NOT_SAME] = {"MPI_ERR_NOT_SAME", "arguments differ between processes"},
    [MPI_ERR_NO_SPACE] = {"MPI_ERR_NO_SPACE", "no space left"},
    [MPI_ERR_NO_SUCH_FILE] = {"MPI_ERR_NO_SUCH_FILE", "no such file"},
    [MPI_ERR_PORT] = {"MPI_ERR_PORT", "invalid port"},
    [MPI_ERR_QUOTA] = {"MPI_ERR_QUOTA", "quota exceeded"},
    [MPI_ERR_READ_ONLY] = {"MPI_ERR_READ_ONLY", "read-only file"},
    [MPI_ERR_RMA_CONFLICT] = {"MPI_ERR_RMA_CONFLICT", "conflicting RMA accesses"},
    [MPI_ERR_RMA_SYNC] = {"MPI_ERR_RMA_SYNC", "wrong RMA synchronization"},
    [MPI_ERR_SERVICE] = {"MPI_ERR_SERVICE", "invalid service"},
    [MPI_ERR_SIZE] = {"MPI_ERR_SIZE", "invalid size"},
    [MPI_ERR_SPAWN] = {"MPI_ERR_SPAWN", "spawn failed"},
    [MPI_ERR_UNSUPPORTED_DATAREP] = {"MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation"},
    [MPI_ERR_UNSUPPORTED_OPERATION] = {"MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
    [MPI_ERR_WIN] = {"MPI_ERR_WIN", "invalid window"},
    [MPI_ERR_RMA_RANGE] = {"MPI_ERR_RMA_RANGE", "RMA target out of range"},
    [MPI_ERR_RMA_ATTACH] = {"MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    [MPI_ERR_RMA_SHARED] = {"MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    [MPI_ERR_RMA_FLAVOR] = {"MPI_ERR_RMA_FLAVOR", "wrong window flavor"},
    [MPI_T_ERR_MEMORY] = {"MPI_T_ERR_MEMORY", "out of memory (tools interface)"},
    [MPI_T_ERR_NOT_INITIALIZED] = {"MPI_T_ERR_NOT_INITIALIZED", "tools interface not initialized"},
    [MPI_T_ERR_CANNOT_INIT] = {"MPI_T_ERR_CANNOT_INIT", "tools interface cannot be initialized"},
    [MPI_T_ERR_INVALID_INDEX] = {"MPI_T_ERR_INVALID_INDEX", "invalid tools index"},
    [MPI_T_ERR_INVALID_ITEM] = {"MPI_T_ERR_INVALID_ITEM", "invalid tools item"},
    [MPI_T_ERR_INVALID_HANDLE] = {"MPI_T_ERR_INVALID_HANDLE", "invalid tools handle"},
    [MPI_T_ERR_OUT_OF_HANDLES] = {"MPI_T_ERR_OUT_OF_HANDLES", "no more tools handles"},
    [MPI_T_ERR_OUT_OF_SESSIONS] = {"MPI_T_ERR_OUT_OF_SESSIONS", "no more tools sessions"},
    [MPI_T_ERR_INVALID_SESSION] = {"MPI_T_ERR_INVALID_SESSION", "invalid tools session"},
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = {"MPI_T_ERR_CVAR_SET_NOT_NOW", "control variable cannot be set now"},
    [MPI_T_ERR_CVAR_SET_NEVER] = {"MPI_T_ERR_CVAR_SET_NEVER", "control variable cannot be set"},
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = {"MPI_T_ERR_PVAR_NO_STARTSTOP", "performance variable cannot be started"},
    [MPI_T_ERR_PVAR_NO_WRITE] = {"MPI_T_ERR_PVAR_NO_WRITE", "performance variable cannot be written"},
    [MPI_T_ERR_PVAR_NO_ATOMIC] = {"MPI_T_ERR_PVAR_NO_ATOMIC", "performance variable not atomic"},
    [MPI_T_ERR_INVALID_NAME] = {"MPI_T_ERR_INVALID_NAME", "invalid tools name"},
};

skn_rank *skn_api_self_any_slow(const char *fn) {
  skn_rank *me = skn_rank_self();
  if (!me)
    skn_fatal("%s called from a thread that belongs to no rank (only threads created by a rank, "
              "after the runtime started, may call MPI)", fn);
  if (skn_rank_libc_held(me)) skn_rank_libc_hold_end(me);
  return me;
}

skn_rank *skn_api_self_slow(const char *fn) {
  skn_rank *me = skn_api_self_any_slow(fn);
  if (me->state == SKN_RANK_INITIALIZED) return me;
  skn_flush_stdio();
  skn_fatal("rank %d: %s called %s; only MPI_Initialized, MPI_Finalized, MPI_Get_version, "
            "MPI_Get_library_version and the MPI_Info functions may be called %s",
            me->world_rank, fn, me->state == SKN_RANK_CREATED ? "before MPI_Init" : "after MPI_Finalize",
            me->state == SKN_RANK_CREATED ? "before MPI_Init" : "after MPI_Finalize");
}

/* The MPI state of view v: NULL for MPI_COMM_WORLD and MPI_COMM_SELF before MPI_Init,
 * when the calls allowed then (MPI_Init_thread, the Info functions) may fail, on any
 * thread of the rank (env.c gives it with a release store). */
static const skn_api_comm_state *view_state(const skn_comm_view *v) {
  return __atomic_load_n(&v->api, __ATOMIC_ACQUIRE);
}

const char *skn_api_comm_name(skn_rank *me, int comm) {
  skn_comm_view *v = skn_api_comm(me, comm);
  const skn_api_comm_state *st = v ? view_state(v) : NULL;
  return st ? st->name : v ? "" : "invalid communicator";
}

const char *skn_api_handle_str(int h, char *buf, size_t len) {
  static const struct {
    int h;
    const char *name;
  } names[] = {{MPI_COMM_NULL, "MPI_COMM_NULL"}, {MPI_COMM_WORLD, "MPI_COMM_WORLD"}, {MPI_COMM_SELF, "MPI_COMM_SELF"},
               {MPI_GROUP_NULL, "MPI_GROUP_NULL"}, {MPI_GROUP_EMPTY, "MPI_GROUP_EMPTY"},
               {MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL"}, {MPI_ERRHANDLER_NULL, "MPI_ERRHANDLER_NULL"},
               {MPI_OP_NULL, "MPI_OP_NULL"}, {MPI_INFO_NULL, "MPI_INFO_NULL"}, {MPI_WIN_NULL, "MPI_WIN_NULL"},
               {MPI_MESSAGE_NULL, "MPI_MESSAGE_NULL"}, {MPI_REQUEST_NULL, "MPI_REQUEST_NULL"},
               {MPI_FILE_NULL, "MPI_FILE_NULL"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].h == h) return names[i].name;
  snprintf(buf, len, "%#x", (unsigned)h);
  return buf;
}

/* ------------------------------------------------------------------ user classes and codes
 * Each rank's own, like its other objects: values above MPI_ERR_LASTCODE in the order the
 * rank added them (classes and codes share one numbering, as in MPICH); each has its
 * class and a string (empty until MPI_Add_error_string). */

typedef struct skn_user_errors {
  int last;          /* MPI_LASTUSEDCODE */
  int n, cap;        /* values MPI_ERR_LASTCODE + 1 .. + n */
  int *cls;          /* class of each (itself for a class) */
  char **str;        /* NULL: no string set */
} skn_user_errors;

static int lastcode_predefined = MPI_ERR_LASTCODE;

skn_api_rank *skn_api_rank_new(skn_rank *me) {
  skn_api_rank *a = calloc(1, sizeof *a);
  skn_errhandler *errhs = calloc(8, sizeof *errhs); /* create_errhandler grows it from 8 */
  if (!a || !errhs) skn_fatal("rank %d: out of memory for the MPI layer's state", me->world_rank);
  a->errhs = errhs;
  a->nerrhs = 3; /* 0: MPI_ERRHANDLER_NULL, 1: MPI_ERRORS_ARE_FATAL, 2: MPI_ERRORS_RETURN */
  a->errhs[1].live = a->errhs[2].live = true;
  skn_api_rank *none = NULL;
  if (__atomic_compare_exchange_n(&me->api, &none, a, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return a;
  free(errhs); /* another thread of the rank was first */
  free(a);
  return none;
}

const int *skn_api_lastusedcode(skn_rank *me) {
  skn_api_rank *api = skn_api_of(me);
  return api->uerr ? &api->uerr->last : &lastcode_predefined;
}

/* Index of an added value, or -1. */
static int user_index(skn_rank *me, int code) {
  if (!me || code <= MPI_ERR_LASTCODE) return -1;
  const skn_user_errors *u = skn_api_of(me)->uerr;
  if (!u || code > MPI_ERR_LASTCODE + u->n) return -1;
  return code - MPI_ERR_LASTCODE - 1;
}

bool skn_api_valid_code(skn_rank *me, int code) {
  return (code >= 0 && code <= MPI_ERR_LASTCODE) || user_index(me, code) >= 0;
}

/* The class of a valid code. */
static int class_of(skn_rank *me, int code) {
  int i = user_index(me, code);
  return i >= 0 ? skn_api_of(me)->uerr->cls[i] : code;
}

static bool is_class(skn_rank *me, int v) { return (v >= 0 && v <= MPI_ERR_LASTCODE) || (user_index(me, v) >= 0 && class_of(me, v) == v); }

static int add_value(skn_rank *me, const char *fn, int cls, int *out) {
  skn_api_rank *api = skn_api_of(me);
  if (!out) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "output argument NULL");
  skn_rank_lock(me);
  skn_user_errors *u = api->uerr;
  if (!u && (u = calloc(1, sizeof *u))) {
    u->last = MPI_ERR_LASTCODE;
    api->uerr = u;
  }
  bool ok = u != NULL;
  if (ok && u->n == u->cap) {
    int cap = u->cap ? 2 * u->cap : 16;
    int *c = realloc(u->cls, sizeof *c * (size_t)cap);
    if (c) u->cls = c;
    char **st = c ? realloc(u->str, sizeof *st * (size_t)cap) : NULL;
    if (st) u->str = st;
    if ((ok = c && st)) u->cap = cap;
  }
  int v = -1;
  if (ok) {
    v = MPI_ERR_LASTCODE + 1 + u->n;
    u->cls[u->n] = cls < 0 ? v : cls;
    u->str[u->n++] = NULL;
    u->last = v;
  }
  skn_rank_unlock(me);
  if (!ok) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  *out = v;
  return MPI_SUCCESS;
}

/* The impl_ functions of this file are called by the entry points generated from
 * runtime/binding/functions.txt (entries_errors.h, included below), which have found the
 * calling rank and checked the arguments their kinds describe; each handle argument is
 * followed by the object it names. */

static int impl_Add_error_class(skn_rank *me, const char *fn, int *errorclass) {
  return add_value(me, fn, -1, errorclass);
}

static int impl_Add_error_code(skn_rank *me, const char *fn, int errorclass, int *errorcode) {
  if (!is_class(me, errorclass))
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "errorclass=%d is not an error class", errorclass);
  return add_value(me, fn, errorclass, errorcode);
}

static int impl_Add_error_string(skn_rank *me, const char *fn, int errorcode, const char *string) {
  skn_api_rank *api = skn_api_of(me);
  int i = user_index(me, errorcode);
  /* predefined codes keep their strings (MPI-3.1 8.5) */
  if (i < 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "errorcode=%d was not added by the program", errorcode);
  if (strnlen(string, MPI_MAX_ERROR_STRING) >= MPI_MAX_ERROR_STRING)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "string longer than MPI_MAX_ERROR_STRING - 1");
  char *copy = strdup(string);
  if (!copy) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  skn_rank_lock(me);
  char *old = api->uerr->str[i];
  api->uerr->str[i] = copy;
  skn_rank_unlock(me);
  free(old);
  return MPI_SUCCESS;
}

/* The string of a valid code (user codes: "" until set). Caller holds nothing; user
 * strings are replaced only by the rank itself. */
static const char *code_string(skn_rank *me, int code, const char **name) {
  int i = user_index(me, code);
  if (i < 0) {
    *name = class_names[code][0];
    return class_names[code][1];
  }
  *name = NULL;
  const char *s = skn_api_of(me)->uerr->str[i];
  return s ? s : "";
}

/* Calls error handler h (of a communicator, window or file) on object *obj, or ends the job. */
static int report(skn_rank *me, int h, int *obj, int errclass, const char *fn, const char *fmt, va_list ap) {
  skn_api_rank *api = skn_api_of(me);
  api->eh_set = false;
  if (h == MPI_ERRORS_RETURN) return errclass;
  unsigned idx = (unsigned)h & 0xffffffu;
  if (h != MPI_ERRORS_ARE_FATAL && idx < (unsigned)api->nerrhs && api->errhs[idx].fn) {
    int code = errclass;
    api->errhs[idx].fn(obj, &code);
    /* the library goes on with the class; the entry point returns the handler's code */
    api->eh_code = code;
    api->eh_set = true;
    return errclass;
  }
  char detail[512];
  vsnprintf(detail, sizeof detail, fmt, ap);
  skn_flush_stdio();
  const char *name, *what = code_string(me, errclass, &name);
  char num[32];
  if (!name) snprintf(num, sizeof num, "error code %d", errclass);
  skn_log("rank %d: %s: %s: %s (%s); MPI_ERRORS_ARE_FATAL ends the job", me->world_rank, fn, what, detail,
          name ? name : num);
  skn_flush_stdio_wait();
  _exit(1);
}

/* SKN_API_NOOBJ's view (a predefined communicator, which MPI_Comm_free refuses to free). */
static skn_comm_view *noobj_view(skn_rank *me) { return skn_rank_comm_slot(me, (unsigned)SKN_API_NOOBJ & 0xffffffu); }

/* The error handler of view v; before MPI_Init, the predefined communicators' default. */
static int view_errhandler(const skn_comm_view *v) {
  const skn_api_comm_state *st = view_state(v);
  return st ? st->errhandler : MPI_ERRORS_ARE_FATAL;
}

int skn_api_error(skn_rank *me, int comm, int errclass, const char *fn, const char *fmt, ...) {
  if (!skn_api_valid_code(me, errclass)) errclass = MPI_ERR_OTHER;
  int h, c = comm;
  if (((unsigned)comm >> 24) == SKN_KIND_FILE) { /* file handles: the file's handler (api/file.c) */
    h = skn_api_file_errhandler(me, comm, &c);
  } else {
    skn_comm_view *v = skn_api_comm(me, comm);
    if (!v) { /* no valid communicator: raised on MPI_COMM_SELF (SKN_API_NOOBJ) */
      v = noobj_view(me);
      c = SKN_API_NOOBJ;
    }
    h = view_errhandler(v);
  }
  va_list ap;
  va_start(ap, fmt);
  int rc = report(me, h, &c, errclass, fn, fmt, ap);
  va_end(ap);
  return rc;
}

int skn_api_rc_slow(skn_rank *me, int rc) {
  skn_api_rank *api = skn_api_of(me);
  if (!api->eh_set) return rc;
  api->eh_set = false;
  return api->eh_code;
}

int skn_api_win_error(skn_rank *me, MPI_Win win, int errclass, const char *fn, const char *fmt, ...) {
  if (!skn_api_valid_code(me, errclass)) errclass = MPI_ERR_OTHER;
  skn_win_view *v = skn_api_win(me, win);
  int h = v ? v->errhandler : view_errhandler(noobj_view(me));
  int obj = v ? win : SKN_API_NOOBJ;
  va_list ap;
  va_start(ap, fmt);
  int rc = report(me, h, &obj, errclass, fn, fmt, ap);
  va_end(ap);
  return rc;
}

/* Hand-written, not generated: valid before MPI_Init and from a thread that is no rank
 * (skn_rank_self() may be NULL), which no generated entry allows. */
int PMPI_Error_class(int errorcode, int *errorclass) {
  skn_rank *me = skn_rank_self(); /* valid before MPI_Init too */
  if (!skn_api_valid_code(me, errorcode)) {
    me = skn_api_self_any("MPI_Error_class");
    return skn_api_rc(me, skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, "MPI_Error_class", "errorcode=%d", errorcode));
  }
  *errorclass = class_of(me, errorcode);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Error_class);

int PMPI_Error_string(int errorcode, char *string, int *resultlen) {
  skn_rank *me = skn_rank_self();
  if (!skn_api_valid_code(me, errorcode)) {
    me = skn_api_self_any("MPI_Error_string");
    return skn_api_rc(me, skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, "MPI_Error_string", "errorcode=%d", errorcode));
  }
  const char *name, *what = code_string(me, errorcode, &name);
  int n = name ? snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", name, what)
               : snprintf(string, MPI_MAX_ERROR_STRING, "%s", what);
  *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Error_string);

/* ------------------------------------------------------------------ error handlers */

static int errh_index(skn_rank *me, int h) {
  skn_api_rank *api = skn_api_of(me);
  unsigned idx = (unsigned)h & 0xffffffu;
  if (((unsigned)h >> 24) != SKN_KIND_ERRHANDLER || idx == 0 || idx >= (unsigned)api->nerrhs || !api->errhs[idx].live)
    return -1;
  return (int)idx;
}

skn_errhandler *skn_api_errhandler(skn_rank *me, MPI_Errhandler h) {
  int idx = errh_index(me, h);
  return idx < 0 ? NULL : &skn_api_of(me)->errhs[idx];
}

static int create_errhandler(skn_rank *me, const char *fn, MPI_Comm_errhandler_function *f, MPI_Errhandler *errhandler) {
  skn_api_rank *api = skn_api_of(me);
  if (!f) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "function NULL");
  skn_rank_lock(me);
  int idx = api->nerrhs;
  for (int i = 3; i < api->nerrhs; i++)
    if (!api->errhs[i].live) {
      idx = i;
      break;
    }
  if (idx == api->nerrhs) {
    /* capacity grows in powers of two from 8 */
    if ((api->nerrhs & (api->nerrhs - 1)) == 0 && api->nerrhs >= 8) {
      skn_errhandler *n = realloc(api->errhs, sizeof *n * (size_t)api->nerrhs * 2);
      if (!n) {
        skn_rank_unlock(me);
        return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
      }
      api->errhs = n;
    }
    api->nerrhs++;
  }
  api->errhs[idx] = (skn_errhandler){true, f};
  skn_rank_unlock(me);
  *errhandler = SKN_HANDLE(SKN_KIND_ERRHANDLER, idx);
  return MPI_SUCCESS;
}

static int impl_Comm_create_errhandler(skn_rank *me, const char *fn, MPI_Comm_errhandler_function *f,
                                       MPI_Errhandler *errhandler) {
  return create_errhandler(me, fn, f, errhandler);
}

static int impl_Comm_set_errhandler(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v,
                                    MPI_Errhandler errhandler, skn_errhandler *e) {
  v->api->errhandler = errhandler;
  return MPI_SUCCESS;
}

static int impl_Comm_get_errhandler(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v,
                                    MPI_Errhandler *errhandler) {
  *errhandler = v->api->errhandler;
  return MPI_SUCCESS;
}

static int impl_Comm_call_errhandler(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int errorcode) {
  /* the handler gets the code itself, added ones included */
  int code = skn_api_valid_code(me, errorcode) ? errorcode : MPI_ERR_UNKNOWN;
  skn_api_error(me, comm, code, fn, "errorcode=%d", errorcode);
  skn_api_of(me)->eh_set = false; /* returns MPI_SUCCESS whatever the handler left */
  return MPI_SUCCESS;
}

static int impl_Errhandler_free(skn_rank *me, const char *fn, MPI_Errhandler *errhandler) {
  if (errh_index(me, *errhandler) < 0)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "invalid error handler");
  /* Predefined handlers are never freed; user handlers stay usable by the communicators
   * that still refer to them, as the standard requires, so only the handle goes away. */
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ window error handlers
 * Same table as communicator handlers: both are called as fn(&handle, &code). */

static int impl_Win_create_errhandler(skn_rank *me, const char *fn, MPI_Win_errhandler_function *f,
                                      MPI_Errhandler *errhandler) {
  return create_errhandler(me, fn, (MPI_Comm_errhandler_function *)f, errhandler);
}

static int impl_Win_set_errhandler(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v,
                                   MPI_Errhandler errhandler, skn_errhandler *e) {
  v->errhandler = errhandler;
  return MPI_SUCCESS;
}

static int impl_Win_get_errhandler(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v,
                                   MPI_Errhandler *errhandler) {
  *errhandler = v->errhandler;
  return MPI_SUCCESS;
}

static int impl_Win_call_errhandler(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, int errorcode) {
  /* the handler gets the code itself, added ones included (as the communicator's) */
  int code = skn_api_valid_code(me, errorcode) ? errorcode : MPI_ERR_UNKNOWN;
  skn_api_win_error(me, win, code, fn, "errorcode=%d", errorcode);
  skn_api_of(me)->eh_set = false; /* returns MPI_SUCCESS whatever the handler left */
  return MPI_SUCCESS;
}

#include "entries_errors.h"
