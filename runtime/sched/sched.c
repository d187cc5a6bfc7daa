/* MxN scheduler: workers, ready queues, wait/wake, stealing, idle sleep, stall detection.
 *
 * Each worker has a FIFO queue of ready units (readyq.h) and an MPSC inbox that other
 * threads push woken units onto. A unit that blocks switches straight to the next ready
 * unit of its worker (one switch), or to the worker's own context, which polls, steals
 * (below), spins briefly and then sleeps on a futex. `busy` counts awake workers plus
 * unblocked adopted threads; when it stays zero with no wake in between, nothing can ever
 * run again and the stall hook (the deadlock report) runs.
 *
 * Stealing (the policy; the queues know nothing of it): an idle worker takes the first
 * movable unit of another worker's ready queue once a ready unit has waited there
 * STEAL_AFTER_NS behind a running one (the queue is FIFO: of the units queued when the
 * thief looked, fewer have been taken since than there were). Looking costs the victim
 * nothing; the thief's take is one lock of the victim's queue. */
#define _GNU_SOURCE
#include "sched.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include "arch/ctx.h"
#include "hwtopo.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define SKN_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define SKN_TSAN 1
/* gcc 12's tsan_interface.h does not declare the fiber API. */
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

/* libgomp's, when the program uses OpenMP. */
extern int omp_get_level(void) __attribute__((weak));



static struct {
  skn_sched_config cfg;
  skn_sched_hooks hooks;
  skn_worker *workers;
  bool running;
  bool slow_switch;        /* steal or stats: switch_prepare_slow has work */
  _Atomic(int) live;       /* ULTs not yet ended: workers leave when none is left */
  _Atomic(int) idle_sleepers; /* workers asleep with nothing to steal (stealing on) */
  _Atomic(int) busy __attribute__((aligned(SKN_CACHELINE)));
  _Atomic(uint64_t) epoch;
  _Atomic(int) stall_reporting;
  skn_spinlock adopt_lock;
  skn_unit *adopt_free;
  _Atomic(int) pollers; /* adopted threads in loops calling the poll hook right now */
  _Atomic(int) timed;   /* ULTs in a timed wait: they will run again, so no stall */
  _Atomic(uint32_t) ended; /* futex word: worker threads (not worker 0) whose loop ended */
} sched_state;

__thread skn_unit *skn_sched_current_tls __attribute__((tls_model("initial-exec")));
static __thread skn_worker *tls_worker __attribute__((tls_model("initial-exec")));

/* Guard-page lookup walks every ULT ever spawned; ULTs are few (one per rank). */
typedef struct ult_record {
  skn_unit *unit;
  char *guard_lo, *guard_hi;
  struct ult_record *next;
} ult_record;
static _Atomic(ult_record *) ult_records;

/* ------------------------------------------------------------------ switching */

/* Units move only with stealing on: otherwise nobody but a worker
 * touches its queue and runs its units, and the owner's side takes no lock and keeps no
 * on_cpu mark (the plain ping-pong of two units of one worker: 456 -> 452 instructions
 * per message pair). */
static inline bool moves_on(void) { return sched_state.cfg.steal; }
static inline void own_lock(skn_worker *w) {
  if (moves_on()) skn_spin_lock(&w->ready.lock);
}
static inline void own_unlock(skn_worker *w) {
  if (moves_on()) skn_spin_unlock(&w->ready.lock);
}

/* Timestamps for statistics, taken only when they are asked for. */
static void account_switch(skn_worker *w, skn_unit *from, skn_unit *to) {
  uint64_t now = skn_now_ns();
  if (from) from->run_ns += now - from->ran_at;
  else w->idle_ns += now - w->idle_from; /* the worker's own context ran: looking for work */
  if (to) to->ran_at = now;
  else w->idle_from = now;
}

/* Everything a unit sees as its thread's state is swapped here, by the kernel thread
 * that switches, before the stacks change: errno, and the mark that lets a thief run the
 * unit `from` only once its registers are saved (the switch clears it after the save).
 * Nothing after skn_ctx_switch may use state of the kernel thread taken before it: the
 * unit that resumes there may be on another worker. */
/* What a switch does only when units move or are timed; returns the mark the context
 * switch clears once `from` is saved. */
static _Atomic(uint8_t) *switch_prepare_slow(skn_worker *w, skn_unit *from, skn_unit *to) {
  if (sched_state.cfg.stats) account_switch(w, from, to);
  if (!moves_on()) return NULL;
  if (to) {
    /* A unit made ready on another worker (woken just after it blocked, moved) may not be
     * saved yet: a few instructions at most. */
    while (SKN_UNLIKELY(atomic_load_explicit(&to->on_cpu, memory_order_acquire))) skn_cpu_relax();
    SKN_TSAN_ACQUIRE(&to->on_cpu);
    atomic_store_explicit(&to->on_cpu, 1, memory_order_relaxed);
  }
  return from ? &from->on_cpu : NULL;
}

static inline void switch_to(skn_worker *w, skn_unit *from, skn_unit *to) {
  _Atomic(uint8_t) *saved = NULL;
  if (SKN_UNLIKELY(sched_state.slow_switch)) saved = switch_prepare_slow(w, from, to);
  void **save = from ? &from->sp : &w->sched_sp;
  void *load = to ? to->sp : w->sched_sp;
  if (from) from->err = *w->errno_loc;
  if (to) *w->errno_loc = to->err;
  skn_sched_current_tls = to;
  atomic_store_explicit(&w->current, to, memory_order_relaxed);
  if (to)
    atomic_store_explicit(&w->switches, atomic_load_explicit(&w->switches, memory_order_relaxed) + 1,
                          memory_order_relaxed);
  /* after the last write to `from` (its errno), while TSan still runs it as `from`: what a
   * worker that runs it next reads once the context switch clears the mark */
  if (saved) SKN_TSAN_RELEASE(saved);
#ifdef SKN_ASAN
  void **fake = (from && from->finished) ? NULL : (from ? &from->asan_fake_stack : &w->asan_fake_stack);
  if (to)
    __sanitizer_start_switch_fiber(fake, to->stack_lo, (size_t)(to->stack_hi - to->stack_lo));
  else
    __sanitizer_start_switch_fiber(fake, w->stack_lo, w->stack_size);
#endif
#ifdef SKN_TSAN
  __tsan_switch_to_fiber(to ? to->tsan_fiber : w->tsan_fiber, 0);
#endif
  skn_ctx_switch(save, load, saved);
#ifdef SKN_ASAN
  __sanitizer_finish_switch_fiber(from ? from->asan_fake_stack : w->asan_fake_stack, NULL, NULL);
#endif
}

