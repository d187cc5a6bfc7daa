/* Blocking libc calls made by a rank outside MPI become scheduler waits.
 *
 * A rank's main thread is a user-level thread sharing its worker's kernel thread with
 * other ranks. When it blocks in the kernel (pthread_join on its own threads, a condition
 * variable, a sleep...), the worker's other ranks cannot run, and when those are the ones
 * it waits for, the job hangs silently. So, as MPC's thread library does, libskein.so
 * interposes these calls: on a ULT that may switch (not inside an OpenMP region) and when
 * called from the program (not from Skein or the libraries it drives, which must not
 * switch in the middle of their own locking) they wait in the scheduler instead:
 *
 *  - sleep, usleep, nanosleep, clock_nanosleep: a timed wait (the worker runs others);
 *  - pthread_join of a thread the rank created: woken when the thread ends;
 *  - pthread_cond_wait/timedwait: woken by pthread_cond_signal/broadcast (interposed;
 *    POSIX lets a wait return spuriously, so waking every ULT waiter is allowed);
 *  - contended pthread_mutex_lock, sem_wait/timedwait: woken by pthread_mutex_unlock and
 *    sem_post, with a polling back-off too (glibc unlocks internally, e.g. in a kernel
 *    thread's pthread_cond_wait, without calling the exported function);
 *  - poll, select, read of pipes and sockets, waitpid, pthread_join of other threads:
 *    polled with zero timeout, with a back-off from 20 us to 5 ms between tries.
 * A ULT that holds a lock whose owner libc records by kernel thread (a recursive, error-
 * checking, robust or priority mutex; a write-locked rwlock) is pinned to its worker until
 * it unlocks: libc checks the owner on unlock, and the scheduler may otherwise move the
 * ULT to another worker's kernel thread meanwhile (sched.h, "Moves").
 * Precise waits (join, condition variables) leave deadlock detection on: a rank blocked
 * in them is named in the report. Polled waits keep a deadline pending, which tells the
 * scheduler that the rank will run again. Anything else that blocks a worker in the
 * kernel is caught by the scheduler's watchdog (boot.c reports it).
 *
 * Elsewhere (adopted threads, OpenMP regions, before start-up) libc's own runs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "interpose.h"
#include "blocking.h"

/* ------------------------------------------------------------------ helpers */


/* Whether the code at `ra` belongs to the program rather than to Skein or a library it
 * drives (UCX, jemalloc...): those keep per-kernel-thread state across their locks and
 * must never see another ULT run in the middle. The answer is cached per call site, so
 * that a contended lock or a sleep pays for dladdr (which takes the loader's lock) once
 * per site, not once per call. */
#define CALLER_CACHE 64 /* call sites, direct-mapped; a collision only costs a dladdr */
static struct {
  /* return address with the answer in bit 0: two return addresses are a call instruction
   * (2 bytes or more) apart, so the bit never tells two sites apart */
  _Atomic(uintptr_t) site[CALLER_CACHE];
} CC;

static bool caller_lookup(const void *ra) {
  Dl_info info;
  if (!dladdr(ra, &info) || !info.dli_fbase) return false;
  static const char *const runtime_libs[] = {"libskein", "libucs", "libucp", "libuct", "libucm",
                                             "libjemalloc", "libhwloc", "libpmix", "libnuma",
                                             "libgomp", "libpmi"};
  const char *name = info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
  name = name ? name + 1 : (info.dli_fname ? info.dli_fname : "");
  for (size_t i = 0; i < sizeof runtime_libs / sizeof *runtime_libs; i++)
    if (!strncmp(name, runtime_libs[i], strlen(runtime_libs[i]))) return false;
  return true;
}

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
/* Under TSan and ASan calls of an interposed function (all of them under TSan; poll, read
 * and others under ASan), the program's as well as Skein's and UCX's own, reach it through
 * the sanitizer's interceptor (its runtime comes first in the lookup order), so the return
 * address is the sanitizer's. The caller that decides is the first frame outside the
 * sanitizer runtime above it: found by unwinding (eh_frame), paid only in sanitized builds.
 * (ASan: PMI's read of its socket, under the PMI lock, became a scheduler wait, and the next
 * rank on that worker blocked the worker on that lock for ever: ring_n4_p2_w1 hung.) */
