/* Per-rank state for libc functions that keep hidden process-wide state.
 *
 * Legacy codes expect rand(), random(), drand48(), strtok(), getopt(), localtime() and
 * friends to keep their state per process. Ranks are threads here, so libskein.so (ahead
 * of libc in the program's lookup scope) interposes them: on a unit acting for a rank they
 * run glibc's reentrant variants on state owned by that rank, shared by the threads the
 * rank creates as in a process; anywhere else (before start-up, foreign threads) they call
 * libc's own. Programs need no recompilation.
 *
 * getopt's variables (optind, optarg, opterr, optopt) live in the executable and are read
 * directly by the program, so they cannot be made per rank: a process-wide token (the
 * "parser") lets one rank at a time parse, from its first getopt call to the call that
 * returns -1; waiting ranks block in the scheduler. See "getopt" below.
 *
 * Thread safety: a rank's state is touched by that rank's units; the random() family
 * locks as glibc's does (drand48, strtok and the static-buffer functions do not lock in
 * glibc either); the parser token is guarded by its own lock. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "interpose.h"
#include "libc_state.h"

/* glibc's size for asctime's static buffer (time/asctime.c): room for any int year. */
#define ASCTIME_BUF (3 + 1 + 3 + 1 + 20 + 1 + 20 + 1 + 20 + 1 + 20 + 1 + 20 + 1 + 1)

struct skn_libc_state {
  /* rand(), random() and friends: one generator, as in glibc (rand() is random()).
   * random_tbl is glibc's default TYPE_3 table, set up as initstate(1, tbl, 128). */
  skn_spinlock random_lock;
  struct random_data random;
  int32_t random_tbl[32];
  /* drand48() family: all-zero is glibc's initial state (parameters set on first use) */
  struct drand48_data d48;
  char *strtok_next;
  /* Static-buffer results. localtime, gmtime and ctime share one struct tm as in glibc. */
  struct tm tm;
  char asctime_buf[ASCTIME_BUF];
  char strerror_buf[256];
  char strsignal_buf[256];
  char inet_buf[18];
  char tmpnam_buf[L_tmpnam];
  char login_buf[LOGIN_NAME_MAX + 1];
  char *ttyname_buf;
  size_t ttyname_len;
  /* getopt: how glibc ordered arguments at this rank's last (re)initialization, as an
   * optstring prefix ("+", "-" or ""): a later `optind = 1` keeps it, as in a process */
  const char *getopt_order;
  bool getopt_done; /* a parse of this rank has returned -1 */
};

/* ------------------------------------------------------------------ helpers */

void *skn_real_fn(void *_Atomic *slot, const char *name) {
  void *p = atomic_load_explicit(slot, memory_order_relaxed);
  if (SKN_LIKELY(p != NULL)) return p;
  p = dlsym(RTLD_NEXT, name);
  if (!p) skn_fatal("cannot find libc's %s: %s", name, dlerror());
  atomic_store_explicit(slot, p, memory_order_relaxed);
  return p;
}

static struct skn_libc_state *state_create(skn_rank *r) {
  struct skn_libc_state *s = calloc(1, sizeof *s);
  if (!s) skn_fatal("rank %d: out of memory for its libc state", r->world_rank);
  if (initstate_r(1, (char *)s->random_tbl, sizeof s->random_tbl, &s->random) != 0)
    skn_fatal("rank %d: initstate_r failed", r->world_rank);
  struct skn_libc_state *none = NULL;
  if (!atomic_compare_exchange_strong(&r->libc, &none, s)) { /* another thread of r won */
    free(s);
    return none;
  }
  return s;
}

/* The calling rank's state, created on first use. */
static inline struct skn_libc_state *state_of(skn_rank *r) {
  struct skn_libc_state *s = atomic_load_explicit(&r->libc, memory_order_acquire);
  return SKN_LIKELY(s != NULL) ? s : state_create(r);
}

/* ------------------------------------------------------------------ rand, random */

static int32_t random_draw(struct skn_libc_state *s) {
  int32_t v;
  skn_spin_lock(&s->random_lock);
  random_r(&s->random, &v);
  skn_spin_unlock(&s->random_lock);
  return v;
}

static void random_seed(struct skn_libc_state *s, unsigned seed) {
  skn_spin_lock(&s->random_lock);
  srandom_r(seed, &s->random);
  skn_spin_unlock(&s->random_lock);
}

SKN_EXPORT int rand(void) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(rand)();
  return (int)random_draw(state_of(r));
}