static void ult_main(void *p) {
  skn_unit *u = p;
#ifdef SKN_ASAN
  __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
  u->entry(u->arg);
  skn_sched_exit();
}

/* ------------------------------------------------------------------ queues */

static inline skn_unit *unit_of(skn_readyq_node *n) { return (skn_unit *)n; } /* link is first */


/* Returns whether other units were waiting already. */
static inline bool ready_push(skn_worker *w, skn_unit *u) {
  own_lock(w);
  bool queue = w->ready.head != NULL;
  skn_readyq_append_locked(&w->ready, &u->link, &u->link, 1);
  own_unlock(w);
  return queue;
}

/* Moves w's inbox into its ready queue, in wake order; its lock held. Its owner and thieves
 * alike may drain it: each exchange takes a disjoint batch. */
static void drain_inbox_locked(skn_worker *w) {
  skn_unit *list = atomic_exchange(&w->inbox, NULL);
  SKN_TSAN_ACQUIRE(&w->inbox); /* base.h: the exchange may be made inside a TSan interceptor */
  if (!list) return;
  skn_readyq_node *rev = NULL, *last = &list->link; /* the inbox is LIFO: reverse to keep wake order */
  uint32_t k = 0;
  for (skn_readyq_node *n = &list->link, *next; n; n = next, k++) {
    next = n->next;
    n->next = rev;
    rev = n;
  }
  skn_readyq_append_locked(&w->ready, rev, last, k);
}

/* ------------------------------------------------------------------ timers
 * A worker's units in timed waits, sorted by deadline; touched only by the worker (a ULT
 * never leaves it). Expired ones are woken when the worker looks for a unit to run. */

static void timer_insert(skn_worker *w, skn_unit *u) {
  skn_unit **pp = &w->timers;
  while (*pp && (*pp)->deadline <= u->deadline) pp = &(*pp)->timer_next;
  u->timer_next = *pp;
  *pp = u;
  u->timed = true;
  atomic_fetch_add(&sched_state.timed, 1);
}

static void timer_remove(skn_worker *w, skn_unit *u) {
  if (!u->timed) return;
  for (skn_unit **pp = &w->timers; *pp; pp = &(*pp)->timer_next) {
    if (*pp == u) {
      *pp = u->timer_next;
      break;
    }
  }
  u->timed = false;
  atomic_fetch_sub(&sched_state.timed, 1);
}

void skn_sched_wake(skn_unit *u);

static void fire_timers(skn_worker *w) {
  uint64_t now = skn_now_ns();
  while (w->timers && w->timers->deadline <= now) {
    skn_unit *u = w->timers;
    timer_remove(w, u);
    skn_sched_wake(u); /* its own worker: straight onto the ready queue */
  }
}

static inline skn_unit *ready_pop(skn_worker *w) {
  if (SKN_UNLIKELY(w->timers != NULL)) fire_timers(w);
  if (!skn_sched_worker_has_ready(w)) return NULL;
  bool locked = moves_on(); /* one test: own_lock's would be read twice around the stores */
  if (locked) skn_spin_lock(&w->ready.lock);
  if (!w->ready.head) drain_inbox_locked(w);
  skn_readyq_node *n = skn_readyq_pop_locked(&w->ready);
  if (locked) skn_spin_unlock(&w->ready.lock);
  return n ? unit_of(n) : NULL;
}

/* ------------------------------------------------------------------ busy accounting */

static inline void busy_up(void) {
  atomic_fetch_add(&sched_state.busy, 1);
  atomic_fetch_add_explicit(&sched_state.epoch, 1, memory_order_relaxed);
}
static inline void busy_down(void) { atomic_fetch_sub(&sched_state.busy, 1); }

static void maybe_stall(uint64_t epoch_at_sleep) {
  if (atomic_load(&sched_state.busy) != 0 || atomic_load(&sched_state.epoch) != epoch_at_sleep) return;
  if (atomic_load(&sched_state.timed) != 0) return; /* a sleeping unit will run again */
  if (!sched_state.hooks.stall || atomic_exchange(&sched_state.stall_reporting, 1)) return;
  sched_state.hooks.stall();
  atomic_store(&sched_state.stall_reporting, 0);
}

/* ------------------------------------------------------------------ waking */

/* Wakes one worker asleep with nothing to steal: `from` has more ready units than it can
 * run now. Rare (see make_ready), so a walk over the workers. */
static void wake_a_thief(skn_worker *from) {
  for (int i = 0; i < sched_state.cfg.nworkers; i++) {
    skn_worker *w = &sched_state.workers[i];
    if (w == from || w->numa != from->numa || !atomic_load_explicit(&w->sleeping, memory_order_relaxed)) continue;
    if (atomic_exchange(&w->sleeping, 0)) {
      busy_up();
      skn_futex_wake(&w->sleeping, 1);
      return;
    }
  }
}

/* Makes u ready on w from another thread: onto w's inbox, waking w if it sleeps. */
static inline void inbox_push(skn_worker *w, skn_unit *u) {
  skn_unit *head = atomic_load_explicit(&w->inbox, memory_order_relaxed);
  do {
    u->link.next = head ? &head->link : NULL;
    SKN_TSAN_RELEASE(&w->inbox); /* see drain_inbox_locked */
  } while (!atomic_compare_exchange_weak(&w->inbox, &head, u));
  if (atomic_exchange(&w->sleeping, 0)) {
    busy_up();
    skn_futex_wake(&w->sleeping, 1);
  }
}

