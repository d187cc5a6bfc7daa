/* One table per PMI backend; pmi.c picks one at init and calls through it. Backends fill
 * proc, nprocs and the node fields of skn_pmi_info; pmi.c adds the rank distribution.
 * Arguments reach a backend already checked (key syntax, value size, proc range). */
#ifndef SKN_PMI_BACKEND_H
#define SKN_PMI_BACKEND_H

#include "pmi/pmi.h"

typedef struct skn_pmi_backend {
  const char *name;
  int (*init)(skn_pmi_info *info);
  int (*put)(const char *key, const void *value, size_t len);
  int (*fence)(void);
  int (*get)(int proc, const char *key, void **value, size_t *len);
  int (*node_of)(int proc);
  void (*abort)(int code, const char *msg); /* returns only if it could not reach the launcher */
  int (*finalize)(void);
} skn_pmi_backend;

SKN_INTERNAL extern const skn_pmi_backend skn_pmi_skein_backend;
SKN_INTERNAL extern const skn_pmi_backend skn_pmi_pmix_backend;
SKN_INTERNAL extern const skn_pmi_backend skn_pmi_wire_backend;

/* Parses a non-negative decimal int; false on anything else (sign, junk, overflow). */
SKN_INTERNAL bool skn_pmi_parse_int(const char *s, int *out);
/* Reads env var `name` as a non-negative int: 1 found, 0 unset, -1 malformed (logged). */
SKN_INTERNAL int skn_pmi_env_int(const char *name, int *out);

#endif
