/* skeinrun (also installed as mpiexec and mpirun): runs an MPI program built with Skein.
 * All ranks of a process are threads of it, so with one process (the default) the launcher
 * only sets the job's configuration in the environment and becomes the program (exec): it
 * costs no memory and forwards nothing, and the program's exit status is the job's.
 * With --procs P it stays: it forks P processes with block-distributed ranks, serves
 * them a key-value exchange (netlayer/pmi/server.c), forwards signals, and ends the job
 * when a process dies abnormally. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmi/server.h"

static const char usage[] =
    "usage: skeinrun [options] program [args...]\n"
    "  -n, -np N            number of ranks (default 1, or one per process)\n"
    "  --procs P            run the ranks in P processes on this machine (default 1)\n"
    "  -w, --workers N      worker threads (default: usable cores; at most N)\n"
    "  --stack-size SIZE    stack of each rank, e.g. 8M (default 8M, virtual)\n"
    "  --eager-limit SIZE   largest message buffered when no receive is posted (default 64k)\n"
    "  --buffer-budget SIZE buffered bytes one rank may hold for unexpected messages (default 4M)\n"
    "  --no-bind            do not pin workers to cores\n"
    "  --deadlock-ms MS     quiet time before a blocked job is reported as deadlocked (default 1000)\n"
    "  --timeout SECONDS    end the job, saying what each rank does, after this long (also\n"
    "                       MPIEXEC_TIMEOUT; exit code 124)\n"
    "  -x, --env VAR=VALUE  set an environment variable for the program\n"
    "  -h, --help           this help;  --version  Skein's version\n"
    "Every flag sets a SKEIN_* variable (see docs/user-guide.md).\n";

static _Noreturn void die(const char *msg, const char *arg) {
  fprintf(stderr, "skeinrun: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
  exit(2);
}

static void set(const char *var, const char *value) {
  if (setenv(var, value, 1) != 0) die("cannot set environment variable", var);
}

static const char *need(int argc, char **argv, int *i) {
  if (*i + 1 >= argc) die("option needs a value", argv[*i]);
  return argv[++*i];
}

static bool is_count(const char *s) {
  if (!*s) return false;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return false;
  return true;
}

/* The positive count v given to `flag` (an option, or a variable ending in '='): digits
 * only, and at most INT_MAX, what the runtime reads it into (99999999999 would be read as
 * 1215752191). Names the flag and the kind of count when it is not one. */
static long count_of(const char *flag, const char *v, const char *what) {
  const char *sep = flag[strlen(flag) - 1] == '=' ? "" : " ";
  if (!is_count(v)) {
    fprintf(stderr, "skeinrun: %s%s%s: %s must be a positive integer\n", flag, sep, v, what);
    exit(2);
  }
  errno = 0;
  long n = strtol(v, NULL, 10);
  if (errno == ERANGE || n > INT_MAX) {
    fprintf(stderr, "skeinrun: %s%s%s: %s is too large (at most %d)\n", flag, sep, v, what, INT_MAX);
    exit(2);
  }
  if (n < 1) {
    fprintf(stderr, "skeinrun: %s%s%s: %s must be a positive integer\n", flag, sep, v, what);
    exit(2);
  }
  return n;
}

/* True when the file mentions libskein.so (its DT_NEEDED entry): a program built with
 * another MPI would otherwise run as one plain process. */
static bool links_skein(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return true; /* let exec report the real problem */
  struct stat st;
  bool found = true;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      found = memmem(p, (size_t)st.st_size, "libskein.so", 11) != NULL;
      munmap(p, (size_t)st.st_size);
    }
  }
  close(fd);
  return found;
}

static char *find_in_path(const char *prog) {
  if (strchr(prog, '/')) return strdup(prog);
  const char *path = getenv("PATH");
  if (!path) return NULL;
  char *copy = strdup(path), *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    char *full;
    if (asprintf(&full, "%s/%s", *dir ? dir : ".", prog) < 0) break;
    if (access(full, X_OK) == 0) {
      free(copy);
      return full;
    }
    free(full);
  }
  free(copy);
  return NULL;
}