/* Inline: skn_sched_wake is on every message's path that wakes a blocked receiver. */
static inline __attribute__((always_inline)) void make_ready(skn_unit *u) {
  skn_worker *w = skn_sched_unit_worker(u);
  if (w == tls_worker) {
    if (SKN_LIKELY(!moves_on())) {
      skn_readyq_append_locked(&w->ready, &u->link, &u->link, 1); /* nobody else touches it */
      return;
    }
    /* Two units now wait behind the one running: a worker asleep may want one. (One
     * alone is the ping-pong of two units of a worker, which runs it next.) */
    if (ready_push(w, u) && SKN_UNLIKELY(atomic_load_explicit(&sched_state.idle_sleepers, memory_order_relaxed) > 0))
      wake_a_thief(w);
    return;
  }
  inbox_push(w, u);
}

void skn_sched_wake(skn_unit *u) {
  uint32_t s = atomic_load(&u->state);
  if (s == SKN_UNIT_RUNNING || s == SKN_UNIT_NOTIFIED) return;
  s = atomic_exchange(&u->state, SKN_UNIT_NOTIFIED);
  if (s == SKN_UNIT_BLOCKED) {
    make_ready(u);
  } else if (s == SKN_UNIT_BLOCKED_FUTEX) {
    busy_up();
    skn_futex_wake(&u->state, 1);
  }
}

/* ------------------------------------------------------------------ waiting */

/* The transport's progress runs in whichever unit waits; its socket calls leave EAGAIN and
 * the like in errno, which is the waiting unit's. */
static bool poll_hook(void) {
  if (!sched_state.hooks.poll) return false;
  int saved = errno;
  bool busy = sched_state.hooks.poll();
  errno = saved;
  return busy;
}

/* Spinning loops that call the poll hook are tracked, so that the network's own thread
 * can stay asleep while they progress (skn_sched_polled_since). A worker bumps its own
 * sequence with plain stores (no locked instruction on a waiter's path); adopted threads
 * (w NULL) share one atomic count and are seen only while they poll. */
static inline void poll_seq_bump(skn_worker *w) {
  atomic_store_explicit(&w->poll_seq, atomic_load_explicit(&w->poll_seq, memory_order_relaxed) + 1,
                        memory_order_relaxed);
}
static inline void pollers_enter(skn_worker *w) {
  if (!sched_state.hooks.poll) return;
  if (w) poll_seq_bump(w);
  else atomic_fetch_add_explicit(&sched_state.pollers, 1, memory_order_relaxed);
}
static inline void pollers_leave(skn_worker *w) {
  if (!sched_state.hooks.poll) return;
  if (w) poll_seq_bump(w);
  else atomic_fetch_sub_explicit(&sched_state.pollers, 1, memory_order_relaxed);
}
bool skn_sched_polled_since(uint64_t *mark) {
  bool now = atomic_load_explicit(&sched_state.pollers, memory_order_relaxed) > 0;
  uint64_t sum = 0;
  for (int i = 0; i < sched_state.cfg.nworkers; i++) {
    uint32_t seq = atomic_load_explicit(&sched_state.workers[i].poll_seq, memory_order_relaxed);
    now |= seq & 1;
    sum += seq;
  }
  bool since = sum != *mark;
  *mark = sum;
  return now || since;
}

/* Returns whether the network had work: spinning loops then start their budget over, so
 * a waiter keeps driving a long transfer instead of leaving it to the progress thread. */
static inline bool poll_and_yield(void) {
  bool busy = poll_hook();
  if (sched_state.cfg.yield) sched_yield(); /* let the process we wait for run */
  return busy;
}

/* Spinning also ends after SPIN_MAX_NS without network work: the SKEIN_SPIN iterations
 * take about 0.5 ms on a quiet machine, but with a yield per poll on a loaded one each
 * poll may give the core away for a time slice: at load ~25 a deadlocked process's
 * workers spun 25 s before they first slept and the deadlock could be judged
 * (deadlock_n7_p3_w2). The clock is read at every 64th iteration only; *t0 = 0 starts
 * the period (again after work). */
#define SPIN_MAX_NS 20000000ull
static inline bool spin_expired(unsigned i, uint64_t *t0) {
  if ((i & 63) != 63) return false;
  uint64_t now = skn_now_ns();
  if (!*t0) *t0 = now;
  return now - *t0 > SPIN_MAX_NS;
}

static bool steal(skn_worker *w, bool take);
#define STEAL_LOOK_EVERY 255u /* spin iterations between looks at the other workers (a mask) */

/* Whether a unit spinning on worker w should stop and let w take work from a busy worker
 * (a spinning unit keeps its worker from stealing: without this, a wait shorter than the
 * spin budget would never balance anything). */
static inline bool steal_instead(skn_worker *w, unsigned i) {
  return w && sched_state.cfg.steal && (i & STEAL_LOOK_EVERY) == STEAL_LOOK_EVERY && steal(w, false);
}

static void before_sleep(void) {
  if (sched_state.hooks.sleep) sched_state.hooks.sleep();
}

/* Spins until notified or until `give_up` says other work exists. */
static bool spin_for_notify(skn_unit *me, skn_worker *w) {
  bool notified = false;
  uint64_t t0 = 0;
  pollers_enter(w);
  for (unsigned i = 0; i < sched_state.cfg.spin_iters; i++) {
    if (atomic_load_explicit(&me->state, memory_order_acquire) != SKN_UNIT_WAITING) {
      notified = true;
      break;
    }
    if (w && (skn_sched_worker_has_ready(w) || steal_instead(w, i))) break;
    if ((i & SKN_POLL_EVERY) == SKN_POLL_EVERY && poll_and_yield()) {
      i = -1u; /* the poll may have done it: look before pausing */
      t0 = 0;
      continue;
    }
    if (spin_expired(i, &t0)) break;
    skn_cpu_relax();
  }
  pollers_leave(w);
  return notified;
}

/* Blocks the kernel thread itself: adopted threads, and ULTs inside an OpenMP parallel
 * region (another rank must not start its own region on this worker's libgomp state). */
