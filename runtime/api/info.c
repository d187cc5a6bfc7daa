/* Info objects: per-rank ordered (key, value) lists; handle = SKN_HANDLE(SKN_KIND_INFO,
 * index into the rank's table), index 0 being MPI_INFO_NULL. Errors go to
 * MPI_COMM_SELF's handler, as for every object not attached to a communicator. */
#include <stdlib.h>
#include <string.h>

#include "objects.h"

static const skn_info *info_env(void);

static skn_info *info_get(skn_rank *me, MPI_Info h) {
  skn_api_rank *api = skn_api_of(me);
  if (h == MPI_INFO_ENV) return (skn_info *)info_env(); /* read-only: the setters refuse it */
  unsigned idx = (unsigned)h & 0xffffffu;
  if (((unsigned)h >> 24) != SKN_KIND_INFO || idx == 0) return NULL;
  skn_rank_lock(me);
  skn_info *i = idx < (unsigned)api->ninfos ? api->infos[idx] : NULL;
  skn_rank_unlock(me);
  return i;
}

static int err(skn_rank *me, int cls, const char *fn, const char *fmt, const char *detail) {
  return skn_api_error(me, SKN_API_NOOBJ, cls, fn, fmt, detail);
}

skn_info *skn_api_info(skn_rank *me, MPI_Info h) { return info_get(me, h); }

/* Checks a key the entry point found not NULL. */
static int check_key(skn_rank *me, const char *fn, const char *key) {
  size_t n = strnlen(key, MPI_MAX_INFO_KEY + 1);
  if (n == 0) return err(me, MPI_ERR_INFO_KEY, fn, "%s", "empty key");
  if (n > MPI_MAX_INFO_KEY) return err(me, MPI_ERR_INFO_KEY, fn, "key longer than MPI_MAX_INFO_KEY: %.40s...", key);
  return MPI_SUCCESS;
}

static int find(const skn_info *i, const char *key) {
  for (int k = 0; k < i->n; k++)
    if (!strcmp(i->keys[k], key)) return k;
  return -1;
}

static int nomem(skn_rank *me, const char *fn) {
  return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory for an info object");
}

static void info_free(skn_info *i) {
  for (int k = 0; k < i->n; k++) {
    free(i->keys[k]);
    free(i->vals[k]);
  }
  free(i->keys);
  free(i->vals);
  free(i);
}

/* Stores i in the rank's table; frees it on failure. */
static int info_add(skn_rank *me, const char *fn, skn_info *i, MPI_Info *out) {
  skn_api_rank *api = skn_api_of(me);
  skn_rank_lock(me);
  int idx;
  SKN_TABLE_SLOT(api->infos, api->ninfos, 1, idx);
  if (idx == 0) SKN_TABLE_SLOT(api->infos, api->ninfos, 1, idx); /* index 0 is MPI_INFO_NULL */
  if (idx >= 0) api->infos[idx] = i;
  skn_rank_unlock(me);
  if (idx < 0) {
    info_free(i);
    return nomem(me, fn);
  }
  *out = SKN_HANDLE(SKN_KIND_INFO, idx);
  return MPI_SUCCESS;
}

/* Appends (key, value), both copied; false when out of memory. */
static bool append(skn_info *i, const char *key, const char *val) {
  if (i->n == i->cap) {
    int cap = i->cap ? 2 * i->cap : 8;
    char **k = realloc(i->keys, sizeof *k * (size_t)cap);
    if (!k) return false;
    i->keys = k;
    char **v = realloc(i->vals, sizeof *v * (size_t)cap);
    if (!v) return false;
    i->vals = v;
    i->cap = cap;
  }
  char *k = strdup(key), *v = strdup(val);
  if (!k || !v) {
    free(k);
    free(v);
    return false;
  }
  i->keys[i->n] = k;
  i->vals[i->n++] = v;
  return true;
}

/* The impl_ functions below are called by the entry points generated from
 * runtime/binding/functions.txt (entries_info.h), which have found the calling rank (any
 * time: the Info functions are allowed outside MPI_Init .. MPI_Finalize) and checked the
 * handles, pointers and strings. */

static int impl_Info_create(skn_rank *me, const char *fn, MPI_Info *info) {
  skn_info *i = calloc(1, sizeof *i);
  if (!i) return nomem(me, fn);
  return info_add(me, fn, i, info);
}

