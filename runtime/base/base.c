/* Base utilities: locks, futexes, time, logging, environment parsing. */
#define _GNU_SOURCE
#include "base.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void skn_spin_lock_slow(skn_spinlock *l) {
  for (unsigned spins = 0;; spins++) {
    while (atomic_load_explicit(&l->held, memory_order_relaxed)) {
      if (++spins > 256) {
        sched_yield();
        spins = 0;
      } else {
        skn_cpu_relax();
      }
    }
    if (!atomic_exchange_explicit(&l->held, 1, memory_order_acquire)) return;
  }
}

bool skn_futex_wait(_Atomic uint32_t *word, uint32_t expected, long timeout_ns) {
  struct timespec ts, *tsp = NULL;
  if (timeout_ns >= 0) {
    ts.tv_sec = timeout_ns / 1000000000L;
    ts.tv_nsec = timeout_ns % 1000000000L;
    tsp = &ts;
  }
  long rc = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, tsp, NULL, 0);
  return !(rc == -1 && errno == ETIMEDOUT);
}

void skn_futex_wake(_Atomic uint32_t *word, int nwaiters) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, nwaiters, NULL, NULL, 0);
}

uint64_t skn_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void vlog(const char *fmt, va_list ap) {
  char buf[1024];
  int n = snprintf(buf, sizeof buf, "skein: ");
  n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
  if (n > (int)sizeof buf - 2) n = (int)sizeof buf - 2;
  buf[n++] = '\n';
  ssize_t rc = write(STDERR_FILENO, buf, (size_t)n);
  (void)rc;
}

void skn_log(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(fmt, ap);
  va_end(ap);
}

void skn_fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(fmt, ap);
  va_end(ap);
  fflush(NULL);
  _exit(1);
}

void skn_write_str(const char *s) {
  ssize_t rc = write(STDERR_FILENO, s, strlen(s));
  (void)rc;
}

void skn_write_long(long v) {
  char buf[24];
  int i = (int)sizeof buf;
  bool neg = v < 0;
  unsigned long u = neg ? 0ul - (unsigned long)v : (unsigned long)v;
  do {
    buf[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (neg) buf[--i] = '-';
  ssize_t rc = write(STDERR_FILENO, buf + i, sizeof buf - (size_t)i);
  (void)rc;
}

static const char *env_raw(const char *name) {
  char key[128];
  snprintf(key, sizeof key, "SKEIN_%s", name);
  const char *v = getenv(key);
  return (v && *v) ? v : NULL;
}

long long skn_env_size(const char *name, long long dflt) {
  const char *v = env_raw(name);
  if (!v) return dflt;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  int shift = 0;
  switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
  }
  if (*end == 'i' || *end == 'B') end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
  if (errno || end == v || *end || x < 0 || x > (LLONG_MAX >> shift))
    skn_fatal("SKEIN_%s=%s is not a size (examples: 65536, 64k, 8M, 1G)", name, v);
  return x << shift;
}

long long skn_env_int(const char *name, long long dflt) {
  const char *v = env_raw(name);
  if (!v) return dflt;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || end == v || *end) skn_fatal("SKEIN_%s=%s is not an integer", name, v);
  return x;
}

/* mpi.h's errno (exported: programs call it): the calling kernel thread's, looked up at
 * each call, because a rank may have moved to another thread since its last look. */
SKN_EXPORT int *skein_errno_location(void);
int *skein_errno_location(void) { return &errno; }