#include <link.h>
#include <unwind.h>

#ifdef __SANITIZE_THREAD__
void __tsan_func_entry(void *pc);
#define SAN_ANCHOR ((void *)__tsan_func_entry)
#else
void __asan_init(void);
#define SAN_ANCHOR ((void *)__asan_init)
#endif
static uintptr_t san_lo, san_hi; /* the sanitizer runtime's loaded segments, [lo, hi) */

static int san_range_cb(struct dl_phdr_info *info, size_t size, void *base) {
  (void)size;
  if (info->dlpi_addr != (uintptr_t)base) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (!san_lo || lo < san_lo) san_lo = lo;
    if (hi > san_hi) san_hi = hi;
  }
  return 1;
}

static void san_range_init(void) {
  Dl_info info;
  if (dladdr(SAN_ANCHOR, &info) && info.dli_fbase) dl_iterate_phdr(san_range_cb, info.dli_fbase);
}

static bool in_san(uintptr_t a) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, san_range_init);
  return a >= san_lo && a < san_hi;
}

typedef struct {
  uintptr_t caller;
  bool seen_san;
} san_walk;

static _Unwind_Reason_Code san_walk_cb(struct _Unwind_Context *ctx, void *arg) {
  san_walk *w = arg;
  uintptr_t ip = _Unwind_GetIP(ctx);
  if (in_san(ip)) w->seen_san = true;
  else if (w->seen_san) {
    w->caller = ip;
    return _URC_END_OF_STACK;
  }
  return _URC_NO_REASON;
}

/* The return address into the interceptor's caller, or ra when ra is not the sanitizer's. */
static const void *real_caller(const void *ra) {
  if (!in_san((uintptr_t)ra)) return ra;
  san_walk w = {0, false};
  _Unwind_Backtrace(san_walk_cb, &w);
  return w.caller ? (const void *)w.caller : ra;
}
#else
static inline const void *real_caller(const void *ra) { return ra; }
#endif

static bool user_caller(const void *ra) {
  ra = real_caller(ra);
  uintptr_t a = (uintptr_t)ra & ~(uintptr_t)1;
  _Atomic(uintptr_t) *slot = &CC.site[(a >> 2) % CALLER_CACHE];
  uintptr_t v = atomic_load_explicit(slot, memory_order_relaxed);
  if ((v & ~(uintptr_t)1) == a) return v & 1;
  bool allow = caller_lookup(ra);
  atomic_store_explicit(slot, a | (uintptr_t)allow, memory_order_relaxed);
  return allow;
}

/* The calling unit when the call at `ra` may become a scheduler wait, else NULL. */
static inline skn_unit *switchable(const void *ra) {
  skn_unit *me = skn_sched_self();
  if (!me || !skn_sched_can_switch(me) || !me->owner) return NULL;
  return user_caller(ra) ? me : NULL;
}