static int impl_Info_set(skn_rank *me, const char *fn, MPI_Info info, skn_info *i, const char *key, const char *value) {
  int rc = check_key(me, fn, key);
  if (rc != MPI_SUCCESS) return rc;
  if (info == MPI_INFO_ENV) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_INFO, fn, "MPI_INFO_ENV is read-only");
  if (strnlen(value, MPI_MAX_INFO_VAL + 1) > MPI_MAX_INFO_VAL)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_INFO_VALUE, fn, "value of key '%s' longer than MPI_MAX_INFO_VAL",
                         key);
  int k = find(i, key);
  if (k >= 0) {
    char *v = strdup(value);
    if (!v) return nomem(me, fn);
    free(i->vals[k]);
    i->vals[k] = v;
    return MPI_SUCCESS;
  }
  return append(i, key, value) ? MPI_SUCCESS : nomem(me, fn);
}

static int impl_Info_get(skn_rank *me, const char *fn, MPI_Info info, skn_info *i, const char *key, int valuelen,
                         char *value, int *flag) {
  int rc = check_key(me, fn, key);
  if (rc != MPI_SUCCESS) return rc;
  if (valuelen < 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "valuelen=%d", valuelen);
  int k = find(i, key);
  *flag = k >= 0;
  if (k >= 0) { /* truncated to valuelen characters (the buffer holds valuelen + 1) */
    size_t n = strlen(i->vals[k]);
    if (n > (size_t)valuelen) n = (size_t)valuelen;
    memcpy(value, i->vals[k], n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}

static int impl_Info_get_valuelen(skn_rank *me, const char *fn, MPI_Info info, skn_info *i, const char *key,
                                  int *valuelen, int *flag) {
  int rc = check_key(me, fn, key);
  if (rc != MPI_SUCCESS) return rc;
  int k = find(i, key);
  *flag = k >= 0;
  if (k >= 0) *valuelen = (int)strlen(i->vals[k]);
  return MPI_SUCCESS;
}

static int impl_Info_get_nkeys(skn_rank *me, const char *fn, MPI_Info info, skn_info *i, int *nkeys) {
  *nkeys = i->n;
  return MPI_SUCCESS;
}

static int impl_Info_get_nthkey(skn_rank *me, const char *fn, MPI_Info info, skn_info *i, int n, char *key) {
  if (n < 0 || n >= i->n)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "n=%d (the info object has %d keys)", n, i->n);
  strcpy(key, i->keys[n]); /* at most MPI_MAX_INFO_KEY characters, checked by Info_set */
  return MPI_SUCCESS;
}

static int impl_Info_delete(skn_rank *me, const char *fn, MPI_Info info, skn_info *i, const char *key) {
  int rc = check_key(me, fn, key);
  if (rc != MPI_SUCCESS) return rc;
  if (info == MPI_INFO_ENV) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_INFO, fn, "MPI_INFO_ENV is read-only");
  int k = find(i, key);
  if (k < 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_INFO_NOKEY, fn, "key '%s' is not set", key);
  free(i->keys[k]);
  free(i->vals[k]);
  memmove(i->keys + k, i->keys + k + 1, sizeof(char *) * (size_t)(i->n - k - 1));
  memmove(i->vals + k, i->vals + k + 1, sizeof(char *) * (size_t)(i->n - k - 1));
  i->n--;
  return MPI_SUCCESS;
}

static int impl_Info_dup(skn_rank *me, const char *fn, MPI_Info info, skn_info *i, MPI_Info *newinfo) {
  skn_info *d = calloc(1, sizeof *d);
  if (!d) return nomem(me, fn);
  for (int k = 0; k < i->n; k++)
    if (!append(d, i->keys[k], i->vals[k])) {
      info_free(d);
      return nomem(me, fn);
    }
  return info_add(me, fn, d, newinfo);
}

static int impl_Info_free(skn_rank *me, const char *fn, MPI_Info *info) {
  skn_api_rank *api = skn_api_of(me);
  unsigned idx = (unsigned)*info & 0xffffffu;
  skn_info *i = NULL;
  skn_rank_lock(me);
  if (((unsigned)*info >> 24) == SKN_KIND_INFO && idx > 0 && idx < (unsigned)api->ninfos) {
    i = api->infos[idx];
    api->infos[idx] = NULL;
  }
  skn_rank_unlock(me);
  if (!i) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_INFO, fn, "info=%#x is not a valid info object", (unsigned)*info);
  info_free(i);
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ MPI-4.0 Info_get_string */