SKN_EXPORT long random(void) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(random)();
  return random_draw(state_of(r));
}

SKN_EXPORT void srand(unsigned seed) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(srand)(seed);
  random_seed(state_of(r), seed);
}

SKN_EXPORT void srandom(unsigned seed) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(srandom)(seed);
  random_seed(state_of(r), seed);
}

/* As glibc: the result is the previous state array, whose word 0 holds its type. */
SKN_EXPORT char *initstate(unsigned seed, char *state, size_t n) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(initstate)(seed, state, n);
  struct skn_libc_state *s = state_of(r);
  skn_spin_lock(&s->random_lock);
  char *old = (char *)&s->random.state[-1];
  int rc = initstate_r(seed, state, n, &s->random);
  skn_spin_unlock(&s->random_lock);
  return rc == -1 ? NULL : old;
}

SKN_EXPORT char *setstate(char *state) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(setstate)(state);
  struct skn_libc_state *s = state_of(r);
  skn_spin_lock(&s->random_lock);
  char *old = (char *)&s->random.state[-1];
  if (setstate_r(state, &s->random) < 0) old = NULL;
  skn_spin_unlock(&s->random_lock);
  return old;
}

/* ------------------------------------------------------------------ drand48 */

SKN_EXPORT double drand48(void) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(drand48)();
  double d;
  drand48_r(&state_of(r)->d48, &d);
  return d;
}

SKN_EXPORT double erand48(unsigned short xsubi[3]) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(erand48)(xsubi);
  double d;
  erand48_r(xsubi, &state_of(r)->d48, &d);
  return d;
}

SKN_EXPORT long lrand48(void) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(lrand48)();
  long v;
  lrand48_r(&state_of(r)->d48, &v);
  return v;
}

SKN_EXPORT long nrand48(unsigned short xsubi[3]) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(nrand48)(xsubi);
  long v;
  nrand48_r(xsubi, &state_of(r)->d48, &v);
  return v;
}

SKN_EXPORT long mrand48(void) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(mrand48)();
  long v;
  mrand48_r(&state_of(r)->d48, &v);
  return v;
}

SKN_EXPORT long jrand48(unsigned short xsubi[3]) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(jrand48)(xsubi);
  long v;
  jrand48_r(xsubi, &state_of(r)->d48, &v);
  return v;
}

SKN_EXPORT void srand48(long seed) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(srand48)(seed);
  srand48_r(seed, &state_of(r)->d48);
}

/* As glibc: returns the previous seed, kept in the state. */
SKN_EXPORT unsigned short *seed48(unsigned short seed16v[3]) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(seed48)(seed16v);
  struct skn_libc_state *s = state_of(r);
  seed48_r(seed16v, &s->d48);
  return s->d48.__old_x;
}

SKN_EXPORT void lcong48(unsigned short param[7]) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(lcong48)(param);
  lcong48_r(param, &state_of(r)->d48);
}

/* ------------------------------------------------------------------ strtok */

SKN_EXPORT char *strtok(char *str, const char *delim) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(strtok)(str, delim);
  return strtok_r(str, delim, &state_of(r)->strtok_next);
}

/* ------------------------------------------------------------------ time */

static struct tm *local_into(struct skn_libc_state *s, const time_t *t) {
  tzset(); /* localtime() rereads TZ on every call; localtime_r() need not */
  return localtime_r(t, &s->tm);
}

static skn_spinlock asctime_lock = SKN_SPINLOCK_INIT;

static char *asctime_into(struct skn_libc_state *s, const struct tm *tp) {
  if (!tp) { /* ctime() of an unrepresentable time */
    errno = EINVAL;
    return NULL;
  }
  int saved = errno;
  if (asctime_r(tp, s->asctime_buf)) return s->asctime_buf;
  if (errno != EOVERFLOW) return NULL;
  /* A year of 5 digits or more overflows asctime_r's 26 bytes but not asctime's buffer:
   * take libc's result under a lock and copy it (same buffer size). */
  errno = saved;
  skn_spin_lock(&asctime_lock);
  char *p = SKN_REAL(asctime)(tp);
  if (p) memcpy(s->asctime_buf, p, strnlen(p, ASCTIME_BUF - 1) + 1);
  skn_spin_unlock(&asctime_lock);
  return p ? s->asctime_buf : NULL;
}

SKN_EXPORT struct tm *localtime(const time_t *t) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(localtime)(t);
  return local_into(state_of(r), t);
}

