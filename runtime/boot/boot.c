/* Start-up and end of a job inside one process.
 *
 * Skein takes control before the program's main by interposing __libc_start_main: the
 * program keeps an ordinary main (in C, C++ or a file that never includes mpi.h), and the
 * runtime calls it once per rank, each on a user-level thread. exit() and returning from
 * main end one rank; the process ends when every rank has, with the first non-zero rank
 * exit code. Threads a rank creates act for that rank. Fatal signals and deadlocks are
 * reported with the rank they concern. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "sched/hwtopo.h"
#include "allocator/heap.h"
#include "priv/priv.h"
#include "pmi/pmi.h"
#include "boot.h"
#include "blocking.h"
#include "libc_state.h"

typedef int (*main_fn)(int, char **, char **);
typedef int (*libc_start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);

static struct {
  main_fn user_main;
  int argc;
  char **argv;
  char **envp;
  bool running; /* ranks exist: exit() ends a rank */
  skn_boot_config cfg;
  cpu_set_t process_cpus;
  pthread_key_t thread_key;
  char ***argvs; /* each local rank's copy of argv while it runs, and after exit() */
} boot_state;

static _Noreturn void real_exit(int code) {
  void (*fn)(int) = (void (*)(int))dlsym(RTLD_NEXT, "exit");
  fn(code);
  _exit(code);
}

/* ------------------------------------------------------------------ ranks */

static void rank_end(skn_rank *r, int code) {
  skn_libc_rank_end(r); /* another rank may be waiting for getopt's parser */
  skn_priv_rank_end(r); /* the rank's C++ destructors, then its copy of the globals */
  skn_heap_rank_end(r->heap); /* called on the rank's ULT: flushes its tcache, keeps stats */
  r->exit_code = code;
  __atomic_store_n(&r->state, SKN_RANK_EXITED, __ATOMIC_RELAXED);
  int none = 0;
  if (code != 0) atomic_compare_exchange_strong(&skn_job_g.first_exit_code, &none, code);
}

static char **copy_argv(int argc, char **argv) {
  /* Each rank may permute or edit its argv (getopt does): give each its own. */
  char **v = calloc((size_t)argc + 1, sizeof(char *));
  if (!v) skn_fatal("out of memory copying argv");
  for (int i = 0; i < argc; i++)
    if (!(v[i] = strdup(argv[i]))) skn_fatal("out of memory copying argv");
  return v;
}

static void free_argv(char **v) {
  for (char **p = v; *p; p++) free(*p);
  free(v);
}

static void rank_main(void *arg) {
  skn_rank *r = arg;
  char ***slot = &boot_state.argvs[r->world_rank - skn_job_g.first_rank];
  char **argv = *slot = copy_argv(boot_state.argc, boot_state.argv);
  skn_priv_rank_start(r); /* its copy of the privatized globals, its constructors */
  int code = boot_state.user_main(boot_state.argc, argv, boot_state.envp);
  /* A rank ended by exit() keeps its copy, as a process would: held in argvs, it is not
   * a leak (its ULT's stack, the only other reference, is gone). */
  *slot = NULL;
  free_argv(argv);
  rank_end(r, code);
}

/* exit() from a rank ends that rank only; from anywhere else, the process. */
SKN_EXPORT void exit(int code) {
  skn_unit *u = skn_sched_self();
  if (boot_state.running && u && u->kind == SKN_UNIT_ULT && u->owner) {
    fflush(NULL);
    rank_end(u->owner, code);
    skn_sched_exit();
  }
  real_exit(code);
}

/* ------------------------------------------------------------------ threads of a rank */

typedef struct thread_start {
  void *(*fn)(void *);
  void *arg;
  skn_rank *rank;
  skn_rank_thread *rec; /* for a ULT's pthread_join (blocking.c) */
  bool unbind; /* drop the worker's single-core binding inherited from the creator */
} thread_start;

static void thread_done(void *rec) {
  skn_sched_release_thread();
  skn_blocking_thread_ended(rec);
}