static uint64_t ts_to_ns(const struct timespec *ts) {
  return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/* skn_now_ns() deadline for an absolute time on `clock`. */
static uint64_t deadline_of(clockid_t clock, const struct timespec *abs) {
  struct timespec now;
  clock_gettime(clock, &now);
  uint64_t a = ts_to_ns(abs), n = ts_to_ns(&now);
  return skn_now_ns() + (a > n ? a - n : 0);
}

/* One back-off step of a polled wait: lets the worker run others for 20 us .. 5 ms. */
static void backoff(skn_unit *me, unsigned *step, uint64_t deadline) {
  uint64_t d = 20000ull << (*step < 8 ? *step : 8);
  if (d > 5000000) d = 5000000;
  (*step)++;
  uint64_t until = skn_now_ns() + d;
  skn_sched_sleep_until(me, deadline && deadline < until ? deadline : until);
}

/* ------------------------------------------------------------------ object waits
 * ULTs waiting for an object (a condition variable, mutex, semaphore, thread) are listed
 * by the object's address; the function that changes the object wakes them. Nodes live
 * on the waiter's stack. */

typedef struct obj_waiter {
  const void *obj;
  skn_unit *unit;
  struct obj_waiter *next;
  _Atomic(bool) woken; /* set last by the waker: the node may vanish after */
} obj_waiter;

#define OW_BUCKETS 64
static struct {
  skn_spinlock lock;
  obj_waiter *head;
} OW[OW_BUCKETS];
static _Atomic(int) ow_count;

static inline unsigned ow_bucket(const void *obj) { return (unsigned)(((uintptr_t)obj >> 4) * 0x9E3779B1u) % OW_BUCKETS; }

static void ow_add(obj_waiter *n, const void *obj, skn_unit *me) {
  n->obj = obj;
  n->unit = me;
  atomic_store(&n->woken, false);
  unsigned b = ow_bucket(obj);
  skn_spin_lock(&OW[b].lock);
  n->next = OW[b].head;
  OW[b].head = n;
  atomic_fetch_add(&ow_count, 1); /* seq_cst: a waker's later look at the count sees it */
  skn_spin_unlock(&OW[b].lock);
}

/* Takes n off its list unless a waker did; then waits for the waker to be done with it. */
static void ow_remove(obj_waiter *n) {
  unsigned b = ow_bucket(n->obj);
  skn_spin_lock(&OW[b].lock);
  for (obj_waiter **pp = &OW[b].head; *pp; pp = &(*pp)->next) {
    if (*pp == n) {
      *pp = n->next;
      atomic_fetch_sub(&ow_count, 1);
      skn_spin_unlock(&OW[b].lock);
      return;
    }
  }
  skn_spin_unlock(&OW[b].lock);
  while (!atomic_load(&n->woken)) skn_cpu_relax();
  SKN_TSAN_ACQUIRE(&n->woken); /* base.h: we may be inside a TSan interceptor */
}

static void ow_wake(const void *obj) {
  if (SKN_LIKELY(atomic_load(&ow_count) == 0)) return;
  unsigned b = ow_bucket(obj);
  obj_waiter *woken = NULL;
  skn_spin_lock(&OW[b].lock);
  for (obj_waiter **pp = &OW[b].head; *pp;) {
    obj_waiter *n = *pp;
    if (n->obj == obj) {
      *pp = n->next;
      atomic_fetch_sub(&ow_count, 1);
      n->next = woken;
      woken = n;
    } else {
      pp = &n->next;
    }
  }
  skn_spin_unlock(&OW[b].lock);
  while (woken) {
    obj_waiter *next = woken->next;
    skn_unit *u = woken->unit;
    SKN_TSAN_RELEASE(&woken->woken);
    atomic_store(&woken->woken, true);
    skn_sched_wake(u); /* units are never freed */
    woken = next;
  }
}

/* Waits until n is woken or the deadline (0: none) passes; returns whether woken. The
 * unit is named as blocked in `what` meanwhile (deadlock reports). */
static bool ow_block(skn_unit *me, obj_waiter *n, uint64_t deadline, const char *what) {
  me->blocked_in = what;
  bool woken;
  for (;;) {
    skn_sched_prepare_wait(me);
    if ((woken = atomic_load(&n->woken))) {
      SKN_TSAN_ACQUIRE(&n->woken); /* base.h: we may be inside a TSan interceptor */
      break;
    }
    if (deadline && skn_now_ns() >= deadline) break;
    if (deadline) skn_sched_wait_until(me, deadline);
    else skn_sched_wait(me);
  }
  skn_sched_done_waiting(me);
  me->blocked_in = NULL;
  if (!woken) ow_remove(n);
  return woken;
}

/* ------------------------------------------------------------------ sleeping */

static void sleep_ns(skn_unit *me, uint64_t ns) {
  me->blocked_in = "sleep";
  skn_sched_sleep_until(me, skn_now_ns() + ns);
  me->blocked_in = NULL;
}

SKN_EXPORT unsigned sleep(unsigned s) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me) return SKN_REAL(sleep)(s);
  sleep_ns(me, (uint64_t)s * 1000000000u);
  return 0;
}

