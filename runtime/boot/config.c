/* Start-up configuration from SKEIN_* environment variables (skeinrun sets them from
 * its flags; docs/user-guide.md lists them). */
#include <stdlib.h>
#include <string.h>

#include "sched/hwtopo.h"
#include "boot.h"

void skn_boot_read_config(skn_boot_config *c) {
  c->nranks = (int)skn_env_int("NP", 1);
  if (c->nranks < 1 || c->nranks > (1 << 20)) skn_fatal("SKEIN_NP=%d is out of range [1, 1048576]", c->nranks);
  c->nworkers = (int)skn_env_int("WORKERS", skn_hwtopo_ncores());
  if (c->nworkers < 1) skn_fatal("SKEIN_WORKERS must be at least 1");
  c->stack_size = (size_t)skn_env_size("STACK_SIZE", 8 << 20);
  if (c->stack_size < (64 << 10)) skn_fatal("SKEIN_STACK_SIZE must be at least 64k");
  /* About 0.5 ms of polling: a sender waiting while its peer copies a 2-16 MiB message
   * keeps spinning instead of sleeping and being woken (with 2000, 2 MiB ping-pong between
   * two ranks ran at 13 GB/s in one process and 8 GB/s over UCX sm; now 18 and 12.5). */
  c->spin_iters = (unsigned)skn_env_int("SPIN", 50000);
  c->bind = skn_env_int("BIND", 1) != 0;
  c->eager_limit = (size_t)skn_env_size("EAGER_LIMIT", 64 << 10);
  c->buffer_budget = (size_t)skn_env_size("BUFFER_BUDGET", 4 << 20);
  c->deadlock_ms = (unsigned)skn_env_int("DEADLOCK_MS", 1000);
  long t = skn_env_int("TIMEOUT", 0);
  if (t < 0) skn_fatal("SKEIN_TIMEOUT must be a number of seconds");
  c->timeout_s = (unsigned)t;
  const char *b = getenv("SKEIN_BALANCE");
  if (!b || !*b || !strcmp(b, "steal")) c->steal = true;
  else if (!strcmp(b, "off") || !strcmp(b, "0") || !strcmp(b, "none")) c->steal = false;
  else skn_fatal("SKEIN_BALANCE=%s: expected steal or off", b);
  c->schedstats = skn_env_int("SCHEDSTATS", 0) != 0;
}