static void *thread_trampoline(void *p) {
  thread_start ts = *(thread_start *)p;
  free(p);
  if (ts.unbind) sched_setaffinity(0, sizeof boot_state.process_cpus, &boot_state.process_cpus);
  skn_sched_adopt_thread(ts.rank);
  skn_heap_adopt_thread(ts.rank->heap); /* allocate from the rank's arena */
  pthread_setspecific(boot_state.thread_key, ts.rec); /* runs thread_done at exit */
  return ts.fn(ts.arg);
}

static bool attr_has_affinity(const pthread_attr_t *attr) {
  cpu_set_t set;
  if (!attr || pthread_attr_getaffinity_np(attr, sizeof set, &set) != 0) return false;
  return CPU_COUNT(&set) < CPU_SETSIZE;
}

#ifdef __SANITIZE_THREAD__
/* Under TSan the program's pthread_create reaches libtsan's interceptor first (libtsan
 * comes first in the lookup order), which calls this one with its own start routine and a
 * ThreadParam whose first two fields are the program's routine and argument (gcc 12's
 * libsanitizer, tsan_interceptors_posix.cpp). The new thread must run no instrumented code
 * before that start routine has set up TSan's per-thread state (thread_trampoline crashed
 * in __tsan_func_entry), so the trampoline goes inside it, in place of the program's routine. */
typedef struct tsan_thread_param {
  void *(*callback)(void *);
  void *param;
} tsan_thread_param;

/* Whether fn is in libtsan: its interceptor's start routine (with a ThreadParam), or the
 * routine of TSan's background thread (started with no argument), which is no rank's. */
static bool tsan_start_routine(void *(*fn)(void *)) {
  Dl_info info;
  return dladdr((void *)fn, &info) && info.dli_fname && strstr(info.dli_fname, "libtsan");
}
#endif

SKN_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
  static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
  if (!real) real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
  skn_rank *r = skn_rank_self();
  if (!r || !boot_state.running) return real(t, attr, fn, arg);
#ifdef __SANITIZE_THREAD__
  bool via_tsan = tsan_start_routine(fn);
  if (via_tsan && !arg) return real(t, attr, fn, arg); /* TSan's own background thread */
#endif
  thread_start *ts = malloc(sizeof *ts);
  skn_rank_thread *rec = skn_blocking_thread_new();
  if (!ts || !rec) {
    free(ts);
    free(rec);
    return EAGAIN;
  }
  *ts = (thread_start){fn, arg, r, rec, boot_state.cfg.bind && !attr_has_affinity(attr)};
  int rc;
#ifdef __SANITIZE_THREAD__
  if (via_tsan) {
    tsan_thread_param *tp = arg;
    ts->fn = tp->callback;
    ts->arg = tp->param;
    tp->callback = thread_trampoline;
    tp->param = ts;
    rc = real(t, attr, fn, arg);
  } else
#endif
    rc = real(t, attr, thread_trampoline, ts);
  if (rc != 0) {
    free(ts);
    free(rec);
  } else {
    skn_blocking_thread_started(rec, *t);
    /* A rank that made kernel threads stays on its worker from now on: libgomp keeps its
     * thread pool, whose threads act for this rank, per kernel thread of the master (and
     * the threads were placed near it). Pinned for good: the count is never undone. */
    skn_unit *me = skn_sched_self();
    if (me && me->kind == SKN_UNIT_ULT) skn_sched_pin(me);
  }
  return rc;
}

/* ------------------------------------------------------------------ fatal signals */

static const char *signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "segmentation fault (SIGSEGV)";
    case SIGBUS: return "bus error (SIGBUS)";
    case SIGFPE: return "floating-point exception (SIGFPE)";
    case SIGILL: return "illegal instruction (SIGILL)";
    case SIGABRT: return "abort() (SIGABRT)";
    default: return "fatal signal";
  }
}

/* The crash notice is built on the stack and written with one write(): async-signal-safe,
 * and never cut short by another thread ending the process in the middle of it. */
typedef struct notice {
  char buf[512];
  size_t n;
} notice;

static void notice_str(notice *m, const char *s) {
  while (*s && m->n < sizeof m->buf - 1) m->buf[m->n++] = *s++;
}