/* ------------------------------------------------------------------ several processes */

#define MAX_PROCS 4096
#define KILL_GRACE_MS 2000 /* SIGTERM, then SIGKILL: a job ends within this of a failure */
#define SKN_EXIT_TIMEOUT 124 /* as timeout(1); boot/boot.h */
#define SKN_EXIT_DEADLOCK 70 /* boot/boot.h */
#define TIMEOUT_GRACE_MS 3000 /* the processes end a timed-out job themselves, with a report */
#define REPORT_GRACE_MS 1000 /* after a process died: the others notice and say which ranks were lost */

typedef struct {
  pid_t pid; /* 0 once reaped */
  int first, count;
} child;

static struct {
  child *kids;
  int nprocs, live;
  int code;           /* the job's exit code: the first failure's */
  bool ending;        /* the others have been told to stop */
  bool forwarded;     /* a user's signal was passed on: deaths by it are expected */
  int forwarded_sig;
  long long kill_at;  /* ms: SIGKILL whoever is left; 0 = not scheduled */
  long long term_at;  /* ms: SIGTERM whoever is left; 0 = not scheduled */
  long long timeout_at; /* ms: --timeout, should the processes not end the job themselves */
  skn_pmi_server *server;
} job;

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static const char *ranks_of(int p) {
  static char buf[64];
  child *c = &job.kids[p];
  if (c->count == 1) snprintf(buf, sizeof buf, "rank %d", c->first);
  else snprintf(buf, sizeof buf, "ranks %d-%d", c->first, c->first + c->count - 1);
  return buf;
}

static void signal_all(int sig) {
  for (int p = 0; p < job.nprocs; p++)
    if (job.kids[p].pid > 0) kill(job.kids[p].pid, sig);
}

static void stop_the_rest(void) {
  job.term_at = 0;
  if (job.live == 0) return;
  fprintf(stderr, "skeinrun: ending the job: stopping the %d remaining process%s\n", job.live,
          job.live == 1 ? "" : "es");
  signal_all(SIGTERM);
  job.kill_at = now_ms() + KILL_GRACE_MS;
}

/* Ends the job with `code` (unless it is ending already): the other processes get
   SIGTERM now, or after REPORT_GRACE_MS when one died on its own (they detect the loss
   themselves and exit), and SIGKILL KILL_GRACE_MS later. */
static void end_job(int code, bool let_them_report) {
  if (job.ending) return;
  job.ending = true;
  job.code = code;
  if (let_them_report && job.nprocs > 1) job.term_at = now_ms() + REPORT_GRACE_MS;
  else stop_the_rest();
}

static void on_abort(void *ctx, int p, int code, const char *msg) {
  if (job.ending) return;
  fprintf(stderr, "skeinrun: process %d (%s) aborted the job with code %d%s%s\n", p, ranks_of(p), code,
          *msg ? ": " : "", msg);
  end_job(code, false);
}

static void reaped(pid_t pid, int status) {
  int p = 0;
  while (p < job.nprocs && job.kids[p].pid != pid) p++;
  if (p == job.nprocs) return; /* not ours (cannot happen: we have no other children) */
  job.kids[p].pid = 0;
  job.live--;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  /* After a deadlock verdict every process exits: the one whose rank ended early with a
   * code of its own (the usual cause) may be reaped after one that says only "deadlock" */
  if (job.ending && job.code == SKN_EXIT_DEADLOCK && WIFEXITED(status) && code != 0 && code != SKN_EXIT_DEADLOCK)
    job.code = code;
  if (job.ending) return;
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (job.forwarded && sig == job.forwarded_sig) {
      end_job(code, false); /* the user's signal: no need to explain */
      return;
    }
    fprintf(stderr, "skeinrun: process %d (%s) was killed by signal %d (%s)\n", p, ranks_of(p), sig,
            strsignal(sig));
    end_job(code, true);
  } else if (code != 0) {
    fprintf(stderr, "skeinrun: process %d (%s) exited with code %d\n", p, ranks_of(p), code);
    end_job(code, true);
  } else {
    skn_pmi_server_proc_exited(job.server, p); /* checked against fences in launch() */
  }
}