SKN_EXPORT struct tm *gmtime(const time_t *t) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(gmtime)(t);
  return gmtime_r(t, &state_of(r)->tm);
}

SKN_EXPORT char *asctime(const struct tm *tp) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(asctime)(tp);
  return asctime_into(state_of(r), tp);
}

/* As glibc: asctime(localtime(t)), so it also overwrites localtime's struct tm. */
SKN_EXPORT char *ctime(const time_t *t) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(ctime)(t);
  struct skn_libc_state *s = state_of(r);
  return asctime_into(s, local_into(s, t));
}

/* ------------------------------------------------------------------ other static buffers */

/* glibc formats unknown codes into a buffer of the calling kernel thread, which ranks on
 * one worker share: copy it to the rank's buffer before anything can switch. Known codes
 * give constant (translated) strings. */
static char *keep(char *dst, size_t size, const char *p) {
  if (!p) return NULL;
  size_t n = strnlen(p, size - 1);
  memcpy(dst, p, n);
  dst[n] = '\0';
  return dst;
}

SKN_EXPORT char *strerror(int errnum) {
  skn_rank *r = skn_rank_self();
  char *p = SKN_REAL(strerror)(errnum);
  if (!r || strerrordesc_np(errnum)) return p;
  struct skn_libc_state *s = state_of(r);
  return keep(s->strerror_buf, sizeof s->strerror_buf, p);
}

SKN_EXPORT char *strerror_l(int errnum, locale_t loc) {
  skn_rank *r = skn_rank_self();
  char *p = SKN_REAL(strerror_l)(errnum, loc);
  if (!r || strerrordesc_np(errnum)) return p;
  struct skn_libc_state *s = state_of(r);
  return keep(s->strerror_buf, sizeof s->strerror_buf, p);
}

SKN_EXPORT char *strsignal(int sig) {
  skn_rank *r = skn_rank_self();
  char *p = SKN_REAL(strsignal)(sig);
  if (!r || sigdescr_np(sig)) return p;
  struct skn_libc_state *s = state_of(r);
  return keep(s->strsignal_buf, sizeof s->strsignal_buf, p);
}

SKN_EXPORT char *inet_ntoa(struct in_addr in) {
  skn_rank *r = skn_rank_self();
  char *p = SKN_REAL(inet_ntoa)(in); /* a per-kernel-thread buffer in glibc */
  if (!r) return p;
  struct skn_libc_state *s = state_of(r);
  return keep(s->inet_buf, sizeof s->inet_buf, p);
}

SKN_EXPORT char *tmpnam(char buf[L_tmpnam]) {
  skn_rank *r = skn_rank_self();
  if (!r || buf) return SKN_REAL(tmpnam)(buf);
  return SKN_REAL(tmpnam)(state_of(r)->tmpnam_buf);
}

SKN_EXPORT char *getlogin(void) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(getlogin)();
  struct skn_libc_state *s = state_of(r);
  int rc = getlogin_r(s->login_buf, sizeof s->login_buf);
  if (rc != 0) {
    errno = rc;
    return NULL;
  }
  return s->login_buf;
}

SKN_EXPORT char *ttyname(int fd) {
  skn_rank *r = skn_rank_self();
  if (!r) return SKN_REAL(ttyname)(fd);
  struct skn_libc_state *s = state_of(r);
  for (;;) {
    if (!s->ttyname_buf) {
      if (!(s->ttyname_buf = malloc(64))) return NULL; /* errno is ENOMEM */
      s->ttyname_len = 64;
    }
    int rc = ttyname_r(fd, s->ttyname_buf, s->ttyname_len);
    if (rc == 0) return s->ttyname_buf;
    if (rc != ERANGE || s->ttyname_len >= PATH_MAX) {
      errno = rc;
      return NULL;
    }
    char *bigger = realloc(s->ttyname_buf, s->ttyname_len * 2);
    if (!bigger) return NULL;
    s->ttyname_buf = bigger;
    s->ttyname_len *= 2;
  }
}