SKN_EXPORT int usleep(useconds_t us) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me) return SKN_REAL(usleep)(us);
  sleep_ns(me, (uint64_t)us * 1000u);
  return 0;
}

SKN_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me || !req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000 || req->tv_sec < 0)
    return SKN_REAL(nanosleep)(req, rem);
  sleep_ns(me, ts_to_ns(req));
  if (rem) *rem = (struct timespec){0, 0};
  return 0;
}

SKN_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me || !req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000 ||
      (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME && clock != CLOCK_BOOTTIME))
    return SKN_REAL(clock_nanosleep)(clock, flags, req, rem);
  me->blocked_in = "sleep";
  if (flags & TIMER_ABSTIME) skn_sched_sleep_until(me, deadline_of(clock, req));
  else if (req->tv_sec >= 0) skn_sched_sleep_until(me, skn_now_ns() + ts_to_ns(req));
  me->blocked_in = NULL;
  if (rem && !(flags & TIMER_ABSTIME)) *rem = (struct timespec){0, 0};
  return 0;
}

/* ------------------------------------------------------------------ threads */

/* Threads created by ranks (boot.c), until joined: a joiner waits for `ended`. */
typedef struct skn_rank_thread {
  pthread_t thread;
  _Atomic(bool) ended;
  struct skn_rank_thread *next;
} skn_rank_thread;

static skn_spinlock threads_lock;
static skn_rank_thread *threads_head;

skn_rank_thread *skn_blocking_thread_new(void) { return calloc(1, sizeof(skn_rank_thread)); }

void skn_blocking_thread_started(skn_rank_thread *t, pthread_t id) {
  t->thread = id;
  skn_spin_lock(&threads_lock);
  t->next = threads_head;
  threads_head = t;
  skn_spin_unlock(&threads_lock);
}

/* The thread's last act as a rank thread (its thread-specific data destructor). */
void skn_blocking_thread_ended(skn_rank_thread *t) {
  atomic_store(&t->ended, true);
  ow_wake(t);
}

static skn_rank_thread *thread_take(pthread_t id) {
  skn_spin_lock(&threads_lock);
  skn_rank_thread *t = NULL;
  for (skn_rank_thread **pp = &threads_head; *pp; pp = &(*pp)->next) {
    if (pthread_equal((*pp)->thread, id)) {
      t = *pp;
      *pp = t->next;
      break;
    }
  }
  skn_spin_unlock(&threads_lock);
  return t;
}

SKN_EXPORT int pthread_join(pthread_t id, void **ret) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me) return SKN_REAL(pthread_join)(id, ret);
  skn_rank_thread *t = thread_take(id);
  if (t) {
    obj_waiter n;
    ow_add(&n, t, me);
    if (atomic_load(&t->ended)) ow_remove(&n);
    else ow_block(me, &n, 0, "pthread_join");
    free(t);
    /* past its last act as a rank thread: libc's join waits only for its exit */
    return SKN_REAL(pthread_join)(id, ret);
  }
  unsigned step = 0;
  int rc;
  me->blocked_in = "pthread_join";
  while ((rc = pthread_tryjoin_np(id, ret)) == EBUSY) backoff(me, &step, 0);
  me->blocked_in = NULL;
  return rc;
}

/* ------------------------------------------------------------------ mutexes, conditions */

/* Whether libc checks m's owner thread on unlock (glibc's kind bits: the type in the low
 * two, then robust, priority-inherit and priority-protect). Normal and adaptive mutexes
 * may be unlocked from another thread: those need no pin. */