static bool make_secret(char out[SKN_PMI_SECRET_LEN + 1]) {
  unsigned char raw[SKN_PMI_SECRET_LEN / 2];
  size_t got = 0;
  while (got < sizeof raw) {
    ssize_t r = getrandom(raw + got, sizeof raw - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    got += (size_t)r;
  }
  for (size_t i = 0; i < sizeof raw; i++) sprintf(out + 2 * i, "%02x", raw[i]);
  return true;
}

static void set_int(const char *var, long v) {
  char buf[24];
  snprintf(buf, sizeof buf, "%ld", v);
  set(var, buf);
}

/* Runs prog in nprocs processes; returns the job's exit code. */
static int launch(const char *prog, char **args, int nprocs, long nranks) {
  /* A private directory (mkdtemp: 0700) holds the socket: only our user can reach it, and
     the secret keeps out that user's other programs. */
  const char *tmp = getenv("TMPDIR");
  char dir[108], path[120], secret[SKN_PMI_SECRET_LEN + 1];
  snprintf(dir, sizeof dir, "%s/skein-XXXXXX", tmp && *tmp && strlen(tmp) < 60 ? tmp : "/tmp");
  if (!mkdtemp(dir)) die("cannot create a directory for the key-value service", strerror(errno));
  snprintf(path, sizeof path, "%s/pmi", dir);
  if (!make_secret(secret)) die("cannot draw the job's secret", strerror(errno));

  sigset_t mask, old;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, &old);
  int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  job.server = skn_pmi_server_create(path, nprocs, secret, on_abort, NULL);
  const char *tmo = getenv("SKEIN_TIMEOUT");
  if (tmo && *tmo) job.timeout_at = now_ms() + strtol(tmo, NULL, 10) * 1000LL + TIMEOUT_GRACE_MS;
  if (sfd < 0 || !job.server) {
    rmdir(dir);
    die("cannot start the key-value service", sfd < 0 ? strerror(errno) : path);
  }
  job.nprocs = nprocs;
  job.kids = calloc((size_t)nprocs, sizeof *job.kids);
  signal(SIGPIPE, SIG_IGN); /* a closed stderr must not kill the launcher */
  pid_t me = getpid();
  set(SKN_PMI_ENV_ADDR, path);
  set(SKN_PMI_ENV_SECRET, secret);
  set_int("SKEIN_PROCS", nprocs);
  set_int("SKEIN_NP", nranks);
  for (int p = 0; p < nprocs; p++) {
    int first, count;
    skn_pmi_block((int)nranks, nprocs, p, &first, &count);
    job.kids[p].first = first;
    job.kids[p].count = count;
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "skeinrun: cannot start process %d: %s\n", p, strerror(errno));
      end_job(1, false);
      break;
    }
    if (pid == 0) {
      /* The child: dies with the launcher (no orphans if it is killed), unblocks the
         signals, and only process 0 reads the launcher's stdin. */
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != me) _exit(1);
      sigprocmask(SIG_SETMASK, &old, NULL);
      signal(SIGPIPE, SIG_DFL);
      set_int("SKEIN_PROC", p);
      set_int("SKEIN_FIRST_RANK", first);
      set_int("SKEIN_LOCAL_NP", count);
      if (p > 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0 && null != STDIN_FILENO) {
          dup2(null, STDIN_FILENO);
          close(null);
        }
      }
      execv(prog, args);
      fprintf(stderr, "skeinrun: process %d: cannot run %s: %s\n", p, prog, strerror(errno));
      _exit(127);
    }
    job.kids[p].pid = pid;
    job.live++;
  }

  int maxfds = 1 + skn_pmi_server_maxfds(job.server);
  struct pollfd *fds = calloc((size_t)maxfds, sizeof *fds);
  while (job.live > 0) {
    fds[0] = (struct pollfd){sfd, POLLIN, 0};
    int n = skn_pmi_server_pollfds(job.server, fds + 1);
    int timeout = skn_pmi_server_timeout_ms(job.server);
    long long next = job.term_at ? job.term_at : job.kill_at ? job.kill_at : job.timeout_at;
    if (next) {
      long long left = next - now_ms();
      if (left < 0) left = 0;
      if (timeout < 0 || left < timeout) timeout = (int)left;
    }
    int rc = poll(fds, (nfds_t)(n + 1), timeout);
    if (rc < 0 && errno != EINTR) die("poll failed", strerror(errno));
    if (rc > 0 && (fds[0].revents & POLLIN)) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGCHLD) continue; /* reaped below */
        if (job.forwarded && si.ssi_signo == (unsigned)job.forwarded_sig) {
          signal_all(SIGKILL); /* asked twice: stop waiting for a graceful end */
          continue;
        }
        job.forwarded = true;
        job.forwarded_sig = (int)si.ssi_signo;
        /* From the terminal (Ctrl-C, hang-up) the kernel signals the whole foreground
           process group, our children included: pass on only what a process sent us. */
        if (si.ssi_code != SI_KERNEL) signal_all((int)si.ssi_signo);
      }
    }
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) reaped(pid, status);
    if (rc > 0) skn_pmi_server_handle(job.server, fds + 1, n);
    else skn_pmi_server_handle(job.server, fds + 1, 0); /* expire slow strangers */
    int stuck = job.ending ? -1 : skn_pmi_server_fence_stuck(job.server);
    if (stuck >= 0) {
      fprintf(stderr, "skeinrun: process %d (%s) exited without joining the key-value fence the others wait in\n",
              stuck, ranks_of(stuck));
      end_job(1, false);
    }
    if (job.timeout_at && now_ms() >= job.timeout_at && !job.ending) {
      fprintf(stderr, "skeinrun: the job ran longer than its time limit (--timeout, MPIEXEC_TIMEOUT)\n");
      job.timeout_at = 0;
      end_job(SKN_EXIT_TIMEOUT, false);
    }
    if (job.term_at && now_ms() >= job.term_at) stop_the_rest();
    if (job.kill_at && now_ms() >= job.kill_at) {
      signal_all(SIGKILL);
      job.kill_at = 0;
    }
  }
  skn_pmi_server_destroy(job.server);
  rmdir(dir);
  free(fds);
  free(job.kids);
  return job.code;
}

