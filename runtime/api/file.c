/* MPI-IO entry points (MPI-3.1 chapter 13): argument checks, file handles, views, file
 * pointers, hints and error handlers; the data movement is runtime/io/.
 *
 * A file handle is SKN_HANDLE(SKN_KIND_FILE, index into the rank's `files`), index 0
 * being MPI_FILE_NULL. Each rank holds its own descriptor of the file (so byte-range
 * locks, which belong to an open file description, separate ranks as well as
 * processes), its own view and individual pointer; what the members of a process share
 * (the shared file pointer) hangs off one skn_file_shared per process. Errors go to the
 * file's error handler, or MPI_FILE_NULL's before a file exists (MPI_ERRORS_RETURN by
 * default). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io.h"
#include "objects.h"

enum { REP_NATIVE, REP_INTERNAL, REP_EXTERNAL32, REP_USER };

/* Files in external32 map the view with native sizes, so types whose external32 form is
 * narrower (long, unsigned long, wchar_t) are refused there; MPI_Pack_external has them. */
#define EXTERNAL_NARROW "MPI_LONG, MPI_UNSIGNED_LONG and MPI_WCHAR are not supported in external32 files (use MPI_INT64_T)"
static bool external_same(const skn_dtype *t, size_t count) { return skn_dt_external_size(t, count) == count * t->size; }
enum { CB_AUTO, CB_ENABLE, CB_DISABLE };

/* What the members of one process share for one open file. */
typedef struct skn_file_shared {
  _Atomic(int) refs;
  _Atomic(int64_t) shfp; /* shared file pointer in etypes (communicators within this process) */
} skn_file_shared;

/* A registered data representation (MPI_Register_datarep): the calling rank's own. */
typedef struct skn_datarep {
  struct skn_datarep *next;
  int owner; /* world rank */
  char name[MPI_MAX_DATAREP_STRING];
  MPI_Datarep_conversion_function *rd, *wr;
  MPI_Datarep_extent_function *extent;
  void *extra;
} skn_datarep;
static skn_datarep *datareps;
static pthread_mutex_t datareps_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct skn_file {
  int fd;
  int amode;
  MPI_Comm comm;  /* a duplicate of the communicator given to MPI_File_open */
  skn_comm *c;
  int rank;
  char *path;
  skn_file_shared *sh;
  int lockfd;     /* communicators spanning processes: the shared pointer's file, else -1 */
  char *lockpath;
  /* view */
  int64_t disp;
  MPI_Datatype etype, ftype; /* our own handles (dups of derived types) */
  const skn_dtype *et, *ft;
  int rep;
  const skn_datarep *urep;
  char repname[MPI_MAX_DATAREP_STRING];
  int64_t fp;     /* individual file pointer, etypes */
  int errh;
  bool atomic;
  /* hints */
  size_t cb_buffer_size;
  int cb_nodes, cb_read, cb_write;
  int striping_factor, striping_unit;
  char access_style[64];
  void *cbuf;     /* aggregation buffer, when this rank aggregates */
  size_t cbuf_len;
  /* split collective in progress */
  MPI_Request split;
  bool split_active;
} skn_file;

#define IO_BOUNCE (4u << 20)

static const skn_dtype *predef(MPI_Datatype h) { return &skn_dt_predefined[(unsigned)h & 0xffffffu]; }

/* ------------------------------------------------------------------ handles and errors */

static skn_file *file_get(skn_rank *me, MPI_File h) {
  skn_api_rank *api = skn_api_of(me);
  unsigned idx = (unsigned)h & 0xffffffu;
  if (((unsigned)h >> 24) != SKN_KIND_FILE || idx == 0) return NULL;
  skn_rank_lock(me);
  skn_file *f = idx < (unsigned)api->nfiles ? api->files[idx] : NULL;
  skn_rank_unlock(me);
  return f;
}

int skn_api_file_errhandler(skn_rank *me, int h, int *h_out) {
  skn_api_rank *api = skn_api_of(me);
  skn_file *f = file_get(me, h);
  if (f) {
    *h_out = h;
    return f->errh;
  }
  *h_out = MPI_FILE_NULL;
  return api->file_errh ? api->file_errh : MPI_ERRORS_RETURN;
}

static int errno_class(int e) {
  if (e < 0) e = -e;
  switch (e) {
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case ENOENT:
    case ENOTDIR: return MPI_ERR_NO_SUCH_FILE;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case ENOSPC: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ENAMETOOLONG:
    case EISDIR: return MPI_ERR_BAD_FILE;
    case ENOMEM: return MPI_ERR_NO_MEM;
    case ETXTBSY:
    case EBUSY: return MPI_ERR_FILE_IN_USE;
    default: return MPI_ERR_IO;
  }
}

static int ferr(skn_rank *me, MPI_File fh, int cls, const char *fn, const char *detail) {
  return skn_api_error(me, fh, cls, fn, "%s", detail);
}

static int ferr_errno(skn_rank *me, MPI_File fh, int e, const char *fn, const char *what) {
  char d[PATH_MAX + 256];
  snprintf(d, sizeof d, "%.*s: %s", PATH_MAX, what, strerror(e < 0 ? -e : e));
  return skn_api_error(me, fh, errno_class(e), fn, "%s", d);
}

/* Looks up fh; reports MPI_ERR_FILE through MPI_FILE_NULL's handler when invalid. */

/* ------------------------------------------------------------------ collectives on the file's communicator */

static skn_comm *local_comm(skn_file *f, int *lrank) {
  if (f->c->x) {
    *lrank = f->c->x->local_of[f->rank];
    return f->c->x->local;
  }
  *lrank = f->rank;
  return f->c;
}

static void coll_bcast(skn_comm *c, int rank, void *buf, size_t bytes, int root) {
  skn_coll_args a = {.rbuf = buf, .rcount = bytes, .rt = predef(MPI_BYTE), .root = root};
  c->coll->bcast(c, rank, &a);
}

static void coll_allgather_i64(skn_comm *c, int rank, int64_t v, int64_t *all) {
  skn_coll_args a = {.sbuf = &v, .scount = 1, .st = predef(MPI_INT64_T), .rbuf = all, .rcount = 1,
                     .rt = predef(MPI_INT64_T)};
  c->coll->allgather(c, rank, &a);
}

/* The first non-zero value any member holds (errors every member must report alike). */
static int coll_agree(skn_comm *c, int rank, int v) {
  int64_t stack[64], *all = c->size <= 64 ? stack : malloc((size_t)c->size * sizeof *all);
  if (!all) skn_fatal("out of memory in a collective file operation");
  coll_allgather_i64(c, rank, v, all);
  int r = 0;
  for (int i = 0; i < c->size && !r; i++) r = (int)all[i];
  if (all != stack) free(all);
  return r;
}

/* ------------------------------------------------------------------ hints */

static void hints_default(skn_file *f) {
  f->cb_buffer_size = 16u << 20;
  f->cb_nodes = 0;
  f->cb_read = f->cb_write = CB_AUTO;
  f->striping_factor = f->striping_unit = 0;
  f->access_style[0] = 0;
}

static int cb_mode(const char *v, int dflt) {
  if (!strcmp(v, "enable")) return CB_ENABLE;
  if (!strcmp(v, "disable")) return CB_DISABLE;
  if (!strcmp(v, "automatic")) return CB_AUTO;
  return dflt;
}

