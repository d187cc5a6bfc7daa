/* Base utilities shared by every runtime layer: visibility, branch hints, spin locks,
 * futex wrappers, fatal errors. Depends on nothing else in Skein. */
#ifndef SKN_BASE_H
#define SKN_BASE_H

#ifdef __cplusplus
/* C++ unit tests include these headers: map C11 atomics onto std::atomic, which has the
 * same size and representation for the integer and pointer types used here. */
#include <atomic>
#define _Atomic(T) std::atomic<T>
#define _Noreturn [[noreturn]]
using std::atomic_compare_exchange_strong;
using std::atomic_compare_exchange_weak;
using std::atomic_exchange;
using std::atomic_exchange_explicit;
using std::atomic_fetch_add;
using std::atomic_fetch_add_explicit;
using std::atomic_fetch_sub;
using std::atomic_load;
using std::atomic_load_explicit;
using std::atomic_store;
using std::atomic_store_explicit;
using std::memory_order_acquire;
using std::memory_order_relaxed;
using std::memory_order_release;
#else
#include <stdatomic.h>
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SKN_INTERNAL __attribute__((visibility("hidden")))
#define SKN_EXPORT __attribute__((visibility("default")))
#define SKN_LIKELY(x) __builtin_expect(!!(x), 1)
#define SKN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SKN_CACHELINE 64

static inline void skn_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* A statistic its owner updates (MPI_T counters): a relaxed load and store, no locked
 * instruction on the hot path. When two threads of one rank update it at the same
 * moment, one increment may be lost; readers never see a torn value. */
static inline void skn_stat_add(_Atomic(uint64_t) *c, uint64_t v) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v, memory_order_relaxed);
}

/* Test-and-test-and-set lock for short critical sections that never block or switch.
 * After a few hundred spins it yields the kernel thread: a holder may be a preempted
 * pthread of an oversubscribed hybrid program. */
typedef struct { _Atomic(uint32_t) held; } skn_spinlock;
#define SKN_SPINLOCK_INIT {0}
/* TSan: atomics made inside libtsan's blocking interceptors (sem_wait, pthread_join...,
 * which Skein turns into scheduler waits) are not seen as synchronization (libtsan's
 * ignore_interceptors), so the lock's ordering is also stated explicitly. */
#ifdef __SANITIZE_THREAD__
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define SKN_TSAN_ACQUIRE(p) __tsan_acquire((void *)(p))
#define SKN_TSAN_RELEASE(p) __tsan_release((void *)(p))
#else
#define SKN_TSAN_ACQUIRE(p) ((void)0)
#define SKN_TSAN_RELEASE(p) ((void)0)
#endif

SKN_INTERNAL void skn_spin_lock_slow(skn_spinlock *l);
static inline void skn_spin_lock(skn_spinlock *l) {
  if (SKN_UNLIKELY(atomic_exchange_explicit(&l->held, 1, memory_order_acquire))) skn_spin_lock_slow(l);
  SKN_TSAN_ACQUIRE(l);
}
static inline void skn_spin_unlock(skn_spinlock *l) {
  SKN_TSAN_RELEASE(l);
  atomic_store_explicit(&l->held, 0, memory_order_release);
}

/* futex on a 32-bit word; timeout_ns < 0 waits forever. Returns false on timeout. */
SKN_INTERNAL bool skn_futex_wait(_Atomic(uint32_t) *word, uint32_t expected, long timeout_ns);
SKN_INTERNAL void skn_futex_wake(_Atomic(uint32_t) *word, int nwaiters);

/* Monotonic time in nanoseconds. */
SKN_INTERNAL uint64_t skn_now_ns(void);

/* Prints "skein: <message>" on stderr with one write (async-signal-safe formatting is
 * not needed here; see skn_write_str for signal handlers). */
SKN_INTERNAL void skn_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
SKN_INTERNAL _Noreturn void skn_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Flushes the program's stdio output before a report that ends the process (deadlock,
 * watchdog, timeout, fatal error, MPI_Abort), never waiting for a lock a user thread may
 * hold for ever (a rank blocked in fgets holds stdin's): stdout and stderr now, the
 * other streams on a helper thread, which _wait waits for (bounded) just before the
 * process ends. See base.c. */
SKN_INTERNAL void skn_flush_stdio(void);
SKN_INTERNAL void skn_flush_stdio_wait(void);
/* Async-signal-safe: writes a string / an integer to stderr. */
SKN_INTERNAL void skn_write_str(const char *s);
SKN_INTERNAL void skn_write_long(long v);

/* Environment configuration: value of SKEIN_<name> parsed as a size ("8M", "64k") or
 * integer, or dflt when unset. Malformed values are fatal. */
SKN_INTERNAL long long skn_env_size(const char *name, long long dflt);
SKN_INTERNAL long long skn_env_int(const char *name, long long dflt);

#endif