static int impl_Info_get_string(skn_rank *me, const char *fn, MPI_Info info, skn_info *i, const char *key, int *buflen,
                                char *value, int *flag) {
  int rc = check_key(me, fn, key);
  if (rc != MPI_SUCCESS) return rc;
  if (*buflen < 0 || (*buflen > 0 && !value))
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "buflen=%d, value=%p", *buflen, (void *)value);
  int k = find(i, key);
  *flag = k >= 0;
  if (k < 0) return MPI_SUCCESS;
  size_t n = strlen(i->vals[k]);
  if (*buflen > 0) { /* truncated to buflen - 1 characters and the terminator */
    size_t m = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
    memcpy(value, i->vals[k], m);
    value[m] = '\0';
  }
  *buflen = (int)n + 1; /* what the whole value needs */
  return MPI_SUCCESS;
}

#include "entries_info.h"

/* ------------------------------------------------------------------ MPI_INFO_ENV
 * Built once per process from what the job was started with (the same for every rank of
 * the process; ranks of other processes have the same command and arguments). */

#include <pthread.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

static skn_info env_info;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void env_build(void) {
  char buf[4096];
  /* command and argv: from /proc/self/cmdline (NUL-separated) */
  FILE *f = fopen("/proc/self/cmdline", "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  buf[n] = '\0';
  if (n > 0) {
    append(&env_info, "command", buf);
    char args[MPI_MAX_INFO_VAL + 1];
    size_t a = 0;
    for (size_t p = strlen(buf) + 1; p < n; p += strlen(buf + p) + 1) {
      int w = snprintf(args + a, sizeof args - a, "%s%s", a ? " " : "", buf + p);
      if (w < 0 || (size_t)w >= sizeof args - a) break;
      a += (size_t)w;
    }
    if (a) append(&env_info, "argv", args);
  }
  snprintf(buf, sizeof buf, "%d", skn_job_g.size);
  append(&env_info, "maxprocs", buf);
  if (gethostname(buf, sizeof buf) == 0) {
    buf[sizeof buf - 1] = '\0';
    append(&env_info, "host", buf);
  }
  struct utsname u;
  if (uname(&u) == 0) append(&env_info, "arch", u.machine);
  if (getcwd(buf, sizeof buf)) append(&env_info, "wdir", buf);
  static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                       "MPI_THREAD_MULTIPLE"};
  int lvl = skn_job_g.thread_level_max;
  append(&env_info, "thread_level", levels[lvl >= 0 && lvl <= 3 ? lvl : 3]);
  /* "soft" and "file" describe how MPI_Comm_spawn-style launches were asked for: unset */
}

static const skn_info *info_env(void) {
  pthread_once(&env_once, env_build);
  return &env_info;
}

/* ------------------------------------------------------------------ info kept by objects */

skn_info *skn_info_clone(const skn_info *src) {
  if (!src) return NULL;
  skn_info *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  for (int k = 0; k < src->n; k++)
    if (!append(d, src->keys[k], src->vals[k])) {
      info_free(d);
      return NULL;
    }
  return d;
}

void skn_info_destroy(skn_info *i) {
  if (i) info_free(i);
}

int skn_info_copy_handle(skn_rank *me, const char *fn, MPI_Info h, skn_info **out) {
  *out = NULL;
  if (h == MPI_INFO_NULL) return MPI_SUCCESS;
  skn_info *i = info_get(me, h);
  if (!i) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_INFO, fn, "info=%#x is not a valid info object", (unsigned)h);
  return (*out = skn_info_clone(i)) ? MPI_SUCCESS : nomem(me, fn);
}

int skn_info_new_handle(skn_rank *me, const char *fn, const skn_info *src, MPI_Info *out) {
  if (!out) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "info_used=NULL");
  skn_info *d = src ? skn_info_clone(src) : calloc(1, sizeof *d);
  if (!d) return nomem(me, fn);
  return info_add(me, fn, d, out);
}