/* A skeinrun started by a process of a --procs job must not join that job. */
static void forget_outer_job(void) {
  if (!getenv(SKN_PMI_ENV_ADDR)) return;
  const char *vars[] = {SKN_PMI_ENV_ADDR, SKN_PMI_ENV_SECRET, "SKEIN_PROC", "SKEIN_PROCS", "SKEIN_FIRST_RANK",
                        "SKEIN_LOCAL_NP"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
}

int main(int argc, char **argv) {
  int i = 1;
  long nranks = 1, nprocs = 0;
  bool ranks_given = false;
  forget_outer_job();
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "-c")) {
      const char *v = need(argc, argv, &i);
      nranks = count_of(a, v, "the rank count");
      set("SKEIN_NP", v);
      ranks_given = true;
    } else if (!strcmp(a, "--procs")) {
      const char *v = need(argc, argv, &i);
      nprocs = count_of(a, v, "the process count");
    } else if (!strcmp(a, "-w") || !strcmp(a, "--workers")) {
      const char *v = need(argc, argv, &i);
      count_of(a, v, "the worker count");
      set("SKEIN_WORKERS", v);
    } else if (!strcmp(a, "--stack-size")) {
      set("SKEIN_STACK_SIZE", need(argc, argv, &i));
    } else if (!strcmp(a, "--eager-limit")) {
      set("SKEIN_EAGER_LIMIT", need(argc, argv, &i));
    } else if (!strcmp(a, "--buffer-budget")) {
      set("SKEIN_BUFFER_BUDGET", need(argc, argv, &i));
    } else if (!strcmp(a, "--no-bind")) {
      set("SKEIN_BIND", "0");
    } else if (!strcmp(a, "--deadlock-ms")) {
      set("SKEIN_DEADLOCK_MS", need(argc, argv, &i));
    } else if (!strcmp(a, "--timeout")) {
      const char *v = need(argc, argv, &i);
      count_of(a, v, "the time limit in seconds");
      set("SKEIN_TIMEOUT", v);
    } else if (!strcmp(a, "-x") || !strcmp(a, "--env")) {
      char *kv = strdup(need(argc, argv, &i));
      char *eq = strchr(kv, '=');
      if (!eq || eq == kv) die("expected VAR=VALUE", kv);
      *eq = '\0';
      set(kv, eq + 1);
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage, stdout);
      return 0;
    } else if (!strcmp(a, "--version")) {
      printf("skeinrun (Skein) %s\n", SKEIN_VERSION);
      return 0;
    } else if (!strcmp(a, "--")) {
      i++;
      break;
    } else {
      fprintf(stderr, "skeinrun: unknown option %s\n%s", a, usage);
      return 2;
    }
  }
  if (i >= argc) {
    fputs(usage, stderr);
    return 2;
  }
  char *prog = find_in_path(argv[i]);
  if (!prog) die("program not found", argv[i]);
  /* as MPICH's hydra: MPIEXEC_TIMEOUT when --timeout is not given */
  const char *tmo = getenv("SKEIN_TIMEOUT");
  if (!tmo || !*tmo) {
    tmo = getenv("MPIEXEC_TIMEOUT");
    if (tmo && *tmo) {
      count_of("MPIEXEC_TIMEOUT=", tmo, "the time limit in seconds");
      set("SKEIN_TIMEOUT", tmo);
    }
  }
  if (nprocs == 0) {
    const char *v = getenv("SKEIN_PROCS");
    nprocs = 1;
    if (v && *v) nprocs = count_of("SKEIN_PROCS=", v, "the process count");
  }
  if (!ranks_given) {
    const char *v = getenv("SKEIN_NP");
    if (v && *v) {
      nranks = count_of("SKEIN_NP=", v, "the rank count");
    } else {
      nranks = nprocs; /* one rank per process */
    }
  }
  if (nprocs > 1) {
    if (nprocs > MAX_PROCS) die("too many processes (at most 4096)", NULL);
    if (nprocs > nranks) {
      fprintf(stderr, "skeinrun: %ld processes need at least %ld ranks (-n), one each\n", nprocs, nprocs);
      free(prog);
      return 2;
    }
    if (access(prog, X_OK) != 0) {
      fprintf(stderr, "skeinrun: cannot run %s: %s\n", argv[i], strerror(errno));
      free(prog);
      return 127;
    }
    int code = launch(prog, &argv[i], (int)nprocs, nranks);
    free(prog);
    return code;
  }
  if (nranks > 1 && !links_skein(prog))
    fprintf(stderr, "skeinrun: warning: %s is not linked with Skein (build it with Skein's mpicc); "
                    "it will run as one plain process, not %ld ranks\n", argv[i], nranks);
  execv(prog, &argv[i]);
  fprintf(stderr, "skeinrun: cannot run %s: %s\n", argv[i], strerror(errno));
  return 127;
}
