/* skeinrun (also installed as mpiexec and mpirun): runs an MPI program built with Skein.
 * All ranks live in one process, so on one machine the launcher only sets the job's
 * configuration in the environment and becomes the program (exec): it costs no memory
 * and forwards nothing, and the program's exit status is the job's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
    "usage: skeinrun [options] program [args...]\n"
    "  -n, -np N            number of ranks (default 1)\n"
    "  -w, --workers N      worker threads (default: usable cores; at most N)\n"
    "  --stack-size SIZE    stack of each rank, e.g. 8M (default 8M, virtual)\n"
    "  --eager-limit SIZE   largest message buffered when no receive is posted (default 64k)\n"
    "  --buffer-budget SIZE buffered bytes one rank may hold for unexpected messages (default 4M)\n"
    "  --no-bind            do not pin workers to cores\n"
    "  --deadlock-ms MS     quiet time before a blocked job is reported as deadlocked (default 1000)\n"
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

int main(int argc, char **argv) {
  int i = 1;
  long nranks = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "-c")) {
      const char *v = need(argc, argv, &i);
      if (!is_count(v) || (nranks = strtol(v, NULL, 10)) < 1) die("the rank count must be a positive integer", v);
      set("SKEIN_NP", v);
    } else if (!strcmp(a, "-w") || !strcmp(a, "--workers")) {
      const char *v = need(argc, argv, &i);
      if (!is_count(v) || strtol(v, NULL, 10) < 1) die("the worker count must be a positive integer", v);
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
  if (nranks > 1 && !links_skein(prog))
    fprintf(stderr, "skeinrun: warning: %s is not linked with Skein (build it with Skein's mpicc); "
                    "it will run as one plain process, not %ld ranks\n", argv[i], nranks);
  execv(prog, &argv[i]);
  fprintf(stderr, "skeinrun: cannot run %s: %s\n", argv[i], strerror(errno));
  return 127;
}
