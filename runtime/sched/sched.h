/* MxN scheduler: runs user-level threads (units) on worker kernel threads.
 * Knows nothing of MPI: a unit carries an opaque `owner` for the layers above.
 * Thread safety: skn_sched_wake may be called from any thread; everything else acts on
 * the calling unit or worker.
 * Moves: with stealing on (skn_sched_config.steal) an idle worker takes ready units from
 * a busy worker's ready queue, so a ULT may resume on another worker than the one it blocked
 * on. What a unit sees as its own across a switch follows it: its stack and registers,
 * its errno (saved and restored at every switch), its owner. The kernel thread's other
 * TLS does not: code that holds per-kernel-thread state across a switch pins the unit
 * (skn_sched_pin). A unit with live helpers (skn_sched_spawn_helper) shares their worker
 * and stays there: all ULTs of one owner run on one worker, one at a time. */
#ifndef SKN_SCHED_H
#define SKN_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

#include "base/base.h"
#include "readyq.h"

/* Unit states. RUNNING and NOTIFIED both mean "not blocked"; NOTIFIED records that a
 * wake arrived while the unit was running or about to block. */
enum {
  SKN_UNIT_RUNNING = 0,
  SKN_UNIT_WAITING = 1,       /* about to block: checking its condition once more */
  SKN_UNIT_BLOCKED = 2,       /* switched out; a waker puts it on its worker's queue */
  SKN_UNIT_BLOCKED_FUTEX = 3, /* its kernel thread sleeps on `state`; a waker futex-wakes */
  SKN_UNIT_NOTIFIED = 4,
};

enum skn_unit_kind {
  SKN_UNIT_ULT,     /* user-level thread with its own stack, run by one worker at a time */
  SKN_UNIT_KTHREAD, /* a kernel thread adopted by an owner (e.g. a rank's pthread) */
};

struct skn_unit;

/* A worker kernel thread. Fields above `ready` are touched only by the worker itself, but
 * for the watchdog's relaxed reads. */
typedef struct skn_worker {
  int id;
  int numa;                  /* NUMA node of its core: units are stolen within a node */
  void *sched_sp;            /* the worker's own context while a unit runs */
  int *errno_loc;            /* its kernel thread's errno (units' errno is swapped in) */
  _Atomic(const char *) tp;  /* its thread pointer: static TLS lies just below it */
  struct skn_unit *exited;   /* ended unit whose stack the worker context frees */
  uint32_t *seen_pops, *seen_len; /* per victim: its queue's pops and length when this
                                     worker last looked */
  uint64_t *seen_at;         /* ... and since when (skn_now_ns) they have not changed */
  uint64_t steals;           /* units this worker took from others (statistics) */
  uint64_t idle_ns, idle_from; /* time spent idle, and since when (statistics) */
  const void *stack_lo;      /* kernel thread stack, for ASan */
  size_t stack_size;
  void *asan_fake_stack;
  void *tsan_fiber;
  _Atomic(uint32_t) poll_seq; /* odd while in a loop calling the poll hook, bumped on entry
                                 and exit; written by this worker only */
  struct skn_unit *timers;    /* units in a timed wait, by deadline */
  _Atomic(int) tid;           /* kernel thread id, for reports (read by the watchdog) */
  _Atomic(uint64_t) switches; /* bumped by every switch into a unit (the watchdog) */
  _Atomic(struct skn_unit *) current; /* the unit running on it, or NULL */
  skn_readyq ready __attribute__((aligned(SKN_CACHELINE))); /* ready units (readyq.h) */
  _Atomic(struct skn_unit *) inbox __attribute__((aligned(SKN_CACHELINE)));
  _Atomic(uint32_t) sleeping; /* futex word: 1 while (about to be) asleep */
} __attribute__((aligned(SKN_CACHELINE))) skn_worker;

static inline bool skn_sched_worker_has_ready(skn_worker *w) {
  return skn_readyq_nonempty(&w->ready) || atomic_load_explicit(&w->inbox, memory_order_relaxed);
}