static void wait_on_futex(skn_unit *me) {
  if (spin_for_notify(me, NULL)) return;
  uint32_t expect = SKN_UNIT_WAITING;
  if (!atomic_compare_exchange_strong(&me->state, &expect, SKN_UNIT_BLOCKED_FUTEX)) return;
  busy_down();
  before_sleep();
  uint64_t epoch = atomic_load(&sched_state.epoch);
  while (atomic_load(&me->state) == SKN_UNIT_BLOCKED_FUTEX) {
    if (!skn_futex_wait(&me->state, SKN_UNIT_BLOCKED_FUTEX, (long)sched_state.cfg.stall_ms * 1000000L))
      maybe_stall(epoch);
  }
  /* the waker did busy_up() */
}

bool skn_sched_poll_word_slow(skn_unit *me, _Atomic(uintptr_t) *word, uintptr_t value) {
  skn_worker *w = me->kind == SKN_UNIT_ULT ? skn_sched_unit_worker(me) : NULL;
  bool seen = false;
  uint64_t t0 = 0;
  pollers_enter(w);
  for (unsigned i = 0; i < sched_state.cfg.spin_iters; i++) {
    if (atomic_load_explicit(word, memory_order_acquire) == value) {
      seen = true;
      break;
    }
    if (w && (skn_sched_worker_has_ready(w) || steal_instead(w, i))) break;
    if ((i & SKN_POLL_EVERY) == SKN_POLL_EVERY && poll_and_yield()) {
      i = -1u; /* the poll may have done it: look before pausing */
      t0 = 0;
      continue;
    }
    if (spin_expired(i, &t0)) break;
    skn_cpu_relax();
  }
  pollers_leave(w);
  return seen;
}

void skn_sched_wait(skn_unit *me) {
  if (me->kind == SKN_UNIT_KTHREAD || (omp_get_level && omp_get_level() > 0)) {
    wait_on_futex(me);
    return;
  }
  skn_worker *w = skn_sched_unit_worker(me);
  if (!skn_sched_worker_has_ready(w) && spin_for_notify(me, w)) return;
  uint32_t expect = SKN_UNIT_WAITING;
  if (!atomic_compare_exchange_strong(&me->state, &expect, SKN_UNIT_BLOCKED)) return;
  /* A waker may queue `me` from now on, and a thief take it, but no one runs it before
   * the switch below has saved it (on_cpu); this worker may pop it itself. */
  skn_unit *next = ready_pop(w);
  if (next != me) switch_to(w, me, next);
}

bool skn_sched_can_switch(skn_unit *me) {
  return me && me->kind == SKN_UNIT_ULT && sched_state.running && !(omp_get_level && omp_get_level() > 0);
}

void skn_sched_wait_until(skn_unit *me, uint64_t deadline) {
  if (!skn_sched_can_switch(me)) {
    /* the kernel thread itself waits: adopted threads, OpenMP regions */
    uint32_t expect = SKN_UNIT_WAITING;
    if (skn_now_ns() >= deadline || !atomic_compare_exchange_strong(&me->state, &expect, SKN_UNIT_BLOCKED_FUTEX))
      return;
    atomic_fetch_add(&sched_state.timed, 1);
    busy_down();
    uint64_t now;
    while (atomic_load(&me->state) == SKN_UNIT_BLOCKED_FUTEX && (now = skn_now_ns()) < deadline)
      skn_futex_wait(&me->state, SKN_UNIT_BLOCKED_FUTEX, (long)(deadline - now));
    expect = SKN_UNIT_BLOCKED_FUTEX;
    if (atomic_compare_exchange_strong(&me->state, &expect, SKN_UNIT_WAITING)) busy_up(); /* timed out */
    atomic_fetch_sub(&sched_state.timed, 1); /* else the waker did busy_up() */
    return;
  }
  /* A unit in its worker's timer list is not movable (timer_remove below runs there). */
  skn_worker *w = skn_sched_unit_worker(me);
  if (skn_now_ns() >= deadline) return;
  me->deadline = deadline;
  timer_insert(w, me);
  uint32_t expect = SKN_UNIT_WAITING;
  if (atomic_compare_exchange_strong(&me->state, &expect, SKN_UNIT_BLOCKED)) {
    skn_unit *next = ready_pop(w); /* may fire our own timer: then next == me */
    if (next != me) switch_to(w, me, next);
  }
  timer_remove(w, me);
}

void skn_sched_sleep_until(skn_unit *me, uint64_t deadline) {
  while (skn_now_ns() < deadline) {
    skn_sched_prepare_wait(me);
    skn_sched_wait_until(me, deadline);
    skn_sched_done_waiting(me);
  }
}

void skn_sched_yield(void) {
  skn_unit *me = skn_sched_current_tls;
  if (!me || me->kind != SKN_UNIT_ULT) {
    poll_hook();
    sched_yield();
    return;
  }
  skn_worker *w = skn_sched_unit_worker(me);
  if (SKN_UNLIKELY(w->timers != NULL)) fire_timers(w);
  skn_readyq_node *next = NULL;
  if (skn_sched_worker_has_ready(w)) {
    own_lock(w);
    drain_inbox_locked(w);
    if ((next = skn_readyq_pop_locked(&w->ready)))
      skn_readyq_append_locked(&w->ready, &me->link, &me->link, 1); /* behind every other ready unit */
    own_unlock(w);
  }
  if (!next) {
    poll_hook();
    return;
  }
  switch_to(w, me, unit_of(next));
}

void skn_sched_exit(void) {
  skn_unit *me = skn_sched_current_tls;
  skn_worker *w = skn_sched_unit_worker(me);
  if (me->parent) skn_sched_unpin(me->parent);
  me->finished = true;
  w->exited = me;
  switch_to(w, me, NULL);
  __builtin_unreachable();
}

/* ------------------------------------------------------------------ workers */