static void notice_long(notice *m, long v) {
  char d[24];
  int i = (int)sizeof d;
  unsigned long u = v < 0 ? 0ul - (unsigned long)v : (unsigned long)v;
  do {
    d[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) d[--i] = '-';
  while (i < (int)sizeof d && m->n < sizeof m->buf - 1) m->buf[m->n++] = d[i++];
}

/* The unit's rank if it is one of this process's ranks (a crash may come from anywhere:
 * a worker between units, a foreign thread, a corrupted unit). */
static skn_rank *crashed_rank(skn_unit *u) {
  if (!u || !skn_job_g.ranks) return NULL;
  for (int i = skn_job_g.first_rank; i < skn_job_g.first_rank + skn_job_g.nranks; i++)
    if (skn_job_g.ranks[i] == u->owner) return u->owner;
  return NULL;
}

/* Handlers found installed for the fatal signals (a sanitizer's, a debugger's): Skein's
 * notice comes first, then the signal goes on to them. */
static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static struct sigaction chained[sizeof fatal_sigs / sizeof fatal_sigs[0]];

static const struct sigaction *chained_handler(int sig) {
  for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++)
    if (fatal_sigs[i] == sig) return chained[i].sa_handler != SIG_DFL ? &chained[i] : NULL;
  return NULL;
}

static void on_fatal_signal(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  int saved = errno;
  skn_unit *overflowed = (sig == SIGSEGV || sig == SIGBUS) ? skn_sched_unit_by_guard(si->si_addr) : NULL;
  skn_rank *r = crashed_rank(overflowed ? overflowed : skn_sched_self());
  notice m = {.n = 0};
  notice_str(&m, "skein: rank ");
  if (r) notice_long(&m, r->world_rank);
  else notice_str(&m, "?");
  notice_str(&m, ": ");
  if (overflowed) {
    notice_str(&m, "stack overflow (the stack of a rank is ");
    notice_long(&m, (long)(boot_state.cfg.stack_size >> 10));
    notice_str(&m, " KiB; raise it with SKEIN_STACK_SIZE or skeinrun --stack-size)");
  } else {
    notice_str(&m, signal_name(sig));
  }
  const char *fn = r ? skn_call_read(&r->call).fn : NULL;
  if (fn) {
    notice_str(&m, " in ");
    notice_str(&m, fn);
  }
  m.buf[m.n++] = '\n';
  ssize_t rc = write(STDERR_FILENO, m.buf, m.n);
  (void)rc;
  errno = saved;
  const struct sigaction *prev = chained_handler(sig);
  if (prev) sigaction(sig, prev, NULL);
  else signal(sig, SIG_DFL);
  /* a fault recurs on return, now for the previous handler; a sent signal is sent again */
  if (!prev || si->si_code <= 0) raise(sig);
}