typedef struct skn_unit {
  skn_readyq_node link;        /* ready queue / inbox link, owned by whoever queued it (first) */
  _Atomic(uint32_t) state;   /* futex word for KTHREAD units and pinned waits */
  uint8_t kind;
  bool finished;
  _Atomic(uint8_t) on_cpu;   /* ULT: set by the worker that switches to it, cleared once its
                                context is saved; a thief runs it only after that */
  _Atomic(uint32_t) pinned;  /* > 0: must stay on its worker (skn_sched_pin) */
  uint32_t lock_pins;        /* of those, the locks it holds (boot/blocking.c); its own */
  int err;                   /* its errno while switched out */
  _Atomic(struct skn_worker *) worker; /* ULT: the worker that runs it (skn_sched_unit_worker) */
  struct skn_unit *parent;   /* helper ULT: the unit it keeps pinned while it lives */
  int home;                  /* ULT: the worker it was placed on (groupings that must not
                                change with moves use it) */
  void *sp;                  /* saved stack pointer while switched out */
  void *owner;               /* layer above: the rank this unit acts for */
  void (*entry)(void *);
  void *arg;
  char *stack_lo, *stack_hi; /* usable stack [lo, hi); guard page just below lo */
  size_t map_size;
  unsigned vg_stack_id;
  void *asan_fake_stack;
  void *tsan_fiber;
  uint64_t deadline;         /* timed wait: skn_now_ns() at which the worker wakes it */
  struct skn_unit *timer_next;
  bool timed;                /* in its worker's timer list */
  const char *blocked_in;    /* libc call it waits in as a scheduler wait (reports) */
  uint64_t run_ns, ran_at;   /* time it ran, and when it last started (statistics) */
  uint32_t moves;            /* times it was stolen or moved to another worker */
} skn_unit;

/* The worker that runs (or will next run) ULT u; NULL for adopted threads. Read by other
 * threads as a hint (placement of helpers, reports): it changes when u moves. */
static inline skn_worker *skn_sched_unit_worker(const skn_unit *u) {
  return atomic_load_explicit(&((skn_unit *)u)->worker, memory_order_relaxed);
}
static inline int skn_sched_unit_worker_id(const skn_unit *u) {
  skn_worker *w = u ? skn_sched_unit_worker(u) : NULL;
  return w ? w->id : 0;
}

#define SKN_POLL_EVERY 3 /* a mask: 8-byte latency over UCX sm 0.36 us (every 4), 0.39 (8), 0.45 (16) */

typedef struct skn_sched_hooks {
  /* Called by idle workers and spinning waiters (network progress), every
   * SKN_POLL_EVERY + 1 iterations; returns whether it found work. May be NULL. */
  bool (*poll)(void);
  /* Called by a worker or a blocked thread just before it sleeps in the kernel. May be NULL. */
  void (*sleep)(void);
  /* Called when every worker sleeps, every adopted thread is blocked and nothing woke
   * anyone for a while. Returns only if the caller decides this is not a deadlock. */
  void (*stall)(void);
} skn_sched_hooks;

typedef struct skn_sched_config {
  int nworkers;          /* >= 1 */
  size_t stack_size;     /* usable bytes per ULT stack */
  unsigned spin_iters;   /* busy-poll iterations before blocking */
  bool bind;             /* pin workers to cores */
  bool yield;            /* more threads spin than there are cores (processes of the job
                          * outnumber them): spinning loops yield the core now and then */
  unsigned stall_ms;     /* quiet time before the stall hook runs */
  bool steal;            /* idle workers take ready units from busy ones (same NUMA node) */
  bool stats;            /* time units and workers (skn_sched_stats) */
} skn_sched_config;

SKN_INTERNAL int skn_sched_init(const skn_sched_config *cfg, const skn_sched_hooks *hooks);
SKN_INTERNAL int skn_sched_nworkers(void);
SKN_INTERNAL skn_unit *skn_sched_spawn(int worker, void (*fn)(void *), void *arg, void *owner);
/* The same with a given stack size; may be called while the scheduler runs (the unit
 * becomes ready on its worker at once). */
SKN_INTERNAL skn_unit *skn_sched_spawn_sized(int worker, void (*fn)(void *), void *arg, void *owner,
                                             size_t stack_size);
/* Runs the workers; the calling thread becomes worker 0. Returns when all units ended. */
SKN_INTERNAL void skn_sched_run(void);

SKN_INTERNAL extern __thread skn_unit *skn_sched_current_tls;
/* The calling unit, or NULL on a thread the scheduler does not know. */
static inline skn_unit *skn_sched_self(void) { return skn_sched_current_tls; }

/* Waiting protocol, for a condition another thread sets (with seq_cst) before it calls
 * skn_sched_wake on the waiter:
 *     for (;;) { skn_sched_prepare_wait(me); if (cond) break; skn_sched_wait(me); }
 *     skn_sched_done_waiting(me);
 * skn_sched_wait may return spuriously. */