/* ------------------------------------------------------------------ getopt
 *
 * glibc's getopt keeps hidden state (the position inside a cluster of short options, the
 * permutation bounds, the ordering chosen at initialization) and talks to the program
 * through four variables the program reads and writes directly. Both are process-wide,
 * so one rank at a time owns "the parser": from its first getopt call until the call
 * that returns -1 (or until the rank ends). Other ranks' getopt calls wait in the
 * scheduler meanwhile; a release wakes the longest waiting one.
 *
 * Taking the parser. If the rank was the last to parse and did not have to wait, glibc's
 * state is still its own: nothing is done, so every reset or continuation behaves
 * exactly as in a process. Otherwise the rank reinitializes glibc's hidden state (a dummy
 * call with optind = 0 on an empty argument list) with the argument ordering its own
 * state had (or this call's optstring, for its first parse and for `optind = 0`), and
 * starts at optind 1, or where the rank set optind itself since the machinery last set
 * it (`optind = k` to skip arguments). What is lost is only the position a finished
 * parse ended at: a rank that calls getopt again after -1 without resetting optind, once
 * another rank has parsed, parses again from 1 where a process would get -1.
 *
 * Stray resets. A rank that assigns optind = 0 or 1 to parse again writes the shared
 * variable, perhaps under another rank's parse on another worker. The machinery records
 * the value it last left in optind (GO.expect, always updated together with optind under
 * GO.lock); the resetting rank, when its getopt call finds the parser busy and a reset in
 * optind, puts the owner's value back and starts there when it gets the parser. Its
 * assignment may also land inside the owner's call and be overwritten: a rank that had
 * to wait and saw no assignment takes it as `optind = 0`. An owner
 * whose next call finds such a reset first cannot tell it from its own restart (`optind =
 * 0` after leaving its loop early): on several workers it waits up to STRAY_GRACE_NS for
 * a resetting rank to undo it, then takes it as its own. (On one worker a resetting rank
 * always reaches getopt before the owner runs again.)
 *
 * opterr is shared (every rank's program sets it alike). optarg and optopt are written by
 * each call; optarg is NULL after -1.
 *
 * The hold. A rank whose parse returned -1 still reads optind (and may reset it and parse
 * again, a pre-scan then the real parse). So it keeps the parser, with no other rank
 * waiting, until it shows that its parse is over: its next MPI call (skn_api_self ends
 * the rank's SKN_GATE_HOLD, from any thread of the rank), its next getopt call (a new parse of its
 * own) or its end. The next rank takes the parser under GO.lock, which the holder took
 * to end the hold after its last read: a hand-over (happens-before), not a time. */

enum { GETOPT_SHORT, GETOPT_POSIX, GETOPT_LONG, GETOPT_LONG_ONLY };

typedef struct getopt_waiter {
  skn_unit *unit;
  skn_rank *rank;
  struct getopt_waiter *next;
  _Atomic(bool) woken; /* set last: the node (on the waiter's stack) may vanish after */
} getopt_waiter;

static struct {
  skn_spinlock lock;
  _Atomic(skn_rank *) owner; /* rank whose parse is in progress, or NULL */
  skn_rank *last_owner;      /* the rank glibc's hidden state belongs to */
  getopt_waiter *head;       /* waiting units, FIFO */
  int expect;                /* optind as the machinery last left it */
  skn_rank *hold;            /* a rank whose parse returned -1 and that holds the parser
                              * until its next MPI call, getopt call or end (see above) */
} GO = {.expect = 1};

SKN_EXPORT int __posix_getopt(int argc, char *const *argv, const char *opts);

static int getopt_real(int kind, int argc, char *const *argv, const char *opts, const struct option *lo,
                       int *li) {
  switch (kind) {
    case GETOPT_SHORT: return SKN_REAL(getopt)(argc, argv, opts);
    case GETOPT_POSIX: return SKN_REAL(__posix_getopt)(argc, argv, opts);
    case GETOPT_LONG: return SKN_REAL(getopt_long)(argc, argv, opts, lo, li);
    default: return SKN_REAL(getopt_long_only)(argc, argv, opts, lo, li);
  }
}

/* How long an owner that finds a reset the machinery did not make waits for the rank
 * that made it (if another one did) to arrive: far above the few instructions from
 * `optind = 0;` to the getopt call, and above the time slice of a preempted thread on a
 * loaded machine. Paid only by a rank that restarts its own parse before -1 on several
 * workers. */
#define STRAY_GRACE_NS 5000000

/* A reset (0 or 1) the machinery did not make. */
static inline bool stray_reset(void) { return (optind == 0 || optind == 1) && optind != GO.expect; }

/* Called with GO.lock held: takes the first waiting unit off the queue, to be woken by
 * parser_wake after unlocking. The woken unit competes for the parser again. */
static getopt_waiter *parser_next_locked(void) {
  getopt_waiter *w = GO.head;
  if (w) GO.head = w->next;
  return w;
}

