/* Start-up configuration, read from SKEIN_* variables (set by skeinrun's flags). */
#ifndef SKN_BOOT_H
#define SKN_BOOT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/base.h"

/* Exit code of a job ended by the deadlock detector. */
#define SKN_EXIT_DEADLOCK 70
/* Exit code of a job that ran past SKEIN_TIMEOUT (skeinrun --timeout, MPIEXEC_TIMEOUT). */
#define SKN_EXIT_TIMEOUT 124

typedef struct skn_boot_config {
  int nranks;           /* SKEIN_NP */
  int nworkers;         /* SKEIN_WORKERS (default: usable cores), at most nranks */
  size_t stack_size;    /* SKEIN_STACK_SIZE */
  unsigned spin_iters;  /* SKEIN_SPIN */
  bool bind;            /* SKEIN_BIND */
  size_t eager_limit;   /* SKEIN_EAGER_LIMIT */
  size_t buffer_budget; /* SKEIN_BUFFER_BUDGET */
  unsigned deadlock_ms; /* SKEIN_DEADLOCK_MS */
  unsigned timeout_s;   /* SKEIN_TIMEOUT: seconds, 0 = none */
  bool steal;           /* SKEIN_BALANCE=steal (default) or off */
  bool schedstats;      /* SKEIN_SCHEDSTATS */
} skn_boot_config;

SKN_INTERNAL void skn_boot_read_config(skn_boot_config *c);
/* SKEIN_SCHEDSTATS's report (boot/schedstats.c), after the scheduler ran for wall_ns. */
SKN_INTERNAL void skn_boot_sched_report(uint64_t wall_ns);

#endif
