/* Base utilities: locks, futexes, time, logging, environment parsing. */
#define _GNU_SOURCE
#include "base.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
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
  skn_flush_stdio();
  skn_flush_stdio_wait();
  _exit(1);
}

/* fflush(NULL) takes each stream's lock in turn, and a user thread can hold one for ever
 * (fgets on a pipe holds stdin's while it waits): a report path that called it hung the
 * job silently. stdout and stderr, whose order against the report matters, are flushed
 * at once when their locks are free; the other streams by fflush(NULL) on a helper
 * thread, which skn_flush_stdio_wait waits for at most FLUSH_WAIT_MS before the process
 * ends (it may stay blocked, holding libc's list of streams: nothing uses stdio after). */
#define FLUSH_WAIT_MS 200
static _Atomic int flush_state; /* 0 none, 1 a helper flushing, 2 it finished */

static void *flush_all(void *unused) {
  (void)unused;
  fflush(NULL);
  atomic_store(&flush_state, 2);
  return NULL;
}

void skn_flush_stdio(void) {
  FILE *std[2] = {stdout, stderr};
  for (int i = 0; i < 2; i++)
    if (ftrylockfile(std[i]) == 0) {
      fflush_unlocked(std[i]);
      funlockfile(std[i]);
    }
  int st = atomic_load(&flush_state);
  if (st == 1 || !atomic_compare_exchange_strong(&flush_state, &st, 1)) return; /* one helper at most */
  /* libc's pthread_create: the runtime's would make the helper a thread of a rank */
  int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
      (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
  pthread_attr_t at;
  pthread_t t;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&at, 64 << 10);
  if (!create || create(&t, &at, flush_all, NULL) != 0) atomic_store(&flush_state, 0);
  pthread_attr_destroy(&at);
}

void skn_flush_stdio_wait(void) {
  for (int ms = 0; ms < FLUSH_WAIT_MS && atomic_load(&flush_state) == 1; ms++) {
    struct timespec ts = {0, 1000000};
    syscall(SYS_nanosleep, &ts, NULL); /* not the runtime's nanosleep, which switches ranks */
  }
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