/* Called with GO.lock held by the owner: frees the parser. With `hold` (its parse returned
 * -1) r keeps it from other ranks until its hold ends (libc_hold_end); else the first waiter is
 * returned, to be woken. */
static getopt_waiter *parser_release_locked(skn_rank *r, bool hold) {
  GO.expect = optind;
  atomic_store(&GO.owner, NULL);
  if (hold) {
    GO.hold = r;
    __atomic_fetch_or(&r->api_gate, SKN_GATE_HOLD, __ATOMIC_RELAXED); /* its next MPI call ends it */
    return NULL;
  }
  return parser_next_locked();
}

/* Called with GO.lock held: ends r's hold, if it has one; returns the waiter to wake. */
static getopt_waiter *hold_end_locked(skn_rank *r) {
  if (!skn_rank_libc_held(r)) return NULL;
  __atomic_fetch_and(&r->api_gate, (uint8_t)~SKN_GATE_HOLD, __ATOMIC_RELAXED);
  if (GO.hold != r) return NULL;
  GO.hold = NULL;
  return atomic_load_explicit(&GO.owner, memory_order_relaxed) ? NULL : parser_next_locked();
}

static void parser_wake(getopt_waiter *w) {
  if (!w) return;
  skn_unit *u = w->unit;
  atomic_store(&w->woken, true); /* last touch: the node lives on the waiter's stack */
  skn_sched_wake(u);             /* units are never freed */
}

/* The ordering glibc chooses when it (re)initializes for this call (getopt.c,
 * _getopt_initialize), as the optstring prefix that selects it. */
static const char *getopt_order_of(int kind, const char *opts) {
  if (opts[0] == '-') return "-";
  if (opts[0] == '+' || kind == GETOPT_POSIX || getenv("POSIXLY_CORRECT")) return "+";
  return "";
}

/* Called by the new owner r with GO.lock held: replaces glibc's hidden state (another
 * rank's) by what r's own would be at the start of a parse from `start`: a reinitialized
 * state (first/last skipped argument and cluster position reset, as `optind = 1` leaves
 * them), ordered as r's last initialization, or as this call's when it is r's first or
 * start is 0 (glibc reinitializes then). */
static void parser_setup(struct skn_libc_state *s, int start, int kind, const char *opts,
                         const struct option *lo) {
  static char *const empty[] = {(char *)"", NULL};
  optind = 0; /* the next call initializes, finds no argument and returns -1 */
  if (!s->getopt_order || start == 0) {
    s->getopt_order = getopt_order_of(kind, opts);
    getopt_real(kind, 1, empty, opts, lo, NULL);
  } else {
    getopt_real(GETOPT_SHORT, 1, empty, s->getopt_order, NULL, NULL);
  }
  optind = start > 1 ? start : 1;
  GO.expect = optind;
}

/* Takes the parser for rank r, waiting while another rank parses, and sets up r's parse.
 * Returns at once when a thread of r holds it already. */
static void parser_acquire(skn_rank *r, int kind, const char *opts, const struct option *lo) {
  skn_unit *me = skn_sched_self();
  struct skn_libc_state *s = state_of(r);
  int wrote = -1; /* the rank's own assignment to optind, when seen */
  bool waited = false;
  skn_spin_lock(&GO.lock);
  for (;;) {
    skn_rank *owner = atomic_load_explicit(&GO.owner, memory_order_relaxed);
    if (owner == r) {
      skn_spin_unlock(&GO.lock);
      return;
    }
    if (!owner && (!GO.hold || GO.hold == r)) break;
    /* A reset under another rank's parse, by a rank that has parsed before: ours (only
     * such ranks reset), to be undone there. Not during a hold: the holder resets. */
    if (owner && !waited && s->getopt_done && stray_reset()) {
      wrote = optind;
      optind = GO.expect;
    }
    waited = true;
    getopt_waiter w = {.unit = me, .rank = r}, **pp = &GO.head;
    while (*pp) pp = &(*pp)->next;
    *pp = &w;
    skn_spin_unlock(&GO.lock);
    bool main_unit = r->unit == me;
    skn_call saved = skn_call_read(&r->call);
    if (main_unit && !saved.fn) /* named in a deadlock report */
      skn_call_record(&r->call, (skn_call){.fn = "getopt", .origin = NULL, .peer = MPI_UNDEFINED, .tag = MPI_UNDEFINED});
    for (;;) {
      skn_sched_prepare_wait(me);
      if (atomic_load(&w.woken)) break;
      skn_sched_wait(me);
    }
    skn_sched_done_waiting(me);
    if (main_unit) skn_call_record(&r->call, saved);
    skn_spin_lock(&GO.lock);
  }
  atomic_store(&GO.owner, r);
  hold_end_locked(r); /* its own hold, if any (it parses again): none to wake, r owns it */
  if (!waited) {
    if (GO.last_owner == r) { /* glibc's state is still this rank's: exactly a process */
      GO.expect = optind;     /* the rank's own assignment, if any, is no stray */
      skn_spin_unlock(&GO.lock);
      return;
    }
    if (optind != GO.expect) wrote = optind;
  }
  /* Not seen: the rank's first parse, or a reset that the owner's call overwrote while
   * the rank waited, taken as `optind = 0` (this call's optstring decides the ordering;
   * programs rarely parse one argv with two orderings). */
  parser_setup(s, wrote >= 0 ? wrote : 0, kind, opts, lo);
  GO.last_owner = r;
  skn_spin_unlock(&GO.lock);
}