static inline bool owner_checked(const pthread_mutex_t *m) {
  int k = m->__data.__kind;
  return (k & 3) == PTHREAD_MUTEX_RECURSIVE || (k & 3) == PTHREAD_MUTEX_ERRORCHECK || (k & 0x70);
}

/* The calling ULT, which a lock it now holds pins (see the top of the file), or NULL. */
static inline skn_unit *lock_holder(void) {
  skn_unit *me = skn_sched_self();
  return me && me->kind == SKN_UNIT_ULT ? me : NULL;
}

static inline void lock_pin(skn_unit *me) {
  me->lock_pins++;
  skn_sched_pin(me);
}
static inline void lock_unpin(skn_unit *me) {
  me->lock_pins--;
  skn_sched_unpin(me);
}

static inline int mutex_locked(pthread_mutex_t *m, int rc) {
  skn_unit *me;
  if (rc == 0 && (me = lock_holder()) && SKN_UNLIKELY(owner_checked(m))) lock_pin(me);
  return rc;
}

/* Contended lock on a ULT: short spin (the holder may be a kernel thread in a short
 * critical section), then scheduler waits woken by an unlock, polling now and then. */
static int mutex_lock_wait(skn_unit *me, pthread_mutex_t *m) {
  int rc;
  for (int i = 0; i < 64; i++) {
    if ((rc = SKN_REAL(pthread_mutex_trylock)(m)) != EBUSY) return rc;
    skn_cpu_relax();
  }
  unsigned step = 0;
  for (;;) {
    obj_waiter n;
    ow_add(&n, m, me);
    if ((rc = SKN_REAL(pthread_mutex_trylock)(m)) != EBUSY) {
      ow_remove(&n);
      return rc;
    }
    uint64_t d = 20000ull << (step < 8 ? step : 8);
    step++;
    ow_block(me, &n, skn_now_ns() + (d < 5000000 ? d : 5000000), "pthread_mutex_lock");
  }
}

/* libc's trylock and unlock are called directly, not through the lookup scope: under TSan
 * that reaches libtsan's interceptors again, which saw the outer call already ("double lock
 * of a mutex"). */
SKN_EXPORT int pthread_mutex_lock(pthread_mutex_t *m) {
  int rc = SKN_REAL(pthread_mutex_trylock)(m);
  if (SKN_LIKELY(rc != EBUSY)) return mutex_locked(m, rc);
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me) return mutex_locked(m, SKN_REAL(pthread_mutex_lock)(m));
  return mutex_locked(m, mutex_lock_wait(me, m));
}

SKN_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m) { return mutex_locked(m, SKN_REAL(pthread_mutex_trylock)(m)); }
SKN_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs) {
  return mutex_locked(m, SKN_REAL(pthread_mutex_timedlock)(m, abs));
}
SKN_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abs) {
  return mutex_locked(m, SKN_REAL(pthread_mutex_clocklock)(m, clock, abs));
}

static int mutex_unlock(pthread_mutex_t *m) {
  /* The mutex is read only by a ULT holding pinning locks, and while it owns it (under
   * TSan the interceptor has already released it: another thread's free after its own
   * lock would be reported against any read here). */
  skn_unit *me = lock_holder();
  bool checked = me && SKN_UNLIKELY(me->lock_pins) && owner_checked(m);
  int rc = SKN_REAL(pthread_mutex_unlock)(m);
  if (rc == 0 && checked) lock_unpin(me);
  ow_wake(m);
  return rc;
}

SKN_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m) { return mutex_unlock(m); }

/* POSIX lets a wait return spuriously: a ULT waiter returns after any signal or
 * broadcast on the variable, with the mutex held again. */