static void free_unit_stack(skn_unit *u) {
#ifdef SKN_TSAN
  __tsan_destroy_fiber(u->tsan_fiber);
#endif
  VALGRIND_STACK_DEREGISTER(u->vg_stack_id);
  /* The guard page stays mapped PROT_NONE so a late overflow still resolves to a rank. */
  munmap(u->stack_lo, (size_t)(u->stack_hi - u->stack_lo));
}

/* Nanoseconds until the worker's first deadline (at most `cap`); 0 when one passed. */
static long until_timer(skn_worker *w, long cap) {
  if (!w->timers) return cap;
  uint64_t now = skn_now_ns(), d = w->timers->deadline;
  if (d <= now) return 0;
  return d - now < (uint64_t)cap ? (long)(d - now) : cap;
}

/* ------------------------------------------------------------------ stealing */

#define STEAL_AFTER_NS 50000ull  /* a ready unit waited this long behind a running one */
#define NAP_QUEUED_NS 1000000L   /* asleep while others have ready units: look this often */
#define NAP_EMPTY_NS 5000000L    /* ... while none has (a missed wake_a_thief costs this) */

/* Not movable: pinned units, and units in their worker's timer list (only that worker
 * touches the list). Read under the queue's lock, while the unit is queued, so after its
 * own last change to either. */
static bool movable(const skn_readyq_node *n) {
  const skn_unit *u = (const skn_unit *)n;
  return !atomic_load_explicit(&((skn_unit *)u)->pinned, memory_order_relaxed) && !u->timed;
}

/* Whether victim v has had a ready unit waiting for STEAL_AFTER_NS behind a running unit,
 * its queue's head standing still, as thief w has watched it (w's view of v is updated). */
static bool victim_stalled(skn_worker *w, skn_worker *v, uint64_t *now) {
  /* a unit must wait behind a running one, not for a worker that is waking up */
  if (v->numa != w->numa || !skn_sched_worker_has_ready(v) || !atomic_load_explicit(&v->current, memory_order_relaxed)) {
    w->seen_at[v->id] = 0;
    return false;
  }
  if (!*now) *now = skn_now_ns();
  /* FIFO: the units queued when w last looked have not all been taken since, so one of
   * them has waited at least that long (woken units still in the inbox count as one) */
  uint32_t pops = skn_readyq_pops(&v->ready), queued = skn_readyq_pushes(&v->ready) - pops;
  if (!w->seen_at[v->id] || pops - w->seen_pops[v->id] >= w->seen_len[v->id]) {
    w->seen_pops[v->id] = pops;
    w->seen_len[v->id] = queued ? queued : 1;
    w->seen_at[v->id] = *now;
    return false;
  }
  return *now - w->seen_at[v->id] >= STEAL_AFTER_NS;
}

/* Whether some worker of w's node has ready units (w asleep naps shorter then). */
static bool others_have_ready(skn_worker *w) {
  for (int i = 0; i < sched_state.cfg.nworkers; i++) {
    skn_worker *v = &sched_state.workers[i];
    if (v != w && v->numa == w->numa && skn_sched_worker_has_ready(v)) return true;
  }
  return false;
}

/* Takes one movable unit of a stalled victim into w's queue. Returns whether it did; with
 * take false it only tells whether a victim is stalled. */
static bool steal(skn_worker *w, bool take) {
  uint64_t now = 0;
  int n = sched_state.cfg.nworkers;
  for (int k = 1; k < n; k++) {
    skn_worker *v = &sched_state.workers[(w->id + k) % n];
    if (!victim_stalled(w, v, &now)) continue;
    if (!take) return true;
    skn_spin_lock(&v->ready.lock);
    drain_inbox_locked(v);
    skn_readyq_node *node = skn_readyq_take_locked(&v->ready, movable);
    /* under v's lock, so that skn_sched_spawn_helper pins its parent where it is */
    if (node) atomic_store_explicit(&unit_of(node)->worker, w, memory_order_relaxed);
    skn_spin_unlock(&v->ready.lock);
    w->seen_at[v->id] = 0;
    if (!node) continue;
    unit_of(node)->moves++;
    w->steals++;
    ready_push(w, unit_of(node)); /* switch_to waits until v has saved it */
    return true;
  }
  return false;
}

static void idle(skn_worker *w) {
  bool work = false, stealing = sched_state.cfg.steal;
  uint64_t t0 = 0;
  pollers_enter(w);
  for (unsigned i = 0; i < sched_state.cfg.spin_iters; i++) {
    if (skn_sched_worker_has_ready(w) || (w->timers && until_timer(w, 1) == 0) ||
        (stealing && (i & STEAL_LOOK_EVERY) == STEAL_LOOK_EVERY && steal(w, true))) {
      work = true;
      break;
    }
    if ((i & SKN_POLL_EVERY) == 0 && poll_and_yield()) {
      i = 0; /* the poll may have readied a unit: look before pausing */
      t0 = 0;
      continue;
    }
    if (spin_expired(i, &t0)) break;
    skn_cpu_relax();
  }
  pollers_leave(w);
  if (work) return;
  atomic_store(&w->sleeping, 1);
  busy_down();
  /* after the store: the worker that ends the last unit wakes sleepers (wake_all_workers) */
  if (skn_sched_worker_has_ready(w) || atomic_load(&sched_state.live) == 0) {
    if (atomic_exchange(&w->sleeping, 0)) busy_up();
    return;
  }
  before_sleep();
  uint64_t epoch = atomic_load(&sched_state.epoch), slept_from = skn_now_ns();
  bool listed = false; /* in idle_sleepers: wake_a_thief may wake it */
  const long cap = (long)sched_state.cfg.stall_ms * 1000000L;
  while (atomic_load(&w->sleeping)) {
    long t = until_timer(w, cap);
    if (t == 0) break; /* a timed wait is due */
    if (stealing) { /* nap, to look at the others now and then */
      bool queued = others_have_ready(w);
      if (queued == listed) {
        atomic_fetch_add(&sched_state.idle_sleepers, listed ? -1 : 1);
        listed = !listed;
      }
      long nap = queued ? NAP_QUEUED_NS : NAP_EMPTY_NS;
      if (nap < t) t = nap;
    }
    if (!skn_futex_wait(&w->sleeping, 1, t)) {
      if (skn_sched_worker_has_ready(w) || until_timer(w, 1) == 0 || (stealing && steal(w, false))) break;
      uint64_t now = skn_now_ns();
      if (!w->timers && now - slept_from >= (uint64_t)cap) {
        maybe_stall(epoch);
        slept_from = now;
      }
    }
  }
  if (listed) atomic_fetch_sub(&sched_state.idle_sleepers, 1);
  if (atomic_exchange(&w->sleeping, 0)) busy_up(); /* woke by timeout or spuriously */
}