static int getopt_common(int kind, int argc, char *const *argv, const char *opts, const struct option *lo,
                         int *li) {
  skn_rank *r = skn_rank_self();
  if (!r) return getopt_real(kind, argc, argv, opts, lo, li);
  if (atomic_load_explicit(&GO.owner, memory_order_acquire) != r) parser_acquire(r, kind, opts, lo);
  skn_spin_lock(&GO.lock);
  if (SKN_UNLIKELY(stray_reset()) && skn_sched_nworkers() > 1) {
    /* This rank's own restart, or another rank's reset on its way into parser_acquire
     * (which undoes it): give such ranks a moment to arrive before taking it as ours. */
    uint64_t t0 = skn_now_ns();
    do {
      skn_spin_unlock(&GO.lock);
      while (__atomic_load_n(&optind, __ATOMIC_RELAXED) != GO.expect && skn_now_ns() - t0 < STRAY_GRACE_NS)
        skn_cpu_relax();
      skn_spin_lock(&GO.lock);
    } while (stray_reset() && skn_now_ns() - t0 < STRAY_GRACE_NS);
  }
  int c = getopt_real(kind, argc, argv, opts, lo, li);
  GO.expect = optind;
  getopt_waiter *next = NULL;
  if (c == -1) {
    state_of(r)->getopt_done = true;
    next = parser_release_locked(r, true);
  }
  skn_spin_unlock(&GO.lock);
  parser_wake(next);
  return c;
}

SKN_EXPORT int getopt(int argc, char *const *argv, const char *opts) {
  return getopt_common(GETOPT_SHORT, argc, argv, opts, NULL, NULL);
}

/* getopt() of programs built with a strict POSIX feature set (no argument permutation). */
SKN_EXPORT int __posix_getopt(int argc, char *const *argv, const char *opts) {
  return getopt_common(GETOPT_POSIX, argc, argv, opts, NULL, NULL);
}

SKN_EXPORT int getopt_long(int argc, char *const *argv, const char *opts, const struct option *lo, int *li) {
  return getopt_common(GETOPT_LONG, argc, argv, opts, lo, li);
}

SKN_EXPORT int getopt_long_only(int argc, char *const *argv, const char *opts, const struct option *lo,
                                int *li) {
  return getopt_common(GETOPT_LONG_ONLY, argc, argv, opts, lo, li);
}

/* The hold of rank r ends (its next MPI call, through skn_rank_libc_hold_end). */
static void libc_hold_end(skn_rank *r) {
  skn_spin_lock(&GO.lock);
  getopt_waiter *next = hold_end_locked(r);
  skn_spin_unlock(&GO.lock);
  parser_wake(next);
}

/* core's MPI calls end a hold through this (core cannot call up into boot) */
__attribute__((constructor)) static void libc_hold_hook(void) { skn_rank_libc_hold_end = libc_hold_end; }

void skn_libc_rank_end(skn_rank *r) {
  if (atomic_load(&GO.owner) != r && !skn_rank_libc_held(r)) return;
  skn_spin_lock(&GO.lock);
  getopt_waiter *next = atomic_load_explicit(&GO.owner, memory_order_relaxed) == r ? parser_release_locked(r, false)
                                                                                   : hold_end_locked(r);
  skn_spin_unlock(&GO.lock);
  parser_wake(next);
}