static int cond_wait(skn_unit *me, pthread_cond_t *c, pthread_mutex_t *m, uint64_t deadline) {
  obj_waiter n;
  ow_add(&n, c, me);
  int rc = mutex_unlock(m);
  if (rc != 0) {
    ow_remove(&n);
    return rc;
  }
  bool woken = ow_block(me, &n, deadline, "pthread_cond_wait");
  int lrc = SKN_REAL(pthread_mutex_trylock)(m);
  if (lrc == EBUSY) lrc = mutex_lock_wait(me, m);
  if (mutex_locked(m, lrc) != 0) return lrc;
  return woken || !deadline || skn_now_ns() < deadline ? 0 : ETIMEDOUT;
}

SKN_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me || (c->__data.__wrefs & 1)) return SKN_REAL(pthread_cond_wait)(c, m);
  return cond_wait(me, c, m, 0);
}

SKN_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000) return SKN_REAL(pthread_cond_timedwait)(c, m, abs);
  /* glibc keeps in __wrefs whether the variable is process-shared (bit 0: then another
   * process may signal it, so libc's wait) and its clock (bit 1: CLOCK_MONOTONIC) */
  if (c->__data.__wrefs & 1) return SKN_REAL(pthread_cond_timedwait)(c, m, abs);
  clockid_t clock = (c->__data.__wrefs & 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
  uint64_t d = deadline_of(clock, abs);
  return cond_wait(me, c, m, d ? d : 1);
}

SKN_EXPORT int pthread_cond_signal(pthread_cond_t *c) {
  int rc = SKN_REAL(pthread_cond_signal)(c);
  ow_wake(c);
  return rc;
}

SKN_EXPORT int pthread_cond_broadcast(pthread_cond_t *c) {
  int rc = SKN_REAL(pthread_cond_broadcast)(c);
  ow_wake(c);
  return rc;
}

/* A write-locked rwlock: glibc's unlock takes the writer's path only on the thread whose
 * id it recorded, so the writer stays on its worker until it unlocks. Readers need not. */
static inline int wrlocked(int rc) {
  skn_unit *me;
  if (rc == 0 && (me = lock_holder())) lock_pin(me);
  return rc;
}
SKN_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l) { return wrlocked(SKN_REAL(pthread_rwlock_wrlock)(l)); }
SKN_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l) { return wrlocked(SKN_REAL(pthread_rwlock_trywrlock)(l)); }
SKN_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abs) {
  return wrlocked(SKN_REAL(pthread_rwlock_timedwrlock)(l, abs));
}
SKN_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abs) {
  return wrlocked(SKN_REAL(pthread_rwlock_clockwrlock)(l, clock, abs));
}
SKN_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l) {
  skn_unit *me = lock_holder();
  bool writer = me && me->lock_pins && atomic_load_explicit((_Atomic(int) *)&l->__data.__cur_writer, memory_order_relaxed) == gettid();
  int rc = SKN_REAL(pthread_rwlock_unlock)(l);
  if (rc == 0 && writer) lock_unpin(me);
  return rc;
}

/* ------------------------------------------------------------------ semaphores */

static int sem_wait_until(skn_unit *me, sem_t *s, uint64_t deadline) {
  unsigned step = 0;
  for (;;) {
    obj_waiter n;
    ow_add(&n, s, me);
    if (sem_trywait(s) == 0) {
      ow_remove(&n);
      return 0;
    }
    if (errno != EAGAIN) {
      int e = errno;
      ow_remove(&n);
      errno = e;
      return -1;
    }
    uint64_t now = skn_now_ns();
    if (deadline && now >= deadline) {
      ow_remove(&n);
      errno = ETIMEDOUT;
      return -1;
    }
    uint64_t d = now + (20000ull << (step < 8 ? step : 8));
    step++;
    ow_block(me, &n, deadline && deadline < d ? deadline : d, "sem_wait");
  }
}

SKN_EXPORT int sem_wait(sem_t *s) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me || sem_trywait(s) == 0) return me ? 0 : SKN_REAL(sem_wait)(s);
  return sem_wait_until(me, s, 0);
}