/* Wakes every sleeping worker: the last unit ended. */
static void wake_all_workers(void) {
  for (int i = 0; i < sched_state.cfg.nworkers; i++) {
    skn_worker *w = &sched_state.workers[i];
    if (atomic_exchange(&w->sleeping, 0)) {
      busy_up();
      skn_futex_wake(&w->sleeping, 1);
    }
  }
}

static void worker_loop(skn_worker *w) {
  tls_worker = w;
  w->errno_loc = &errno;
  const char *tp;
  __asm__("mov %%fs:0, %0" : "=r"(tp)); /* x86-64: the TCB's first word points to itself */
  atomic_store_explicit(&w->tp, tp, memory_order_relaxed);
  w->idle_from = skn_now_ns();
  atomic_store_explicit(&w->tid, (int)gettid(), memory_order_relaxed);
  skn_sched_current_tls = NULL;
#ifdef SKN_TSAN
  w->tsan_fiber = __tsan_get_current_fiber();
#endif
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void *lo;
    pthread_attr_getstack(&attr, &lo, &w->stack_size);
    w->stack_lo = lo;
    pthread_attr_destroy(&attr);
  }
  /* Stack overflow handlers need a stack of their own (keep one a sanitizer set up). */
  stack_t old;
  if (sigaltstack(NULL, &old) == 0 && (old.ss_flags & SS_DISABLE)) {
    stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16, .ss_flags = 0};
    if (ss.ss_sp) sigaltstack(&ss, NULL);
  }
  if (sched_state.cfg.bind) skn_hwtopo_bind_thread(w->id);

  for (;;) {
    if (w->exited) {
      free_unit_stack(w->exited);
      w->exited = NULL;
      if (atomic_fetch_sub(&sched_state.live, 1) == 1) wake_all_workers();
    }
    if (atomic_load(&sched_state.live) == 0) break;
    skn_unit *u = ready_pop(w);
    if (!u && sched_state.cfg.steal && steal(w, true)) u = ready_pop(w);
    if (u) switch_to(w, NULL, u);
    else idle(w);
  }
  busy_down();
  tls_worker = NULL;
}

/* Worker threads are detached and counted out instead of joined: a worker whose units
 * have all ended leaves while the job may still end by _exit on another path (a deadlock
 * verdict, MPI_Abort, the time limit), where nothing would join it (TSan reports such a
 * thread as leaked and turns the job's exit code into 66). */
static void *worker_thread(void *p) {
  worker_loop(p);
  atomic_fetch_add(&sched_state.ended, 1); /* after everything the worker did */
  skn_futex_wake(&sched_state.ended, 1);
  return NULL;
}

int skn_sched_init(const skn_sched_config *cfg, const skn_sched_hooks *hooks) {
  sched_state.cfg = *cfg;
  if (sched_state.cfg.nworkers < 1) sched_state.cfg.nworkers = 1;
  if (sched_state.cfg.stall_ms == 0) sched_state.cfg.stall_ms = 1000;
  if (hooks) sched_state.hooks = *hooks;
  else memset(&sched_state.hooks, 0, sizeof sched_state.hooks);
  int n = sched_state.cfg.nworkers;
  if (n == 1) sched_state.cfg.steal = false;
  sched_state.slow_switch = sched_state.cfg.steal || sched_state.cfg.stats;
  atomic_store(&sched_state.live, 0);
  atomic_store(&sched_state.idle_sleepers, 0);
  sched_state.workers = aligned_alloc(SKN_CACHELINE, sizeof(skn_worker) * (size_t)n);
  if (!sched_state.workers) return -1;
  memset(sched_state.workers, 0, sizeof(skn_worker) * (size_t)n);
  for (int i = 0; i < n; i++) {
    skn_worker *w = &sched_state.workers[i];
    w->id = i;
    w->numa = sched_state.cfg.steal ? skn_hwtopo_numa_of_worker(i) : 0;
    if (sched_state.cfg.steal) {
      w->seen_pops = calloc((size_t)n, sizeof *w->seen_pops);
      w->seen_len = calloc((size_t)n, sizeof *w->seen_len);
      w->seen_at = calloc((size_t)n, sizeof *w->seen_at);
      if (!w->seen_pops || !w->seen_len || !w->seen_at) return -1;
    }
  }
  return 0;
}

int skn_sched_nworkers(void) { return sched_state.cfg.nworkers; }

int skn_sched_worker_id(void) { return tls_worker ? tls_worker->id : -1; }

/* Static TLS (x86-64, TLS variant II) is below the thread pointer, within the size of the
 * initial modules' TLS; a bound well above any real size (the program's thread_locals
 * live there) and below the distance between two workers' stacks. */
#define STATIC_TLS_MAX (4ul << 20)

uintptr_t skn_sched_tls_key(const void *addr) {
  const char *a = addr, *best = NULL;
  for (int i = 0; i < sched_state.cfg.nworkers; i++) {
    const char *tp = atomic_load_explicit(&sched_state.workers[i].tp, memory_order_relaxed);
    if (tp && tp > a && (!best || tp < best)) best = tp;
  }
  if (!best || (uintptr_t)(best - a) > STATIC_TLS_MAX) return (uintptr_t)addr;
  return ~(uintptr_t)(best - a); /* top of the address space: no object lives there */
}

skn_unit *skn_sched_spawn(int worker, void (*fn)(void *), void *arg, void *owner) {
  return skn_sched_spawn_sized(worker, fn, arg, owner, sched_state.cfg.stack_size);
}