static inline void skn_sched_prepare_wait(skn_unit *me) {
  atomic_store(&me->state, SKN_UNIT_WAITING);
}
static inline void skn_sched_done_waiting(skn_unit *me) {
  atomic_store_explicit(&me->state, SKN_UNIT_RUNNING, memory_order_relaxed);
}
SKN_INTERNAL void skn_sched_wait(skn_unit *me);
/* Polls *word until it equals value, for at most the spin budget and only while the
 * caller's worker has nothing else to run. Lets a waiter catch a completion without
 * announcing itself, so the completer has no one to wake. Returns whether it saw it. */
SKN_INTERNAL bool skn_sched_poll_word_slow(skn_unit *me, _Atomic(uintptr_t) *word, uintptr_t value);
static inline bool skn_sched_poll_word(skn_unit *me, _Atomic(uintptr_t) *word, uintptr_t value) {
  if (me->kind == SKN_UNIT_ULT && skn_sched_worker_has_ready(skn_sched_unit_worker(me))) return false;
  return skn_sched_poll_word_slow(me, word, value);
}
SKN_INTERNAL void skn_sched_wake(skn_unit *u);
/* skn_sched_wait that also returns once skn_now_ns() >= deadline. A ULT's worker runs
 * its other units meanwhile; a pending deadline keeps the stall hook from running. */
SKN_INTERNAL void skn_sched_wait_until(skn_unit *me, uint64_t deadline);
/* Sleeps the calling ULT until deadline (skn_now_ns), letting its worker run others. */
SKN_INTERNAL void skn_sched_sleep_until(skn_unit *me, uint64_t deadline);
/* Whether the caller is a ULT that may wait in the scheduler instead of the kernel (not
 * inside an OpenMP parallel region, which owns the worker's kernel thread). */
SKN_INTERNAL bool skn_sched_can_switch(skn_unit *me);
/* Watches for a worker kept in the kernel by one unit while others of it are ready, or
 * (alone: the job is this process) while every other unit is blocked; calls
 * report(worker id, unit) once such a state lasted `ms`. */
SKN_INTERNAL void skn_sched_start_watchdog(unsigned ms, bool alone, void (*report)(int, skn_unit *));
/* Whether some unit is spinning in a loop that calls the poll hook, or has entered one
 * since the call that set *mark (false without a hook); updates *mark. */
SKN_INTERNAL bool skn_sched_polled_since(uint64_t *mark);

SKN_INTERNAL void skn_sched_yield(void);
/* Ends the calling ULT (its stack is dropped, nothing is unwound). */
SKN_INTERNAL _Noreturn void skn_sched_exit(void);

/* Starts a ULT for parent's owner on parent's worker; both stay on that worker while the
 * helper lives (parent's allocator caches and other per-owner state are single-runner). */
SKN_INTERNAL skn_unit *skn_sched_spawn_helper(skn_unit *parent, void (*fn)(void *), void *arg, size_t stack_size);

/* Keeps the calling unit on its worker until the matching unpin: for code that holds
 * per-kernel-thread state across a switch (a lock whose owner libc records by thread). */
static inline void skn_sched_pin(skn_unit *me) { atomic_fetch_add_explicit(&me->pinned, 1, memory_order_relaxed); }
static inline void skn_sched_unpin(skn_unit *me) { atomic_fetch_sub_explicit(&me->pinned, 1, memory_order_relaxed); }

/* Scheduler statistics (skn_sched_config.stats): per worker, the time it was idle and the
 * units it stole; units keep their own run_ns and moves. */
typedef struct skn_sched_worker_stats {
  uint64_t idle_ns, steals;
} skn_sched_worker_stats;
SKN_INTERNAL void skn_sched_worker_stats_of(int worker, skn_sched_worker_stats *out);

/* Registers the calling kernel thread as a unit acting for `owner`. */
SKN_INTERNAL skn_unit *skn_sched_adopt_thread(void *owner);
SKN_INTERNAL void skn_sched_release_thread(void);

/* The ULT whose guard page contains addr, or NULL. Async-signal-safe. */
SKN_INTERNAL skn_unit *skn_sched_unit_by_guard(const void *addr);
/* A key for a thread-local variable at addr that is the same on every worker: its offset
 * below the thread pointer of the worker whose static TLS holds it (the closest above it),
 * tagged; addr itself when no worker's static TLS holds it. */
SKN_INTERNAL uintptr_t skn_sched_tls_key(const void *addr);

/* Index of the calling thread's worker, or -1. */
SKN_INTERNAL int skn_sched_worker_id(void);

#endif