SKN_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abs) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000) return SKN_REAL(sem_timedwait)(s, abs);
  uint64_t d = deadline_of(CLOCK_REALTIME, abs);
  return sem_wait_until(me, s, d ? d : 1);
}

SKN_EXPORT int sem_post(sem_t *s) {
  int rc = SKN_REAL(sem_post)(s);
  ow_wake(s);
  return rc;
}

/* ------------------------------------------------------------------ descriptors, children */

static uint64_t timeout_deadline(int timeout_ms) {
  return timeout_ms < 0 ? 0 : skn_now_ns() + (uint64_t)timeout_ms * 1000000u;
}

static int poll_wait(skn_unit *me, struct pollfd *fds, nfds_t n, int timeout_ms) {
  int rc = SKN_REAL(poll)(fds, n, 0);
  if (rc != 0 || timeout_ms == 0) return rc;
  uint64_t deadline = timeout_deadline(timeout_ms);
  unsigned step = 0;
  me->blocked_in = "poll";
  for (;;) {
    backoff(me, &step, deadline);
    rc = SKN_REAL(poll)(fds, n, 0);
    if (rc != 0 || (deadline && skn_now_ns() >= deadline)) break;
  }
  me->blocked_in = NULL;
  return rc;
}

SKN_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout_ms) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me) return SKN_REAL(poll)(fds, n, timeout_ms);
  return poll_wait(me, fds, n, timeout_ms);
}

SKN_EXPORT int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me || (tv && tv->tv_sec == 0 && tv->tv_usec == 0)) return SKN_REAL(select)(nfds, r, w, e, tv);
  uint64_t deadline = tv ? skn_now_ns() + (uint64_t)tv->tv_sec * 1000000000u + (uint64_t)tv->tv_usec * 1000u : 0;
  fd_set r0, w0, e0;
  if (r) r0 = *r;
  if (w) w0 = *w;
  if (e) e0 = *e;
  unsigned step = 0;
  int rc;
  me->blocked_in = "select";
  for (;;) {
    struct timeval zero = {0, 0};
    rc = SKN_REAL(select)(nfds, r, w, e, &zero);
    if (rc != 0 || (deadline && skn_now_ns() >= deadline)) break;
    if (r) *r = r0;
    if (w) *w = w0;
    if (e) *e = e0;
    backoff(me, &step, deadline);
  }
  me->blocked_in = NULL;
  if (tv && rc >= 0) {
    uint64_t now = skn_now_ns(), left = deadline > now ? deadline - now : 0;
    tv->tv_sec = (time_t)(left / 1000000000u);
    tv->tv_usec = (suseconds_t)(left % 1000000000u / 1000u);
  }
  return rc;
}

SKN_EXPORT ssize_t read(int fd, void *buf, size_t len) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (me && len) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    /* not ready, and a blocking descriptor (regular files are always ready) */
    if (SKN_REAL(poll)(&p, 1, 0) == 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK)) {
      poll_wait(me, &p, 1, -1);
      me->blocked_in = NULL;
    }
  }
  return SKN_REAL(read)(fd, buf, len);
}

SKN_EXPORT pid_t waitpid(pid_t pid, int *status, int options) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me || (options & WNOHANG)) return SKN_REAL(waitpid)(pid, status, options);
  unsigned step = 0;
  pid_t rc;
  me->blocked_in = "waitpid";
  while ((rc = SKN_REAL(waitpid)(pid, status, options | WNOHANG)) == 0) backoff(me, &step, 0);
  me->blocked_in = NULL;
  return rc;
}

SKN_EXPORT pid_t wait(int *status) {
  skn_unit *me = switchable(__builtin_return_address(0));
  if (!me) return SKN_REAL(wait)(status);
  unsigned step = 0;
  pid_t rc;
  me->blocked_in = "wait";
  while ((rc = SKN_REAL(waitpid)(-1, status, WNOHANG)) == 0) backoff(me, &step, 0);
  me->blocked_in = NULL;
  return rc;
}