static skn_unit *spawn_unit(int worker, void (*fn)(void *), void *arg, void *owner, size_t stack_size,
                            skn_unit *parent) {
  if (worker < 0 || worker >= sched_state.cfg.nworkers) return NULL;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t usable = (stack_size + page - 1) & ~(page - 1);
  size_t map_size = usable + page;
  char *base = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (base == MAP_FAILED) return NULL;
  if (mprotect(base, page, PROT_NONE) != 0) {
    munmap(base, map_size);
    return NULL;
  }
  skn_unit *u = calloc(1, sizeof *u);
  ult_record *rec = calloc(1, sizeof *rec);
  if (!u || !rec) {
    free(u);
    free(rec);
    munmap(base, map_size);
    return NULL;
  }
  u->kind = SKN_UNIT_ULT;
  atomic_store_explicit(&u->worker, &sched_state.workers[worker], memory_order_relaxed);
  u->parent = parent;
  u->home = worker;
  atomic_store_explicit(&u->pinned, parent ? 1 : 0, memory_order_relaxed);
  u->owner = owner;
  u->entry = fn;
  u->arg = arg;
  u->stack_lo = base + page;
  u->stack_hi = base + map_size;
  u->map_size = map_size;
  u->sp = skn_ctx_make(u->stack_hi, ult_main, u);
  u->vg_stack_id = VALGRIND_STACK_REGISTER(u->stack_lo, u->stack_hi);
#ifdef SKN_TSAN
  u->tsan_fiber = __tsan_create_fiber(0);
#endif
  rec->unit = u;
  rec->guard_lo = base;
  rec->guard_hi = base + page;
  rec->next = atomic_load(&ult_records);
  while (!atomic_compare_exchange_weak(&ult_records, &rec->next, rec)) {
  }
  atomic_fetch_add(&sched_state.live, 1);
  if (sched_state.running) make_ready(u); /* its worker's queue, or inbox from elsewhere */
  else ready_push(skn_sched_unit_worker(u), u);
  return u;
}

skn_unit *skn_sched_spawn_sized(int worker, void (*fn)(void *), void *arg, void *owner, size_t stack_size) {
  return spawn_unit(worker, fn, arg, owner, stack_size, NULL);
}

skn_unit *skn_sched_spawn_helper(skn_unit *parent, void (*fn)(void *), void *arg, size_t stack_size) {
  /* Pin the parent where it is. It may be queued, and a thief moves a unit under its old
   * queue's lock: pinning under the same lock, once the worker read is still the parent's,
   * leaves no moment at which it could go. */
  skn_worker *w;
  for (;;) {
    w = skn_sched_unit_worker(parent);
    skn_spin_lock(&w->ready.lock);
    bool here = skn_sched_unit_worker(parent) == w;
    if (here) skn_sched_pin(parent);
    skn_spin_unlock(&w->ready.lock);
    if (here) break;
  }
  skn_unit *u = spawn_unit(w->id, fn, arg, parent->owner, stack_size, parent);
  if (!u) skn_sched_unpin(parent);
  return u;
}

void skn_sched_worker_stats_of(int worker, skn_sched_worker_stats *out) {
  skn_worker *w = &sched_state.workers[worker];
  *out = (skn_sched_worker_stats){.idle_ns = w->idle_ns, .steals = w->steals};
}

void skn_sched_run(void) {
  sched_state.running = true;
  atomic_store(&sched_state.busy, sched_state.cfg.nworkers);
  atomic_store(&sched_state.ended, 0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED); /* see worker_thread */
  for (int i = 1; i < sched_state.cfg.nworkers; i++) {
    pthread_t detached;
    if (pthread_create(&detached, &attr, worker_thread, &sched_state.workers[i]) != 0)
      skn_fatal("cannot start worker thread %d: %s", i, strerror(errno));
  }
  pthread_attr_destroy(&attr);
  worker_loop(&sched_state.workers[0]);
  uint32_t n, others = (uint32_t)sched_state.cfg.nworkers - 1;
  while ((n = atomic_load(&sched_state.ended)) < others) skn_futex_wait(&sched_state.ended, n, -1);
  sched_state.running = false;
}

skn_unit *skn_sched_unit_by_guard(const void *addr) {
  for (ult_record *r = atomic_load(&ult_records); r; r = r->next)
    if ((const char *)addr >= r->guard_lo && (const char *)addr < r->guard_hi) return r->unit;
  return NULL;
}

/* ------------------------------------------------------------------ adopted threads */

skn_unit *skn_sched_adopt_thread(void *owner) {
  /* Units are recycled, never freed: a waker may still hold a pointer to one. */
  skn_spin_lock(&sched_state.adopt_lock);
  skn_unit *u = sched_state.adopt_free;
  if (u) sched_state.adopt_free = (skn_unit *)u->link.next;
  skn_spin_unlock(&sched_state.adopt_lock);
  if (!u && !(u = calloc(1, sizeof *u))) return NULL;
  atomic_store(&u->state, SKN_UNIT_RUNNING);
  u->kind = SKN_UNIT_KTHREAD;
  atomic_store_explicit(&u->worker, NULL, memory_order_relaxed);
  u->owner = owner;
  u->link.next = NULL;
  busy_up();
  skn_sched_current_tls = u;
  return u;
}

void skn_sched_release_thread(void) {
  skn_unit *u = skn_sched_current_tls;
  if (!u || u->kind != SKN_UNIT_KTHREAD) return;
  skn_sched_current_tls = NULL;
  busy_down();
  skn_spin_lock(&sched_state.adopt_lock);
  u->link.next = (skn_readyq_node *)sched_state.adopt_free;
  sched_state.adopt_free = u;
  skn_spin_unlock(&sched_state.adopt_lock);
}

/* ------------------------------------------------------------------ watchdog
 * A ULT that blocks in the kernel (a call Skein does not turn into a scheduler wait)
 * holds its worker: the worker's other ready units cannot run, and since the worker
 * counts as busy the stall hook never runs. The watchdog notices a worker that has not
 * switched units while some were ready and its kernel thread slept the whole time, with
 * no child process of that thread still running and not inside file-system work (waits
 * that end by themselves). */