/* Takes the hints we know from info (the others are ignored, as the standard allows). */
static void hints_apply(skn_file *f, MPI_Info info) {
  if (info == MPI_INFO_NULL) return;
  char v[MPI_MAX_INFO_VAL + 1];
  int flag;
  long n;
  if (PMPI_Info_get(info, "cb_buffer_size", MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag &&
      (n = strtol(v, NULL, 10)) > 0)
    f->cb_buffer_size = (size_t)n;
  if (PMPI_Info_get(info, "cb_nodes", MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag &&
      (n = strtol(v, NULL, 10)) > 0)
    f->cb_nodes = (int)(n > INT_MAX ? INT_MAX : n);
  if (PMPI_Info_get(info, "romio_cb_read", MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag)
    f->cb_read = cb_mode(v, f->cb_read);
  if (PMPI_Info_get(info, "romio_cb_write", MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag)
    f->cb_write = cb_mode(v, f->cb_write);
  if (PMPI_Info_get(info, "striping_factor", MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag &&
      (n = strtol(v, NULL, 10)) > 0)
    f->striping_factor = (int)(n > INT_MAX ? INT_MAX : n);
  if (PMPI_Info_get(info, "striping_unit", MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag &&
      (n = strtol(v, NULL, 10)) > 0)
    f->striping_unit = (int)(n > INT_MAX ? INT_MAX : n);
  if (PMPI_Info_get(info, "access_style", MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag)
    snprintf(f->access_style, sizeof f->access_style, "%.63s", v);
}

static int cb_nodes_eff(const skn_file *f) {
  int n = f->cb_nodes ? f->cb_nodes : 1;
  int lrank;
  skn_comm *l = local_comm((skn_file *)f, &lrank);
  return n < l->size ? n : l->size;
}

/* ------------------------------------------------------------------ open, close, delete */

static int amode_check(int amode) {
  int rw = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_WRONLY) + !!(amode & MPI_MODE_RDWR);
  if (rw != 1) return 1;
  if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL))) return 1;
  if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL)) return 1;
  int known = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE |
              MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL | MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;
  return (amode & ~known) != 0;
}

static int open_flags(int amode, bool creator) {
  int fl = O_CLOEXEC;
  if (amode & MPI_MODE_RDONLY) fl |= O_RDONLY;
  else if (amode & MPI_MODE_WRONLY) fl |= O_WRONLY;
  else fl |= O_RDWR;
  if (creator && (amode & MPI_MODE_CREATE)) fl |= O_CREAT;
  if (creator && (amode & MPI_MODE_EXCL)) fl |= O_EXCL;
  return fl;
}

/* The shared pointer's file next to the data file, for communicators spanning processes. */
static char *lock_path(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t dir = slash ? (size_t)(slash - path + 1) : 0;
  size_t n = strlen(path) + 32;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%.*s.%s.skein-shfp", (int)dir, path, path + dir);
  return p;
}

static void file_free(skn_rank *me, skn_file *f) {
  if (f->fd >= 0) close(f->fd);
  if (f->lockfd >= 0) close(f->lockfd);
  if ((unsigned)(f->etype & 0xffffff) >= SKN_DT_PREDEFINED_COUNT) PMPI_Type_free(&f->etype);
  if ((unsigned)(f->ftype & 0xffffff) >= SKN_DT_PREDEFINED_COUNT) PMPI_Type_free(&f->ftype);
  if (f->comm != MPI_COMM_NULL) PMPI_Comm_free(&f->comm);
  free(f->path);
  free(f->lockpath);
  free(f->cbuf);
  free(f);
}

/* The entry checked the communicator, the name, the info and fh, reporting (as here) through
 * MPI_FILE_NULL's handler: there is no file yet. Every member opens or every member fails
 * (coll_agree); an argument one member alone gets wrong fails that member only. */
static int impl_File_open(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, const char *filename,
                          int amode, MPI_Info info, skn_info *i, MPI_File *fh) {
  int rc;
  if (skn_comm_is_inter(v->comm))
    return skn_api_error(me, MPI_FILE_NULL, MPI_ERR_COMM, fn, "not defined on an intercommunicator");
  if (amode_check(amode)) return skn_api_error(me, MPI_FILE_NULL, MPI_ERR_AMODE, fn, "amode=%#x", (unsigned)amode);
  *fh = MPI_FILE_NULL;
  skn_file *f = calloc(1, sizeof *f);
  if (!f) return skn_api_error(me, MPI_FILE_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
  f->fd = f->lockfd = -1;
  f->comm = MPI_COMM_NULL;
  f->etype = f->ftype = MPI_BYTE;
  f->et = f->ft = predef(MPI_BYTE);
  f->rep = REP_NATIVE;
  strcpy(f->repname, "native");
  int errh = skn_api_of(me)->file_errh;
  f->errh = errh ? errh : MPI_ERRORS_RETURN;
  f->amode = amode;
  hints_default(f);
  hints_apply(f, info);
  if ((rc = PMPI_Comm_dup(comm, &f->comm)) != MPI_SUCCESS) {
    file_free(me, f);
    return rc;
  }
  skn_comm_view *dv = skn_api_comm(me, f->comm);
  f->c = dv->comm;
  f->rank = dv->rank;
  f->path = strdup(filename);
  bool span = f->c->x != NULL;
  if (span) f->lockpath = lock_path(filename);
  /* The first member creates (and for MPI_MODE_EXCL, claims) the file; the others then
   * open what it made. */
  int e = 0;
  if (!f->path || (span && !f->lockpath)) e = -ENOMEM;
  if (f->rank == 0 && !e) {
    f->fd = open(filename, open_flags(amode, true), 0666);
    if (f->fd < 0) e = -errno;
    if (!e && span) {
      f->lockfd = open(f->lockpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
      int64_t zero = 0;
      if (f->lockfd < 0) e = -errno;
      else e = skn_io_pwrite_full(f->lockfd, &zero, sizeof zero, 0);
    }
  }
  coll_bcast(f->c, f->rank, &e, sizeof e, 0);
  if (f->rank != 0 && !e) {
    f->fd = open(filename, open_flags(amode, false), 0666);
    int mine = f->fd < 0 ? -errno : 0;
    if (!mine && span && (f->lockfd = open(f->lockpath, O_RDWR | O_CLOEXEC)) < 0) mine = -errno;
    e = mine;
  }
  e = coll_agree(f->c, f->rank, e);
  if (e) {
    char what[PATH_MAX + 32];
    snprintf(what, sizeof what, "cannot open '%s'", filename);
    file_free(me, f);
    return ferr_errno(me, MPI_FILE_NULL, e, fn, what);
  }
  /* the process's shared state, made by its first member */
  int lrank;
  skn_comm *l = local_comm(f, &lrank);
  skn_file_shared *sh = NULL;
  if (lrank == 0) {
    sh = calloc(1, sizeof *sh);
    if (!sh) skn_fatal("rank %d: %s: out of memory", me->world_rank, fn);
    atomic_store(&sh->refs, l->size);
  }
  skn_coll_args a = {.rbuf = &sh, .rcount = sizeof sh, .rt = predef(MPI_BYTE), .root = 0};
  skn_coll_bcast(l, lrank, &a);
  f->sh = sh;
  if (amode & MPI_MODE_APPEND) { /* both pointers start at the end (the default view counts bytes) */
    struct stat st;
    if (fstat(f->fd, &st) == 0) {
      f->fp = st.st_size;
      if (lrank == 0) atomic_store(&sh->shfp, (int64_t)st.st_size);
      if (span && f->rank == 0) skn_io_pwrite_full(f->lockfd, &f->fp, sizeof f->fp, 0);
    }
    skn_coll_barrier(NULL, f->c);
  }
  skn_api_rank *api = skn_api_of(me);
  skn_rank_lock(me);
  int idx;
  SKN_TABLE_SLOT(api->files, api->nfiles, 1, idx);
  if (idx == 0) SKN_TABLE_SLOT(api->files, api->nfiles, 1, idx); /* index 0 is MPI_FILE_NULL */
  if (idx >= 0) api->files[idx] = f;
  skn_rank_unlock(me);
  if (idx < 0) skn_fatal("rank %d: %s: out of memory for a file handle", me->world_rank, fn);
  *fh = SKN_HANDLE(SKN_KIND_FILE, idx);
  return MPI_SUCCESS;
}

/* The entry found the file; an error of the close itself (the handle is gone by then) is
 * reported through the handler the file had. */
static int impl_File_close(skn_rank *me, const char *fn, MPI_File *fh, skn_file *f) {
  int rc;
  if (f->split_active) PMPI_Wait(&f->split, MPI_STATUS_IGNORE);
  int e = 0;
  if (close(f->fd) != 0) e = -errno; /* close reports write-back errors of some file systems */
  f->fd = -1;
  skn_coll_barrier(NULL, f->c); /* every member is done with the file */
  if (f->rank == 0) {
    if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && unlink(f->path) != 0 && !e) e = -errno;
    if (f->lockpath) unlink(f->lockpath);
  }
  e = coll_agree(f->c, f->rank, e);
  if (atomic_fetch_sub(&f->sh->refs, 1) == 1) free(f->sh);
  unsigned idx = (unsigned)*fh & 0xffffffu;
  skn_rank_lock(me);
  skn_api_of(me)->files[idx] = NULL;
  skn_rank_unlock(me);
  int errh = f->errh;
  file_free(me, f);
  *fh = MPI_FILE_NULL;
  if (e) {
    /* the handle is gone: report through the handler the file had */
    skn_api_rank *api = skn_api_of(me);
    int saved = api->file_errh;
    api->file_errh = errh;
    rc = ferr_errno(me, MPI_FILE_NULL, e, fn, "closing the file");
    api->file_errh = saved;
    return rc;
  }
  return MPI_SUCCESS;
}

/* Errors go to MPI_FILE_NULL's handler (no file handle). */
static int impl_File_delete(skn_rank *me, const char *fn, const char *filename, MPI_Info info, skn_info *i) {
  if (unlink(filename) != 0) return ferr_errno(me, MPI_FILE_NULL, -errno, fn, filename);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ size, info, group, mode */

static int writable(skn_rank *me, skn_file *f, MPI_File fh, const char *fn) {
  if (f->amode & MPI_MODE_RDONLY) return ferr(me, fh, MPI_ERR_READ_ONLY, fn, "the file was opened MPI_MODE_RDONLY");
  return MPI_SUCCESS;
}

static int impl_File_set_size(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset size) {
  int rc;
  if (size < 0) return ferr(me, fh, MPI_ERR_ARG, fn, "negative size");
  if ((rc = writable(me, f, fh, fn))) return rc;
  if (f->amode & MPI_MODE_SEQUENTIAL)
    return ferr(me, fh, MPI_ERR_UNSUPPORTED_OPERATION, fn, "the file was opened MPI_MODE_SEQUENTIAL");
  int e = 0;
  skn_coll_barrier(NULL, f->c); /* writes of every member come first */
  if (f->rank == 0 && ftruncate(f->fd, (off_t)size) != 0) e = -errno;
  e = coll_agree(f->c, f->rank, e);
  return e ? ferr_errno(me, fh, e, fn, "ftruncate") : MPI_SUCCESS;
}

static int impl_File_preallocate(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset size) {
  int rc;
  if (size < 0) return ferr(me, fh, MPI_ERR_ARG, fn, "negative size");
  if ((rc = writable(me, f, fh, fn))) return rc;
  if (f->amode & MPI_MODE_SEQUENTIAL)
    return ferr(me, fh, MPI_ERR_UNSUPPORTED_OPERATION, fn, "the file was opened MPI_MODE_SEQUENTIAL");
  int e = 0;
  if (f->rank == 0 && size > 0) {
    e = -posix_fallocate(f->fd, 0, (off_t)size);
    if (e == -EOPNOTSUPP || e == -EINVAL) { /* no fallocate here: make sure the size is reached */
      struct stat st;
      e = 0;
      if (fstat(f->fd, &st) != 0) e = -errno;
      else if (st.st_size < size && ftruncate(f->fd, (off_t)size) != 0) e = -errno;
    }
  }
  e = coll_agree(f->c, f->rank, e);
  return e ? ferr_errno(me, fh, e, fn, "fallocate") : MPI_SUCCESS;
}

static int impl_File_get_size(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset *size) {
  struct stat st;
  if (fstat(f->fd, &st) != 0) return ferr_errno(me, fh, -errno, fn, "fstat");
  *size = st.st_size;
  return MPI_SUCCESS;
}

static int impl_File_get_group(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Group *group) {
  return PMPI_Comm_group(f->comm, group);
}

static int impl_File_get_amode(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, int *amode) {
  *amode = f->amode;
  return MPI_SUCCESS;
}

static int impl_File_set_info(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Info info, skn_info *info_i) {
  hints_apply(f, info);
  return MPI_SUCCESS;
}

static int impl_File_get_info(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Info *info_used) {
  int rc;
  MPI_Info i;
  if ((rc = PMPI_Info_create(&i)) != MPI_SUCCESS) return rc;
  static const char *const modes[] = {"automatic", "enable", "disable"};
  char v[64];
  snprintf(v, sizeof v, "%zu", f->cb_buffer_size);
  PMPI_Info_set(i, "cb_buffer_size", v);
  snprintf(v, sizeof v, "%d", cb_nodes_eff(f));
  PMPI_Info_set(i, "cb_nodes", v);
  PMPI_Info_set(i, "romio_cb_read", modes[f->cb_read]);
  PMPI_Info_set(i, "romio_cb_write", modes[f->cb_write]);
  if (f->striping_factor) {
    snprintf(v, sizeof v, "%d", f->striping_factor);
    PMPI_Info_set(i, "striping_factor", v);
  }
  if (f->striping_unit) {
    snprintf(v, sizeof v, "%d", f->striping_unit);
    PMPI_Info_set(i, "striping_unit", v);
  }
  if (f->access_style[0]) PMPI_Info_set(i, "access_style", f->access_style);
  *info_used = i;
  return MPI_SUCCESS;
}

static int impl_File_sync(skn_rank *me, const char *fn, MPI_File fh, skn_file *f) {
  int e = 0;
  if (!(f->amode & MPI_MODE_RDONLY) && fsync(f->fd) != 0) e = -errno;
  e = coll_agree(f->c, f->rank, e); /* also orders every member's writes before the others' later reads */
  return e ? ferr_errno(me, fh, e, fn, "fsync") : MPI_SUCCESS;
}

static int impl_File_set_atomicity(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, int flag) {
  f->atomic = flag != 0;
  skn_coll_barrier(NULL, f->c);
  return MPI_SUCCESS;
}

static int impl_File_get_atomicity(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, int *flag) {
  *flag = f->atomic;
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ data representations */

static const skn_datarep *datarep_find(skn_rank *me, const char *name) {
  pthread_mutex_lock(&datareps_lock);
  const skn_datarep *d = datareps;
  while (d && (d->owner != me->world_rank || strcmp(d->name, name))) d = d->next;
  pthread_mutex_unlock(&datareps_lock);
  return d;
}

/* Errors go to MPI_FILE_NULL's handler (no file handle); the entry checked the pointers. */
static int impl_Register_datarep(skn_rank *me, const char *fn, const char *name, MPI_Datarep_conversion_function *rd,
                                 MPI_Datarep_conversion_function *wr, MPI_Datarep_extent_function *extent,
                                 void *extra) {
  if (strlen(name) >= MPI_MAX_DATAREP_STRING)
    return skn_api_error(me, MPI_FILE_NULL, MPI_ERR_ARG, fn, "datarep is longer than MPI_MAX_DATAREP_STRING - 1");
  if (!strcmp(name, "native") || !strcmp(name, "internal") || !strcmp(name, "external32") ||
      datarep_find(me, name))
    return skn_api_error(me, MPI_FILE_NULL, MPI_ERR_DUP_DATAREP, fn, "data representation '%s' exists", name);
  skn_datarep *d = calloc(1, sizeof *d);
  if (!d) return skn_api_error(me, MPI_FILE_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
  d->owner = me->world_rank;
  snprintf(d->name, sizeof d->name, "%s", name);
  d->rd = rd;
  d->wr = wr;
  d->extent = extent;
  d->extra = extra;
  pthread_mutex_lock(&datareps_lock);
  d->next = datareps;
  datareps = d;
  pthread_mutex_unlock(&datareps_lock);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ views */

static skn_io_view view_of(const skn_file *f) { return (skn_io_view){f->disp, f->ft}; }

/* Data bytes of the view before file offset `at` (the position end of file maps to). */
static int64_t view_bytes_before(const skn_file *f, int64_t at) {
  if (at <= f->disp) return 0;
  int64_t rel = at - f->disp;
  const skn_dtype *ft = f->ft;
  if (ft->contig || ft->extent <= 0) return rel;
  int64_t inst = rel / ft->extent, rem = rel % ft->extent, b = inst * (int64_t)ft->size;
  for (int i = 0; i < ft->nblocks; i++) {
    int64_t in = rem - ft->blocks[i].off;
    if (in <= 0) break;
    b += in < (int64_t)ft->blocks[i].len ? in : (int64_t)ft->blocks[i].len;
  }
  return b;
}

static int64_t eof_position(const skn_file *f) { /* in etypes */
  struct stat st;
  if (fstat(f->fd, &st) != 0) return 0;
  int64_t es = f->et->size ? (int64_t)f->et->size : 1;
  return (view_bytes_before(f, st.st_size) + es - 1) / es;
}

static int64_t shared_get(skn_file *f);
static void shared_set(skn_file *f, int64_t v);

static int keep_type(MPI_Datatype h, MPI_Datatype *mine) {
  if ((unsigned)(h & 0xffffff) < SKN_DT_PREDEFINED_COUNT) {
    *mine = h;
    return MPI_SUCCESS;
  }
  return PMPI_Type_dup(h, mine);
}

/* The entry found the file and the committed types and checked datarep and info. */
static int impl_File_set_view(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset disp,
                              MPI_Datatype etype, const skn_dtype *et, MPI_Datatype filetype, const skn_dtype *ft,
                              const char *datarep, MPI_Info info, skn_info *inf) {
  int rc;
  if (et->size == 0 || ft->size % et->size)
    return ferr(me, fh, MPI_ERR_TYPE, fn, "the filetype is not made of whole etypes");
  for (int i = 0; i < ft->nblocks; i++)
    if (ft->blocks[i].off < 0 || (i && ft->blocks[i].off < ft->blocks[i - 1].off + (ptrdiff_t)ft->blocks[i - 1].len))
      return ferr(me, fh, MPI_ERR_TYPE, fn, "filetype displacements must be non-negative and increasing");
  if (ft->extent <= 0) return ferr(me, fh, MPI_ERR_TYPE, fn, "the filetype's extent must be positive");
  int rep;
  const skn_datarep *u = NULL;
  if (!strcmp(datarep, "native")) rep = REP_NATIVE;
  else if (!strcmp(datarep, "internal")) rep = REP_INTERNAL;
  else if (!strcmp(datarep, "external32")) rep = REP_EXTERNAL32;
  else if ((u = datarep_find(me, datarep))) rep = REP_USER;
  else return ferr(me, fh, MPI_ERR_UNSUPPORTED_DATAREP, fn, "unknown data representation");
  if (rep == REP_EXTERNAL32 && (!external_same(et, 1) || !external_same(ft, 1)))
    return ferr(me, fh, MPI_ERR_UNSUPPORTED_DATAREP, fn, EXTERNAL_NARROW);
  if (disp == MPI_DISPLACEMENT_CURRENT) {
    if (!(f->amode & MPI_MODE_SEQUENTIAL))
      return ferr(me, fh, MPI_ERR_ARG, fn, "MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL");
    disp = skn_io_byte_offset(&(skn_io_view){f->disp, f->ft}, shared_get(f) * (int64_t)f->et->size);
  } else if (disp < 0) {
    return ferr(me, fh, MPI_ERR_ARG, fn, "negative displacement");
  }
  if (f->split_active) return ferr(me, fh, MPI_ERR_OTHER, fn, "a split collective is in progress");
  MPI_Datatype ne, nf;
  if ((rc = keep_type(etype, &ne)) != MPI_SUCCESS) return rc;
  if ((rc = keep_type(filetype, &nf)) != MPI_SUCCESS) return rc;
  if ((unsigned)(f->etype & 0xffffff) >= SKN_DT_PREDEFINED_COUNT) PMPI_Type_free(&f->etype);
  if ((unsigned)(f->ftype & 0xffffff) >= SKN_DT_PREDEFINED_COUNT) PMPI_Type_free(&f->ftype);
  f->etype = ne;
  f->ftype = nf;
  f->et = skn_api_dtype(me, ne);
  f->ft = skn_api_dtype(me, nf);
  f->disp = disp;
  f->rep = rep;
  f->urep = u;
  snprintf(f->repname, sizeof f->repname, "%s", datarep);
  f->fp = 0;
  hints_apply(f, info);
  skn_coll_barrier(NULL, f->c); /* every member is done with the old shared pointer */
  if (f->rank == 0) shared_set(f, 0);
  skn_coll_barrier(NULL, f->c);
  return MPI_SUCCESS;
}

static int impl_File_get_view(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset *disp,
                              MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep) {
  int rc;
  *disp = f->disp;
  if ((rc = keep_type(f->etype, etype)) != MPI_SUCCESS) return rc;
  if ((rc = keep_type(f->ftype, filetype)) != MPI_SUCCESS) return rc;
  strcpy(datarep, f->repname);
  return MPI_SUCCESS;
}

static int impl_File_get_type_extent(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Datatype datatype,
                                     const skn_dtype *t, MPI_Aint *extent) {
  if (f->rep == REP_USER) return f->urep->extent(datatype, extent, f->urep->extra);
  if (f->rep == REP_EXTERNAL32 && !external_same(t, 1))
    return ferr(me, fh, MPI_ERR_UNSUPPORTED_DATAREP, fn, EXTERNAL_NARROW);
  *extent = t->extent; /* the other types have their native sizes in external32 */
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ file pointers */

/* Sets (or clears) an open-file-description byte-range lock. A rank's thread that can
 * switch does not wait in the kernel: it tries, and sleeps in the scheduler between tries
 * (20 us doubling to 1 ms), so its worker runs its other ranks while the holder (a rank
 * of another worker or process, busy with its I/O) finishes. Other threads (nonblocking
 * I/O's, OpenMP regions) wait in the kernel. */
static int ofd_lock(int fd, short type, int64_t start, int64_t len) {
  struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
  skn_unit *me = skn_sched_self();
  if (type != F_UNLCK && me && skn_sched_can_switch(me)) {
    for (uint64_t ns = 20000; fcntl(fd, F_OFD_SETLK, &fl) != 0; ns = ns < 1000000 ? ns * 2 : ns) {
      if (errno != EAGAIN && errno != EACCES && errno != EINTR) return -errno;
      skn_sched_sleep_until(me, skn_now_ns() + ns);
    }
    return 0;
  }
  while (fcntl(fd, F_OFD_SETLKW, &fl) != 0)
    if (errno != EINTR) return -errno;
  return 0;
}

/* Shared file pointer: an atomic in the process when the communicator is all here,
 * else a counter in a side file under a byte-range lock. */
static int shfp_lock(skn_file *f, short type) { return ofd_lock(f->lockfd, type, 0, 8); }

static int64_t shared_get(skn_file *f) {
  if (f->lockfd < 0) return atomic_load(&f->sh->shfp);
  int64_t v = 0;
  size_t got;
  shfp_lock(f, F_RDLCK);
  skn_io_pread_full(f->lockfd, &v, sizeof v, 0, &got);
  shfp_lock(f, F_UNLCK);
  return v;
}

static void shared_set(skn_file *f, int64_t v) {
  if (f->lockfd < 0) {
    atomic_store(&f->sh->shfp, v);
    return;
  }
  shfp_lock(f, F_WRLCK);
  skn_io_pwrite_full(f->lockfd, &v, sizeof v, 0);
  shfp_lock(f, F_UNLCK);
}

static int64_t shared_fetch_add(skn_file *f, int64_t d) {
  if (f->lockfd < 0) return atomic_fetch_add(&f->sh->shfp, d);
  int64_t v = 0;
  size_t got;
  shfp_lock(f, F_WRLCK);
  skn_io_pread_full(f->lockfd, &v, sizeof v, 0, &got);
  int64_t nv = v + d;
  skn_io_pwrite_full(f->lockfd, &nv, sizeof nv, 0);
  shfp_lock(f, F_UNLCK);
  return v;
}

static int seek_target(skn_rank *me, skn_file *f, MPI_File fh, const char *fn, int64_t cur, MPI_Offset offset,
                       int whence, int64_t *out) {
  int64_t base;
  switch (whence) {
    case MPI_SEEK_SET: base = 0; break;
    case MPI_SEEK_CUR: base = cur; break;
    case MPI_SEEK_END: base = eof_position(f); break;
    default: return ferr(me, fh, MPI_ERR_ARG, fn, "invalid whence");
  }
  if (base + offset < 0) return ferr(me, fh, MPI_ERR_ARG, fn, "the position would be negative");
  *out = base + offset;
  return MPI_SUCCESS;
}

static int impl_File_seek(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset, int whence) {
  int rc;
  if (f->amode & MPI_MODE_SEQUENTIAL)
    return ferr(me, fh, MPI_ERR_UNSUPPORTED_OPERATION, fn, "the file was opened MPI_MODE_SEQUENTIAL");
  int64_t t;
  if ((rc = seek_target(me, f, fh, fn, f->fp, offset, whence, &t))) return rc;
  f->fp = t;
  return MPI_SUCCESS;
}

static int impl_File_get_position(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset *offset) {
  if (f->amode & MPI_MODE_SEQUENTIAL)
    return ferr(me, fh, MPI_ERR_UNSUPPORTED_OPERATION, fn, "the file was opened MPI_MODE_SEQUENTIAL");
  *offset = f->fp;
  return MPI_SUCCESS;
}

static int impl_File_get_byte_offset(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset,
                                     MPI_Offset *disp) {
  if (offset < 0) return ferr(me, fh, MPI_ERR_ARG, fn, "negative offset");
  skn_io_view vw = view_of(f);
  *disp = skn_io_byte_offset(&vw, offset * (int64_t)f->et->size);
  return MPI_SUCCESS;
}

static int impl_File_seek_shared(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset,
                                 int whence) {
  int rc;
  int64_t t = 0;
  rc = seek_target(me, f, fh, fn, shared_get(f), offset, whence, &t);
  skn_coll_barrier(NULL, f->c); /* every member has read the old value */
  if (!rc && f->rank == 0) shared_set(f, t);
  skn_coll_barrier(NULL, f->c);
  return rc;
}

static int impl_File_get_position_shared(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset *offset) {
  *offset = shared_get(f);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ data io_access */

enum { AT_EXPLICIT, AT_INDIVIDUAL, AT_SHARED, AT_ORDERED };

/* One prepared access: the file pieces and the memory they come from or go to. With a
 * conversion (external32, user representations) `mem` is a contiguous staging buffer in
 * the file's representation, converted to or from the user's layout. */
typedef struct io_access {
  skn_io_task task;
  skn_io_pieces ps;
  int fd;
  bool wr, atomic;
  void *mem;
  const skn_dtype *mt;
  void *user;            /* the caller's buffer when staging */
  size_t count;
  const skn_dtype *ut;   /* its type */
  MPI_Datatype uth;      /* its handle (user representations) */
  int rep;
  const skn_datarep *urep;
  int64_t spos;          /* first data byte of the access (user representations: position) */
  int64_t moved;
  int err;               /* -errno */
  skn_req *req;          /* nonblocking */
  bool staged;
} io_access;

/* Locks the access's byte range in atomic mode: one open file description per rank, so
 * the locks separate ranks of this process as well as other processes. A holder never
 * yields between lock and unlock, so a rank waiting here waits for a running unit. */
static int range_lock(io_access *a, short type) {
  if (!a->atomic || !a->ps.n) return 0;
  int64_t lo = a->ps.p[0].off, hi = a->ps.p[a->ps.n - 1].off + a->ps.p[a->ps.n - 1].len;
  return ofd_lock(a->fd, type, lo, hi - lo);
}

/* Converts staged file-representation data to the user's layout (reads). */
static int convert_in(io_access *a) {
  if (!a->staged) return 0;
  if (a->rep == REP_EXTERNAL32) {
    if (skn_dt_unpack_external(a->user, a->count, a->ut, a->mem) != SKN_OK) return -EINVAL;
    return 0;
  }
  if (a->urep->rd && a->urep->rd(a->user, a->uth, (int)a->count, a->mem, 0, a->urep->extra) != MPI_SUCCESS)
    return -EINVAL;
  return 0;
}

static void access_run(io_access *a) {
  int rc = range_lock(a, a->wr ? F_WRLCK : F_RDLCK);
  if (!rc) {
    rc = skn_io_rw(a->fd, a->wr, a->ps.p, a->ps.n, a->mem, a->mt, IO_BOUNCE, &a->moved);
    range_lock(a, F_UNLCK);
  }
  if (!rc && !a->wr) rc = convert_in(a);
  a->err = rc;
}

static void access_free(io_access *a) {
  skn_io_pieces_free(&a->ps);
  if (a->staged) free(a->mem);
}

static void task_run(skn_io_task *t) {
  io_access *a = (io_access *)t;
  access_run(a);
  skn_req *r = a->req;
  r->bytes = a->err ? 0 : (size_t)a->moved;
  r->io_err = a->err ? errno_class(a->err) : 0;
  access_free(a);
  free(a);
  skn_req_complete(r);
}

/* Checks the arguments of a data access and prepares it (pieces, staging). */
static int prepare(skn_rank *me, const char *fn, skn_file *f, MPI_File fh, int where, MPI_Offset offset,
                   const void *buf, int count, MPI_Datatype dt, bool wr, io_access *a) {
  memset(a, 0, sizeof *a);
  if (count < 0) return ferr(me, fh, MPI_ERR_COUNT, fn, "negative count");
  const skn_dtype *t = skn_api_dtype(me, dt);
  if (!t) return ferr(me, fh, MPI_ERR_TYPE, fn, skn_api_dtype_any(me, dt) ? "the datatype is not committed"
                                                                         : "the datatype is not valid");
  if (wr && (f->amode & MPI_MODE_RDONLY)) return ferr(me, fh, MPI_ERR_READ_ONLY, fn, "the file was opened MPI_MODE_RDONLY");
  if (!wr && (f->amode & MPI_MODE_WRONLY)) return ferr(me, fh, MPI_ERR_ACCESS, fn, "the file was opened MPI_MODE_WRONLY");
  if ((f->amode & MPI_MODE_SEQUENTIAL) && where != AT_SHARED && where != AT_ORDERED)
    return ferr(me, fh, MPI_ERR_UNSUPPORTED_OPERATION, fn, "the file was opened MPI_MODE_SEQUENTIAL");
  if (where == AT_EXPLICIT && offset < 0) return ferr(me, fh, MPI_ERR_ARG, fn, "negative offset");
  if ((uint64_t)count * t->size % f->et->size)
    return ferr(me, fh, MPI_ERR_TYPE, fn, "the access is not a whole number of etypes");
  if (!buf && count > 0 && t->size > 0 && !(t->flags & SKN_DT_DERIVED))
    return ferr(me, fh, MPI_ERR_BUFFER, fn, "buf is NULL");
  int64_t bytes = (int64_t)count * (int64_t)t->size;
  a->fd = f->fd;
  a->wr = wr;
  a->atomic = f->atomic;
  a->mem = (void *)(uintptr_t)buf;
  a->mt = t;
  a->user = a->mem;
  a->count = (size_t)count;
  a->ut = t;
  a->uth = dt;
  a->rep = f->rep;
  a->urep = f->urep;
  if (bytes && f->rep == REP_EXTERNAL32 && !external_same(t, (size_t)count))
    return ferr(me, fh, MPI_ERR_UNSUPPORTED_DATAREP, fn, EXTERNAL_NARROW);
  if (bytes && (f->rep == REP_EXTERNAL32 || f->rep == REP_USER)) {
    if (f->rep == REP_USER && !(wr ? f->urep->wr : f->urep->rd) && !(t->flags & SKN_DT_DERIVED)) {
      /* MPI_CONVERSION_FN_NULL: the data is native */
    } else {
      if (f->rep == REP_USER && (t->flags & SKN_DT_DERIVED))
        return ferr(me, fh, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                    "user data representations convert predefined datatypes only");
      a->mem = malloc((size_t)bytes);
      if (!a->mem) return ferr(me, fh, MPI_ERR_NO_MEM, fn, "out of memory for conversion");
      a->staged = true;
      a->mt = predef(MPI_BYTE);
      if (wr) {
        int ok = f->rep == REP_EXTERNAL32
                     ? skn_dt_pack_external(a->mem, buf, (size_t)count, t) == SKN_OK
                     : f->urep->wr((void *)(uintptr_t)buf, dt, count, a->mem, 0, f->urep->extra) == MPI_SUCCESS;
        if (!ok) {
          free(a->mem);
          return ferr(me, fh, MPI_ERR_CONVERSION, fn, "the data cannot be converted");
        }
      }
    }
  }
  int64_t es = (int64_t)f->et->size;
  switch (where) {
    case AT_EXPLICIT: a->spos = offset * es; break;
    case AT_INDIVIDUAL: a->spos = f->fp * es; break;
    case AT_SHARED: a->spos = shared_fetch_add(f, bytes / es) * es; break;
    case AT_ORDERED: a->spos = offset * es; break;
  }
  skn_io_view vw = view_of(f);
  if (skn_io_map(&vw, a->spos, bytes, 0, &a->ps) != 0) {
    access_free(a);
    return ferr(me, fh, MPI_ERR_NO_MEM, fn, "out of memory");
  }
  return MPI_SUCCESS;
}

static void set_status(MPI_Status *st, int64_t bytes) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->MPI_ERROR = MPI_SUCCESS;
  st->skn_cancelled = 0;
  st->skn_bytes = bytes;
}

/* Whether a collective access goes through the aggregators. Atomic mode takes the
 * independent path, whose byte-range locks give the standard's guarantees. */
static bool aggregated(const skn_file *f, bool wr) {
  int mode = wr ? f->cb_write : f->cb_read;
  return mode != CB_DISABLE && !f->atomic;
}

static int finish(skn_rank *me, const char *fn, skn_file *f, MPI_File fh, io_access *a, int where, MPI_Status *st) {
  int e = a->err;
  int64_t moved = a->moved;
  access_free(a);
  if (e) {
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = errno_class(e);
    return ferr_errno(me, fh, e, fn, a->wr ? "write" : "read");
  }
  if (where == AT_INDIVIDUAL) f->fp += moved / (int64_t)f->et->size;
  set_status(st, moved);
  return MPI_SUCCESS;
}

static int run_blocking(skn_rank *me, const char *fn, skn_file *f, MPI_File fh, int where, MPI_Offset offset,
                        const void *buf, int count, MPI_Datatype dt, bool wr, bool coll, MPI_Status *st) {
  io_access a;
  int rc = prepare(me, fn, f, fh, where, offset, buf, count, dt, wr, &a);
  if (rc) {
    /* a collective still meets the others, who may have no error */
    if (coll && aggregated(f, wr)) {
      int lrank = 0;
      int64_t moved;
      skn_io_part none = {0};
      skn_io_coll_hints h = {.aggregators = f->cb_nodes, .buffer = f->cb_buffer_size, .align = 1};
      skn_io_coll(local_comm(f, &lrank), lrank, f->fd, wr, &none, &h, &moved);
      if (f->c->x) skn_coll_barrier(NULL, f->c);
    } else if (coll) {
      skn_coll_barrier(NULL, f->c);
    }
    return rc;
  }
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, 0);
  if (coll && aggregated(f, wr)) {
    int lrank;
    skn_comm *l = local_comm(f, &lrank);
    skn_io_part part = {.p = a.ps.p, .n = a.ps.n, .buf = a.mem, .mt = a.mt};
    skn_io_coll_hints h = {.aggregators = f->cb_nodes, .buffer = f->cb_buffer_size,
                           .align = f->striping_unit ? (size_t)f->striping_unit : (size_t)1 << 20,
                           .cache = &f->cbuf, .cache_len = &f->cbuf_len};
    a.err = skn_io_coll(l, lrank, f->fd, wr, &part, &h, &a.moved);
    if (!a.err && !wr) a.err = convert_in(&a);
    /* the other processes' aggregators too: a collective write is in the file for
     * every member when the call returns */
    if (f->c->x) skn_coll_barrier(NULL, f->c);
  } else {
    access_run(&a);
    if (coll) skn_coll_barrier(NULL, f->c); /* collective completion, as with aggregation */
  }
  skn_api_leave(me);
  return finish(me, fn, f, fh, &a, where, st);
}

static int run_nonblocking(skn_rank *me, const char *fn, skn_file *f, MPI_File fh, int where, MPI_Offset offset,
                           const void *buf, int count, MPI_Datatype dt, bool wr, MPI_Request *req) {
  if (!req) return ferr(me, fh, MPI_ERR_ARG, fn, "request is NULL");
  io_access *a = malloc(sizeof *a);
  if (!a) return ferr(me, fh, MPI_ERR_NO_MEM, fn, "out of memory");
  int rc = prepare(me, fn, f, fh, where, offset, buf, count, dt, wr, a);
  if (rc) {
    free(a);
    return rc;
  }
  skn_req *r = skn_req_alloc(me);
  if (!r) {
    access_free(a);
    free(a);
    return ferr(me, fh, MPI_ERR_NO_MEM, fn, "out of memory for a request");
  }
  r->kind = SKN_REQ_SEND; /* completes without a message status */
  r->comm = fh;           /* errors go to the file's handler */
  r->st_src = MPI_ANY_SOURCE;
  r->st_tag = MPI_ANY_TAG;
  r->origin = fn;
  r->origin_peer = MPI_UNDEFINED;
  r->dt = a->ut; /* keeps a derived memory type alive until the request is freed */
  r->count = a->count;
  r->handle_live = true;
  a->req = r;
  /* the individual pointer moves now, by what the access asks for */
  if (where == AT_INDIVIDUAL) f->fp += (int64_t)a->count * (int64_t)a->ut->size / (int64_t)f->et->size;
  a->task.run = task_run;
  *req = skn_req_handle(r);
  if (skn_io_submit(&a->task) != 0) task_run(&a->task); /* no I/O thread: do it now */
  return MPI_SUCCESS;
}

/* The data accesses: one line each over the two drivers above, called by the entry points
 * generated from runtime/binding/functions.txt (entries_file.h, included after them), which
 * found the rank, the open file and checked the count; the drivers check the rest. */
static skn_file *skn_api_file(skn_rank *me, MPI_File h) { return file_get(me, h); }

static int impl_File_read_at(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset, void *buf,
                             int count, MPI_Datatype dt, MPI_Status *st) {
  return run_blocking(me, fn, f, fh, AT_EXPLICIT, offset, buf, count, dt, false, false, st);
}
static int impl_File_read_at_all(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset, void *buf,
                                 int count, MPI_Datatype dt, MPI_Status *st) {
  return run_blocking(me, fn, f, fh, AT_EXPLICIT, offset, buf, count, dt, false, true, st);
}
static int impl_File_write_at(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset, const void *buf,
                              int count, MPI_Datatype dt, MPI_Status *st) {
  return run_blocking(me, fn, f, fh, AT_EXPLICIT, offset, buf, count, dt, true, false, st);
}
static int impl_File_write_at_all(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset,
                                  const void *buf, int count, MPI_Datatype dt, MPI_Status *st) {
  return run_blocking(me, fn, f, fh, AT_EXPLICIT, offset, buf, count, dt, true, true, st);
}
static int impl_File_read(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, int count, MPI_Datatype dt,
                          MPI_Status *st) {
  return run_blocking(me, fn, f, fh, AT_INDIVIDUAL, 0, buf, count, dt, false, false, st);
}
static int impl_File_read_all(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, int count,
                              MPI_Datatype dt, MPI_Status *st) {
  return run_blocking(me, fn, f, fh, AT_INDIVIDUAL, 0, buf, count, dt, false, true, st);
}
static int impl_File_write(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf, int count,
                           MPI_Datatype dt, MPI_Status *st) {
  return run_blocking(me, fn, f, fh, AT_INDIVIDUAL, 0, buf, count, dt, true, false, st);
}
static int impl_File_write_all(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf, int count,
                               MPI_Datatype dt, MPI_Status *st) {
  return run_blocking(me, fn, f, fh, AT_INDIVIDUAL, 0, buf, count, dt, true, true, st);
}
static int impl_File_read_shared(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, int count,
                                 MPI_Datatype dt, MPI_Status *st) {
  return run_blocking(me, fn, f, fh, AT_SHARED, 0, buf, count, dt, false, false, st);
}
static int impl_File_write_shared(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf, int count,
                                  MPI_Datatype dt, MPI_Status *st) {
  return run_blocking(me, fn, f, fh, AT_SHARED, 0, buf, count, dt, true, false, st);
}

static int impl_File_iread_at(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset, void *buf,
                              int count, MPI_Datatype dt, MPI_Request *req) {
  return run_nonblocking(me, fn, f, fh, AT_EXPLICIT, offset, buf, count, dt, false, req);
}
static int impl_File_iwrite_at(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset,
                               const void *buf, int count, MPI_Datatype dt, MPI_Request *req) {
  return run_nonblocking(me, fn, f, fh, AT_EXPLICIT, offset, buf, count, dt, true, req);
}
/* Nonblocking collectives move each member's own pieces on the I/O threads: collective
 * I/O may be carried out as independent I/O, and this one progresses while ranks
 * compute without any of them driving it. */
static int impl_File_iread_at_all(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset, void *buf,
                                  int count, MPI_Datatype dt, MPI_Request *req) {
  return run_nonblocking(me, fn, f, fh, AT_EXPLICIT, offset, buf, count, dt, false, req);
}
static int impl_File_iwrite_at_all(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset,
                                   const void *buf, int count, MPI_Datatype dt, MPI_Request *req) {
  return run_nonblocking(me, fn, f, fh, AT_EXPLICIT, offset, buf, count, dt, true, req);
}
static int impl_File_iread(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, int count, MPI_Datatype dt,
                           MPI_Request *req) {
  return run_nonblocking(me, fn, f, fh, AT_INDIVIDUAL, 0, buf, count, dt, false, req);
}
static int impl_File_iwrite(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf, int count,
                            MPI_Datatype dt, MPI_Request *req) {
  return run_nonblocking(me, fn, f, fh, AT_INDIVIDUAL, 0, buf, count, dt, true, req);
}
static int impl_File_iread_all(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, int count,
                               MPI_Datatype dt, MPI_Request *req) {
  return run_nonblocking(me, fn, f, fh, AT_INDIVIDUAL, 0, buf, count, dt, false, req);
}
static int impl_File_iwrite_all(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf, int count,
                                MPI_Datatype dt, MPI_Request *req) {
  return run_nonblocking(me, fn, f, fh, AT_INDIVIDUAL, 0, buf, count, dt, true, req);
}
static int impl_File_iread_shared(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, int count,
                                  MPI_Datatype dt, MPI_Request *req) {
  return run_nonblocking(me, fn, f, fh, AT_SHARED, 0, buf, count, dt, false, req);
}
static int impl_File_iwrite_shared(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf, int count,
                                   MPI_Datatype dt, MPI_Request *req) {
  return run_nonblocking(me, fn, f, fh, AT_SHARED, 0, buf, count, dt, true, req);
}

/* Ordered access: the members' data follow each other in rank order from the shared
 * pointer, which moves past all of it; the access itself is collective. */
static int ordered_offset(skn_file *f, int count, const skn_dtype *t, int64_t *offset) {
  int64_t mine = t ? (int64_t)count * (int64_t)t->size / (int64_t)f->et->size : 0;
  int64_t stack[64], *all = f->c->size <= 64 ? stack : malloc((size_t)f->c->size * sizeof *all);
  if (!all) skn_fatal("out of memory in an ordered file access");
  coll_allgather_i64(f->c, f->rank, mine, all);
  int64_t before = 0, total = 0;
  for (int i = 0; i < f->c->size; i++) {
    if (i < f->rank) before += all[i];
    total += all[i];
  }
  if (all != stack) free(all);
  int64_t base = 0;
  if (f->rank == 0) base = shared_fetch_add(f, total);
  coll_bcast(f->c, f->rank, &base, sizeof base, 0);
  *offset = base + before;
  return MPI_SUCCESS;
}

static int ordered(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, int count, MPI_Datatype dt,
                   bool wr, MPI_Status *st, MPI_Request *split) {
  const skn_dtype *t = count >= 0 ? skn_api_dtype(me, dt) : NULL;
  int64_t off;
  ordered_offset(f, count, t && (uint64_t)count * t->size % f->et->size == 0 ? t : NULL, &off);
  if (split) return run_nonblocking(me, fn, f, fh, AT_ORDERED, off, buf, count, dt, wr, split);
  return run_blocking(me, fn, f, fh, AT_ORDERED, off, buf, count, dt, wr, true, st);
}

static int impl_File_read_ordered(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, int count,
                                  MPI_Datatype dt, MPI_Status *st) {
  return ordered(me, fn, fh, f, buf, count, dt, false, st, NULL);
}
static int impl_File_write_ordered(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf, int count,
                                   MPI_Datatype dt, MPI_Status *st) {
  return ordered(me, fn, fh, f, (void *)(uintptr_t)buf, count, dt, true, st, NULL);
}

/* ------------------------------------------------------------------ split collectives
 * The begin call starts the access on the I/O threads; the end call waits for it. */

static int split_begin(skn_rank *me, const char *fn, skn_file *f, MPI_File fh) {
  if (f->split_active) return ferr(me, fh, MPI_ERR_OTHER, fn, "a split collective is already active on the file");
  return MPI_SUCCESS;
}

static int split_end(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Status *st) {
  if (!f->split_active) return ferr(me, fh, MPI_ERR_OTHER, fn, "no split collective is active on the file");
  f->split_active = false;
  return PMPI_Wait(&f->split, st);
}

#define SPLIT_BEGIN(where, offset, wr)                                                              \
  int rc = split_begin(me, fn, f, fh);                                                         \
  if (rc) return rc;                                                                           \
  rc = run_nonblocking(me, fn, f, fh, where, offset, (void *)(uintptr_t)buf, count, dt, wr, &f->split); \
  f->split_active = rc == MPI_SUCCESS;                                                         \
  return rc

static int impl_File_read_at_all_begin(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset,
                                       void *buf, int count, MPI_Datatype dt) {
  SPLIT_BEGIN(AT_EXPLICIT, offset, false);
}
static int impl_File_write_at_all_begin(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Offset offset,
                                        const void *buf, int count, MPI_Datatype dt) {
  SPLIT_BEGIN(AT_EXPLICIT, offset, true);
}
static int impl_File_read_all_begin(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, int count,
                                    MPI_Datatype dt) {
  SPLIT_BEGIN(AT_INDIVIDUAL, 0, false);
}
static int impl_File_write_all_begin(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf, int count,
                                     MPI_Datatype dt) {
  SPLIT_BEGIN(AT_INDIVIDUAL, 0, true);
}

static int ordered_begin(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, int count,
                         MPI_Datatype dt, bool wr) {
  int rc = split_begin(me, fn, f, fh);
  if (rc) return rc;
  rc = ordered(me, fn, fh, f, buf, count, dt, wr, NULL, &f->split);
  f->split_active = rc == MPI_SUCCESS;
  return rc;
}
static int impl_File_read_ordered_begin(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, int count,
                                        MPI_Datatype dt) {
  return ordered_begin(me, fn, fh, f, buf, count, dt, false);
}
static int impl_File_write_ordered_begin(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf,
                                         int count, MPI_Datatype dt) {
  return ordered_begin(me, fn, fh, f, (void *)(uintptr_t)buf, count, dt, true);
}

static int impl_File_read_at_all_end(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf,
                                     MPI_Status *st) {
  return split_end(me, fn, fh, f, st);
}
static int impl_File_write_at_all_end(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf,
                                      MPI_Status *st) {
  return split_end(me, fn, fh, f, st);
}
static int impl_File_read_all_end(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf, MPI_Status *st) {
  return split_end(me, fn, fh, f, st);
}
static int impl_File_write_all_end(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf,
                                   MPI_Status *st) {
  return split_end(me, fn, fh, f, st);
}
static int impl_File_read_ordered_end(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, void *buf,
                                      MPI_Status *st) {
  return split_end(me, fn, fh, f, st);
}
static int impl_File_write_ordered_end(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, const void *buf,
                                       MPI_Status *st) {
  return split_end(me, fn, fh, f, st);
}

/* ------------------------------------------------------------------ error handlers */

static int impl_File_create_errhandler(skn_rank *me, const char *fn, MPI_File_errhandler_function *efn,
                                       MPI_Errhandler *errhandler) {
  /* one table for both kinds: the handlers have the same shape (handles are ints) */
  return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)efn, errhandler);
}

/* fh may be MPI_FILE_NULL (f NULL): its handler is the one new files get. */
static int impl_File_set_errhandler(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, MPI_Errhandler errhandler,
                                    skn_errhandler *e) {
  if (f) f->errh = errhandler;
  else skn_api_of(me)->file_errh = errhandler;
  return MPI_SUCCESS;
}

static int impl_File_get_errhandler(skn_rank *me, const char *fn, MPI_File fh, skn_file *f,
                                    MPI_Errhandler *errhandler) {
  int h;
  *errhandler = skn_api_file_errhandler(me, fh, &h);
  return MPI_SUCCESS;
}

static int impl_File_call_errhandler(skn_rank *me, const char *fn, MPI_File fh, skn_file *f, int errorcode) {
  /* the handler gets the code itself, added ones included (as the communicator's) */
  int code = skn_api_valid_code(me, errorcode) ? errorcode : MPI_ERR_UNKNOWN;
  skn_api_error(me, fh, code, fn, "errorcode=%d", errorcode);
  skn_api_of(me)->eh_set = false; /* returns MPI_SUCCESS whatever the handler left */
  return MPI_SUCCESS;
}

#include "entries_file.h"