static void install_signal_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++) {
    struct sigaction old;
    if (sigaction(fatal_sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    /* a sanitizer's or debugger's handler still reports, after Skein's notice (a rank's
     * stack overflow is named only here) */
    chained[i] = old;
    sigaction(fatal_sigs[i], &sa, NULL);
  }
}

/* ------------------------------------------------------------------ deadlock report */

static void describe_call(const skn_call *rc, char *buf, size_t len) {
  const skn_call call = skn_call_read(rc), *c = &call; /* its rank may still be running */
  const char *fn = c->origin ? c->origin : c->fn;
  const char *peer_name = "peer";
  if (strstr(fn, "recv") || strstr(fn, "Recv") || strstr(fn, "robe")) peer_name = "source";
  else if (strstr(fn, "send") || strstr(fn, "Send")) peer_name = "dest";
  size_t n0 = 0;
  if (c->origin) {
    snprintf(buf, len, "%s on ", c->fn);
    n0 = strlen(buf);
    buf += n0;
    len -= n0;
  }
  if (c->peer == MPI_ANY_SOURCE)
    snprintf(buf, len, "%s(%s=MPI_ANY_SOURCE, ", fn, peer_name);
  else if (c->peer != MPI_PROC_NULL && c->peer != MPI_UNDEFINED)
    snprintf(buf, len, "%s(%s=%d, ", fn, peer_name, c->peer);
  else
    snprintf(buf, len, "%s(", fn);
  size_t n = strlen(buf);
  if (c->tag == MPI_ANY_TAG) snprintf(buf + n, len - n, "tag=MPI_ANY_TAG)");
  else if (c->tag != MPI_UNDEFINED) snprintf(buf + n, len - n, "tag=%d)", c->tag);
  else snprintf(buf + n, len - n, "...)");
}

/* Names this process's ranks and what they wait in (a deadlock: all are blocked; a
 * timeout: some may be running); false when none is left. */
static bool describe_ranks(bool timeout) {
  skn_job *j = &skn_job_g;
  int live = 0, first = j->first_rank, end = j->first_rank + j->nranks;
  for (int i = first; i < end; i++) live += __atomic_load_n(&j->ranks[i]->state, __ATOMIC_RELAXED) != SKN_RANK_EXITED;
  if (live == 0) return false;
  skn_flush_stdio();
  if (timeout)
    skn_log("timeout: the job ran longer than %u s (--timeout, MPIEXEC_TIMEOUT); %d of %d ranks still running",
            boot_state.cfg.timeout_s, live, j->nranks);
  else
    skn_log("deadlock: every rank is blocked and nothing is in flight (%d of %d ranks still running)", live,
            j->nranks);
  for (int i = first; i < end; i++) {
    skn_rank *r = j->ranks[i];
    uint32_t us = atomic_load(&r->unit->state);
    bool blocked = us == SKN_UNIT_BLOCKED || us == SKN_UNIT_BLOCKED_FUTEX;
    if (timeout && __atomic_load_n(&r->state, __ATOMIC_RELAXED) != SKN_RANK_EXITED && !blocked) {
      char buf[256];
      bool in_mpi = skn_call_read(&r->call).fn != NULL;
      if (in_mpi) describe_call(&r->call, buf, sizeof buf);
      skn_log("rank %d is running%s%s", i, in_mpi ? " in " : " outside MPI", in_mpi ? buf : "");
      continue;
    }
    if (__atomic_load_n(&r->state, __ATOMIC_RELAXED) == SKN_RANK_EXITED) {
      skn_log("rank %d has ended (exit code %d)", i, r->exit_code);
    } else if (atomic_load(&r->unit->state) != SKN_UNIT_BLOCKED &&
               atomic_load(&r->unit->state) != SKN_UNIT_BLOCKED_FUTEX) {
      /* Only a wait inside an OpenMP parallel region keeps a worker from its ready ranks. */
      skn_log("rank %d is ready to run, but its worker is held by a rank that waits inside an OpenMP "
              "parallel region (run with at least as many workers as ranks)", i);
    } else if (skn_call_read(&r->call).fn) {
      char buf[256];
      describe_call(&r->call, buf, sizeof buf);
      if (r->unit->blocked_in) /* its threads called MPI */
        skn_log("rank %d blocked in %s; a thread of it blocked in %s", i, r->unit->blocked_in, buf);
      else
        skn_log("rank %d blocked in %s", i, buf);
    } else if (r->unit->blocked_in) {
      skn_log("rank %d blocked in %s", i, r->unit->blocked_in);
    } else {
      skn_log("rank %d blocked outside MPI", i);
    }
  }
  return true;
}

/* The scheduler's watchdog: unit u has kept worker w in the kernel while others of the
 * worker were ready to run. Ranks sharing a worker cannot all wait in the kernel. */
static void on_worker_held(int w, skn_unit *u) {
  skn_rank *held = u->owner;
  char others[512];
  size_t n = 0;
  others[0] = '\0';
  skn_job *j = &skn_job_g;
  for (int i = j->first_rank; i < j->first_rank + j->nranks && n + 16 < sizeof others; i++) {
    skn_rank *r = j->ranks[i];
    if (r == held || __atomic_load_n(&r->state, __ATOMIC_RELAXED) == SKN_RANK_EXITED || skn_sched_unit_worker(r->unit) != skn_sched_unit_worker(u)) continue;
    n += (size_t)snprintf(others + n, sizeof others - n, "%s%d", n ? ", " : "", i);
  }
  /* the held rank may still be running (its worker's kernel thread sleeps) */
  const char *fn = held ? skn_call_read(&held->call).fn : NULL;
  skn_flush_stdio();
  /* With no rank left behind it (the others moved to other workers), every other rank
   * waits while it sleeps in the kernel. */
  char what[sizeof others + 32];
  if (n) snprintf(what, sizeof what, "ranks %s cannot run", others);
  else snprintf(what, sizeof what, "every other rank is blocked");
  skn_log("deadlock: rank %d blocked in %s holds worker %d; %s (Skein turns "
          "sleep, pthread_join, condition variables, mutexes, semaphores, poll, select, read and waitpid "
          "into scheduler waits, not this call; run with as many workers as ranks, SKEIN_WORKERS)",
          held ? held->world_rank : -1, fn ? fn : "a system call outside MPI", w, what);
  skn_flush_stdio_wait();
  _exit(SKN_EXIT_DEADLOCK);
}

/* A job ended by the deadlock detector exits with the first non-zero exit code of a rank
 * (a rank that exited early is the usual cause of its peers' wait), else SKN_EXIT_DEADLOCK. */
static int deadlock_exit_code(void) {
  int code = atomic_load(&skn_job_g.first_exit_code);
  return code ? code : SKN_EXIT_DEADLOCK;
}

static void on_stall(void) {
  if (describe_ranks(false)) {
    skn_flush_stdio_wait();
    _exit(deadlock_exit_code());
  }
}

static void *timeout_thread(void *unused) {
  (void)unused;
  struct timespec ts = {(time_t)boot_state.cfg.timeout_s, 0};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
  describe_ranks(true);
  skn_flush_stdio();
  skn_flush_stdio_wait();
  _exit(SKN_EXIT_TIMEOUT);
}

/* The job's processes agree on a deadlock (core/remote.c): this process's part. The
 * pause lets the other processes get the verdict before they see this one end. */
static void report_deadlock(void) {
  /* Every rank here has ended: with a non-zero exit code, that is the likely cause of the
   * others' wait and the job's code; with none, this process is closing, not deadlocked
   * (a verdict that raced with the job's end), and finishes as it would have. */
  if (!describe_ranks(false)) {
    int code = atomic_load(&skn_job_g.first_exit_code);
    if (code == 0) return;
    skn_flush_stdio();
    skn_flush_stdio_wait();
    _exit(code);
  }
  skn_flush_stdio();
  struct timespec ts = {0, 300000000};
  nanosleep(&ts, NULL);
  skn_flush_stdio_wait();
  _exit(deadlock_exit_code());
}

/* ------------------------------------------------------------------ start-up */

static skn_heap *heap_of_rank(int i) { return skn_job_g.ranks[skn_job_g.first_rank + i]->heap; }

static int boot_main(int argc, char **argv, char **envp) {
  boot_state.argc = argc;
  boot_state.argv = argv;
  boot_state.envp = envp;
  skn_boot_read_config(&boot_state.cfg);
  /* Which ranks of the job this process runs: all of SKEIN_NP when alone (singleton),
   * a block of them when a launcher started several processes. */
  static skn_pmi_info pi;
  if (skn_pmi_init(&pi) != SKN_PMI_OK) skn_fatal("cannot join the job");
  boot_state.cfg.nranks = pi.nranks;
  bool crowded = skn_hwtopo_share(pi.local_proc, pi.local_nprocs);
  if (skn_env_int("WORKERS", 0) == 0) boot_state.cfg.nworkers = skn_hwtopo_ncores(); /* default: this process's cores */
  if (boot_state.cfg.nworkers > boot_state.cfg.nranks) boot_state.cfg.nworkers = boot_state.cfg.nranks;
  sched_getaffinity(0, sizeof boot_state.process_cpus, &boot_state.process_cpus);
  pthread_key_create(&boot_state.thread_key, thread_done);

  skn_sched_config sc = {
      .nworkers = boot_state.cfg.nworkers,
      .stack_size = boot_state.cfg.stack_size,
      .spin_iters = boot_state.cfg.spin_iters,
      .bind = boot_state.cfg.bind,
      .yield = crowded,
      .stall_ms = boot_state.cfg.deadlock_ms,
      .steal = boot_state.cfg.steal,
      .stats = boot_state.cfg.schedstats,
  };
  /* Deadlocks: in one process the stall hook reports at once; over several, the
   * processes first agree that nothing is in flight (core/remote.c). */
  skn_sched_hooks hooks = {.poll = pi.nprocs > 1 ? skn_remote_poll : NULL,
                           .sleep = pi.nprocs > 1 ? skn_remote_sleeping : NULL,
                           .stall = pi.nprocs > 1 ? skn_remote_stall : on_stall};
  skn_heap_init(boot_state.cfg.nranks);
  if (skn_sched_init(&sc, &hooks) != 0 || skn_job_init(pi.world_size, pi.nprocs, pi.proc, pi.first_rank, pi.nranks) != 0)
    skn_fatal("out of memory starting %d ranks", boot_state.cfg.nranks);
  skn_job_g.eager_limit = boot_state.cfg.eager_limit;
  skn_job_g.buffer_budget = boot_state.cfg.buffer_budget;
  skn_job_g.wtime_base = 0;

  if (!(boot_state.argvs = calloc((size_t)boot_state.cfg.nranks, sizeof *boot_state.argvs)))
    skn_fatal("out of memory starting %d ranks", boot_state.cfg.nranks);
  for (int i = 0; i < boot_state.cfg.nranks; i++) {
    int world_rank = pi.first_rank + i;
    skn_rank *r = skn_rank_create(world_rank);
    if (!r) skn_fatal("out of memory creating rank %d", world_rank);
    /* block placement: consecutive ranks share a worker */
    int w = (int)((long long)i * boot_state.cfg.nworkers / boot_state.cfg.nranks);
    r->heap = skn_heap_rank_create(i, skn_hwtopo_numa_of_worker(w));
    r->unit = skn_sched_spawn(w, rank_main, r, r);
    if (!r->unit)
      skn_fatal("cannot create rank %d (stack of %zu bytes): %s", world_rank, boot_state.cfg.stack_size, strerror(errno));
  }
  if (pi.nprocs > 1 && skn_comm_attach_span(&skn_job_g.world) != 0) skn_fatal("out of memory setting up MPI_COMM_WORLD");
  if (pi.nprocs > 1) skn_remote_init(&pi, report_deadlock);
  install_signal_handlers();
  if (boot_state.cfg.nworkers < boot_state.cfg.nranks)
    skn_sched_start_watchdog(boot_state.cfg.deadlock_ms, pi.nprocs == 1, on_worker_held);
  if (boot_state.cfg.timeout_s) {
    pthread_t t;
    if (pthread_create(&t, NULL, timeout_thread, NULL) == 0) pthread_detach(t);
  }
  /* Like a process MPI's launcher forwarding output, deliver stdout line by line: a job
   * that crashes or is killed keeps every complete line its ranks printed. */
  if (skn_env_int("LINE_BUFFERED", 1)) setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
  boot_state.running = true;
  uint64_t t0 = skn_now_ns();
  skn_sched_run();
  boot_state.running = false;
  if (boot_state.cfg.schedstats) skn_boot_sched_report(skn_now_ns() - t0);
  if (pi.nprocs > 1) skn_remote_finalize();
  skn_pmi_finalize();
  skn_heap_report(boot_state.cfg.nranks, heap_of_rank);
  real_exit(atomic_load(&skn_job_g.first_exit_code));
}

SKN_EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                                 void (*rtld_fini)(void), void *stack_end);
SKN_EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                                 void (*rtld_fini)(void), void *stack_end) {
  libc_start_fn real = (libc_start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
  if (!real) {
    static const char msg[] = "skein: cannot find __libc_start_main\n";
    ssize_t rc = write(2, msg, sizeof msg - 1);
    (void)rc;
    _exit(127);
  }
  boot_state.user_main = main;
  return real(boot_main, argc, argv, init, fini, rtld_fini, stack_end);
}