static struct {
  unsigned ms;
  bool alone;
  void (*report)(int, skn_unit *);
} WD;

/* Reads a /proc file into buf (NUL-terminated); false when it cannot. */
static bool read_proc(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, buf, size - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

/* The state letter of a /proc/.../stat file (after the command name, which may hold
 * spaces and parentheses), or 0 when it cannot be read. */
static char proc_state(const char *path) {
  char buf[256];
  if (!read_proc(path, buf, sizeof buf)) return 0;
  const char *p = strrchr(buf, ')');
  return p && p[1] == ' ' ? p[2] : 0;
}

/* Whether the kernel thread `tid` of this process sleeps in the kernel. */
static bool kthread_sleeping(int tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
  char s = proc_state(path);
  return s == 'S' || s == 'D';
}

/* Whether the kernel thread `tid` has a child process that has not ended: a thread that
 * waits for its child (popen's pipe read, pclose, system: libc's internal calls, which
 * Skein cannot turn into scheduler waits) waits for something outside the job that ends
 * on its own, however long a loaded machine takes to run it. */
static bool kthread_has_live_child(int tid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/self/task/%d/children", tid);
  if (!read_proc(path, buf, sizeof buf)) return false;
  for (char *p = buf, *end; *p; p = end) {
    long pid = strtol(p, &end, 10);
    if (end == p) break;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    char s = proc_state(path);
    if (s && s != 'Z' && s != 'X') return true;
  }
  return false;
}

/* Whether the kernel thread `tid` sleeps in a system call on files or the file system:
 * waits on a disk or a parallel file system (an fsync of a checkpoint, a write to a busy
 * server, mount) end by themselves however long they take, and no rank can be what they
 * wait for. Reads and writes count only on regular files and block devices (a pipe or a
 * socket can wait for a rank the worker cannot run). Not here: open (a FIFO waits for its
 * other end), fcntl and flock locks (ranks are threads: each rank's own open file
 * description can wait for a lock another rank of the same worker holds). */
static bool kthread_in_file_call(int tid) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
  if (!read_proc(path, buf, sizeof buf)) return false;
  char *end;
  long nr = strtol(buf, &end, 10);
  if (end == buf) return false; /* "running" */
  switch (nr) {
  case SYS_read: case SYS_write: case SYS_readv: case SYS_writev: {
    /* the first argument, written 0x...; stat through /proc, not fstat: the descriptor is
     * another thread's (TSan takes an fstat of it for an unsynchronized access) */
    long fd = strtol(end, NULL, 16);
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/fd/%ld", fd);
    return fd >= 0 && stat(path, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
  }
  case SYS_pread64: case SYS_pwrite64: case SYS_preadv: case SYS_pwritev: case SYS_preadv2: case SYS_pwritev2:
  case SYS_fsync: case SYS_fdatasync: case SYS_sync: case SYS_syncfs: case SYS_sync_file_range:
  case SYS_ftruncate: case SYS_truncate: case SYS_fallocate: case SYS_copy_file_range:
  case SYS_mkdirat: case SYS_unlinkat: case SYS_renameat2: case SYS_newfstatat: case SYS_statx:
  case SYS_getdents64: case SYS_mount: case SYS_umount2:
#ifdef SYS_mkdir /* the older calls some architectures still have */
  case SYS_mkdir: case SYS_rmdir: case SYS_unlink: case SYS_rename: case SYS_stat: case SYS_lstat:
#endif
    return true;
  default:
    return false;
  }
}

/* Whether the kernel thread `tid` sleeps in a wait that may be for the job itself. */
static bool kthread_waits_on_job(int tid) {
  return kthread_sleeping(tid) && !kthread_has_live_child(tid) && !kthread_in_file_call(tid);
}

static void *watchdog_main(void *unused) {
  (void)unused;
  int n = sched_state.cfg.nworkers;
  uint64_t *last = calloc((size_t)n, sizeof *last), *since = calloc((size_t)n, sizeof *since);
  if (!last || !since) return NULL;
  struct timespec tick = {WD.ms / 4 / 1000, (long)(WD.ms / 4 % 1000) * 1000000L + 1000000L};
  while (atomic_load_explicit(&sched_state.busy, memory_order_relaxed) >= 0) {
    clock_nanosleep(CLOCK_MONOTONIC, 0, &tick, NULL);
    uint64_t now = skn_now_ns();
    for (int i = 0; i < n; i++) {
      skn_worker *w = &sched_state.workers[i];
      uint64_t sw = atomic_load_explicit(&w->switches, memory_order_relaxed);
      skn_unit *cur = atomic_load_explicit(&w->current, memory_order_relaxed);
      /* Others wait for the worker; or, units having moved away from it, every other unit
       * waits (for the held one, in a job of one process: nothing else can wake them). */
      bool quiet = WD.alone && atomic_load(&sched_state.busy) == 1 && atomic_load(&sched_state.timed) == 0;
      bool stuck = cur && sw == last[i] && atomic_load(&cur->state) == SKN_UNIT_RUNNING &&
                   (skn_sched_worker_has_ready(w) || quiet) &&
                   kthread_waits_on_job(atomic_load_explicit(&w->tid, memory_order_relaxed));
      last[i] = sw;
      if (!stuck) {
        since[i] = 0;
      } else if (!since[i]) {
        since[i] = now;
      } else if (now - since[i] >= (uint64_t)WD.ms * 1000000u) {
        WD.report(i, cur);
        since[i] = 0;
      }
    }
  }
  return NULL;
}

void skn_sched_start_watchdog(unsigned ms, bool alone, void (*report)(int, skn_unit *)) {
  WD.ms = ms ? ms : 1000;
  WD.alone = alone;
  WD.report = report;
  pthread_t t;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&a, 64 << 10);
  pthread_create(&t, &a, watchdog_main, NULL);
  pthread_attr_destroy(&a);
}
