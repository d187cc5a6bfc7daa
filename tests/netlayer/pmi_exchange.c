/* Non-MPI test program for netlayer/pmi: every process puts keys, fences, reads every
 * process's keys and checks them. The same binary runs under skeinrun --procs P, Open MPI's
 * mpirun (PMIx), a PMI-1 launcher (MPICH's hydra, Slurm's srun --mpi=pmi2) or alone.
 * Prints "PASS pmi_exchange proc p" per process, or "FAIL ..." and exits 1.
 *
 *   pmi_exchange [mode]
 *     (none)           the exchange
 *     --hostile        process 0 also attacks skeinrun's service before the exchange
 *     --exit P CODE    after the exchange, process P exits with CODE; the others exit 0
 *     --kill P         after the exchange, process P kills itself (SIGKILL); others wait
 *     --kill-stubborn P  the same, and the others ignore SIGTERM
 *     --abort P CODE   after the exchange, process P calls skn_pmi_abort(CODE)
 *     --skip-fence P MS  process P exits 0 after MS ms without fencing; the others fence
 *     --signal         print "ready", wait for SIGTERM/SIGINT/SIGHUP, report it and how
 *                      many arrived, exit 0
 *     --lines N        after the exchange, each process prints N long lines
 *     --stdin          process 0 echoes its stdin's lines; the others must see EOF at once
 * Environment checked if set: EXPECT_PROCS, EXPECT_WORLD, EXPECT_BACKEND. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "pmi.h"
#include "proto.h"

static skn_pmi_info info;

#define FAIL(...)                                                                                  \
  do {                                                                                             \
    printf("FAIL pmi_exchange proc %d: ", info.proc);                                              \
    printf(__VA_ARGS__);                                                                           \
    printf("\n");                                                                                  \
    fflush(stdout);                                                                                \
    exit(1);                                                                                       \
  } while (0)

/* Value of key `k` of process p: deterministic bytes that differ per process and key. */
static unsigned char *pattern(int p, int k, size_t len) {
  unsigned char *b = malloc(len ? len : 1);
  uint32_t x = 2166136261u ^ (uint32_t)(p * 7919 + k * 104729);
  for (size_t i = 0; i < len; i++) {
    x = x * 1664525u + 1013904223u;
    b[i] = (unsigned char)(x >> 24);
  }
  return b;
}

static size_t size_of(int p, int k) {
  switch (k) {
  case 0: return 0;                     /* empty value */
  case 1: return 1 + (size_t)p % 7;     /* tiny */
  case 2: return 200 + (size_t)p * 13;  /* a UCX worker address */
  case 3: return 5000 + (size_t)p * 101; /* several parts on PMI-1 */
  default: return 64;
  }
}

static const char *keys[] = {"empty", "tiny", "addr", "big", "round2"};

static void put_key(int k) {
  size_t len = size_of(info.proc, k);
  unsigned char *v = pattern(info.proc, k, len);
  int rc = skn_pmi_put(keys[k], v, len);
  if (rc != SKN_PMI_OK) FAIL("put %s: %d", keys[k], rc);
  free(v);
}

static void check_key(int q, int k) {
  void *v = NULL;
  size_t len = 0;
  int rc = skn_pmi_get(q, keys[k], &v, &len);
  if (rc != SKN_PMI_OK) FAIL("get(%d, %s): %d", q, keys[k], rc);
  size_t want = size_of(q, k);
  unsigned char *exp = pattern(q, k, want);
  if (len != want || memcmp(v, exp, want)) FAIL("get(%d, %s): %zu bytes, wrong content (want %zu)", q, keys[k], len, want);
  free(exp);
  free(v);
}

/* Several threads getting at once (the transport may look up peers from any worker). */
static void *check_all(void *arg) {
  for (int q = 0; q < info.nprocs; q++)
    for (int k = 0; k < 4; k++) check_key((q + (int)(intptr_t)arg) % info.nprocs, k);
  return NULL;
}

static int env_int(const char *name, int dflt) {
  const char *v = getenv(name);
  return v ? atoi(v) : dflt;
}

/* ---------------------------------------------------------------- attacks (skein backend) */

static int dial(void) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", getenv(SKN_PMI_ENV_ADDR));
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) FAIL("attack: cannot connect: %s", strerror(errno));
  return fd;
}

/* The server must close the connection without answering anything. */
static void expect_closed(int fd, const char *what) {
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, 15000) != 1) FAIL("attack %s: the launcher kept the connection open", what);
  char b[64];
  ssize_t r = recv(fd, b, sizeof b, 0);
  if (r > 0) FAIL("attack %s: the launcher answered (%zd bytes)", what, r);
  close(fd);
}

static void send_raw(int fd, const void *b, size_t n) {
  if (send(fd, b, n, MSG_NOSIGNAL) != (ssize_t)n) FAIL("attack: send: %s", strerror(errno));
}

static void hello(int fd, uint32_t proc, const char *secret) {
  unsigned char f[4 + 1 + 4 + SKN_PMI_SECRET_LEN];
  uint32_t len = 1 + 4 + SKN_PMI_SECRET_LEN;
  memcpy(f, &len, 4);
  f[4] = SKN_PMI_HELLO;
  memcpy(f + 5, &proc, 4);
  memcpy(f + 9, secret, SKN_PMI_SECRET_LEN);
  send_raw(fd, f, sizeof f);
}

static void attack(void) {
  const char *secret = getenv(SKN_PMI_ENV_SECRET);
  if (!secret || strlen(secret) != SKN_PMI_SECRET_LEN) FAIL("--hostile needs skeinrun's environment");
  char wrong[SKN_PMI_SECRET_LEN + 1];
  memcpy(wrong, secret, sizeof wrong);
  wrong[5] = wrong[5] == 'a' ? 'b' : 'a';
  int fd;

  fd = dial(); /* a stranger guessing the secret */
  hello(fd, 1, wrong);
  expect_closed(fd, "wrong secret");

  fd = dial(); /* not our protocol at all */
  send_raw(fd, "GET / HTTP/1.0\r\n\r\n", 18);
  expect_closed(fd, "garbage");

  fd = dial(); /* an oversized frame: must be refused before anything is allocated */
  uint32_t huge = 0xfffffff0u;
  send_raw(fd, &huge, 4);
  expect_closed(fd, "oversized");

  fd = dial(); /* an empty frame */
  uint32_t zero = 0;
  send_raw(fd, &zero, 4);
  expect_closed(fd, "empty frame");

  fd = dial(); /* right size, wrong opcode */
  unsigned char f[4 + 1 + 4 + SKN_PMI_SECRET_LEN] = {0};
  uint32_t len = 1 + 4 + SKN_PMI_SECRET_LEN;
  memcpy(f, &len, 4);
  f[4] = 99;
  send_raw(fd, f, sizeof f);
  expect_closed(fd, "unknown opcode");

  fd = dial(); /* the secret, but a process that does not exist */
  hello(fd, (uint32_t)info.nprocs, secret);
  expect_closed(fd, "process out of range");

  fd = dial(); /* the secret, but posing as a process already connected (ourselves) */
  hello(fd, (uint32_t)info.proc, secret);
  expect_closed(fd, "duplicate process");

  fd = dial(); /* half a hello, then gone */
  send_raw(fd, f, 7);
  close(fd);

  int many[48]; /* more idle strangers than the launcher holds at once, long enough for it
                   to drop some (1 s) */
  for (int i = 0; i < 48; i++) many[i] = dial();
  usleep(1500000);
  for (int i = 0; i < 48; i++) close(many[i]);
  printf("proc %d: attacks refused\n", info.proc);
}

/* ---------------------------------------------------------------- main */

static volatile sig_atomic_t got_signal, signals;
static void on_signal(int sig) {
  got_signal = sig;
  signals++;
}

static void wait_forever(void) {
  for (;;) pause();
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* one write per line: lines of processes do not mix */
  const char *mode = argc > 1 ? argv[1] : "";
  int arg1 = argc > 2 ? atoi(argv[2]) : -1, arg2 = argc > 3 ? atoi(argv[3]) : 0;

  if (!strcmp(mode, "--signal")) {
    /* Before init: the launcher may forward a signal as soon as we print "ready". */
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
  }
  if (skn_pmi_init(&info) != SKN_PMI_OK) {
    printf("FAIL pmi_exchange: init failed\n");
    return 1;
  }
  printf("proc %d/%d backend %s world %d ranks %d+%d node %d/%d local %d/%d\n", info.proc, info.nprocs,
         info.backend, info.world_size, info.first_rank, info.nranks, info.node, info.nnodes, info.local_proc,
         info.local_nprocs);

  /* What init says must be consistent, and what the test expects. */
  int first, count;
  skn_pmi_block(info.world_size, info.nprocs, info.proc, &first, &count);
  if (info.proc < 0 || info.proc >= info.nprocs || first != info.first_rank || count != info.nranks ||
      info.nranks < 1 || info.node < 0 || info.node >= info.nnodes || info.local_proc < 0 ||
      info.local_proc >= info.local_nprocs)
    FAIL("inconsistent info");
  if (env_int("EXPECT_PROCS", info.nprocs) != info.nprocs) FAIL("%d processes, expected %s", info.nprocs, getenv("EXPECT_PROCS"));
  if (env_int("EXPECT_WORLD", info.world_size) != info.world_size) FAIL("world of %d ranks, expected %s", info.world_size, getenv("EXPECT_WORLD"));
  if (getenv("EXPECT_BACKEND") && strcmp(getenv("EXPECT_BACKEND"), info.backend))
    FAIL("backend %s, expected %s", info.backend, getenv("EXPECT_BACKEND"));
  if (skn_pmi_node_of(info.proc) != info.node) FAIL("node_of(self) = %d, info.node = %d", skn_pmi_node_of(info.proc), info.node);
  int same_node = 0, before_me = 0;
  for (int q = 0; q < info.nprocs; q++) {
    int nq = skn_pmi_node_of(q);
    if (nq < 0 || nq >= info.nnodes) FAIL("node_of(%d) = %d, not in [0, %d)", q, nq, info.nnodes);
    same_node += nq == info.node;
    before_me += nq == info.node && q < info.proc;
  }
  if (same_node != info.local_nprocs || before_me != info.local_proc)
    FAIL("node_of says %d processes on my node, %d before me; info says %d, local index %d", same_node, before_me,
         info.local_nprocs, info.local_proc);

  if (!strcmp(mode, "--signal")) {
    printf("proc %d ready\n", info.proc);
    while (!got_signal) pause();
    usleep(300000); /* a duplicate (terminal and launcher both signalling) would come now */
    printf("proc %d got signal %d x %d\n", info.proc, (int)got_signal, (int)signals);
    return 0;
  }
  if (!strcmp(mode, "--skip-fence") && info.proc == arg1) {
    usleep((useconds_t)arg2 * 1000); /* 0: before the others fence; 500: while they wait */
    return 0;
  }
  if (!strcmp(mode, "--hostile") && info.proc == 0 && !strcmp(info.backend, "skein")) attack();

  /* Round 1: four keys each, bad arguments refused. */
  for (int k = 0; k < 4; k++) put_key(k);
  unsigned char one = 1;
  if (skn_pmi_put("tiny", &one, 1) != SKN_PMI_INVAL) FAIL("a second put of the same key was accepted");
  if (skn_pmi_put("bad key", &one, 1) != SKN_PMI_INVAL) FAIL("a key with a space was accepted");
  if (skn_pmi_put("k", &one, SKN_PMI_VALUE_MAX + 1) != SKN_PMI_INVAL) FAIL("an oversized value was accepted");
  if (skn_pmi_fence() != SKN_PMI_OK) FAIL("fence 1");
  pthread_t th[4];
  for (intptr_t t = 0; t < 4; t++) pthread_create(&th[t], NULL, check_all, (void *)t);
  for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
  void *v;
  size_t len;
  int rc = skn_pmi_get(info.nprocs - 1, "missing", &v, &len);
  if (rc != SKN_PMI_NOTFOUND) FAIL("get of a missing key: %d", rc);
  if (skn_pmi_get(info.nprocs, "tiny", &v, &len) != SKN_PMI_INVAL) FAIL("get from a process out of range");

  /* Round 2: a put after a fence is visible only after the next one (checked where the
     backend gives that guarantee deterministically: skein's service and the singleton). */
  put_key(4);
  if (!strcmp(info.backend, "skein") || !strcmp(info.backend, "singleton"))
    for (int q = 0; q < info.nprocs; q++)
      if (skn_pmi_get(q, keys[4], &v, &len) != SKN_PMI_NOTFOUND) FAIL("process %d's round-2 key visible before the fence", q);
  if (skn_pmi_fence() != SKN_PMI_OK) FAIL("fence 2");
  for (int q = 0; q < info.nprocs; q++) check_key(q, 4);
  printf("PASS pmi_exchange proc %d\n", info.proc);

  if (!strcmp(mode, "--stdin")) {
    char buf[256];
    int lines = 0;
    while (fgets(buf, sizeof buf, stdin)) {
      printf("proc %d stdin: %s", info.proc, buf);
      lines++;
    }
    if (info.proc > 0 && lines > 0) FAIL("process %d read stdin", info.proc);
    printf("proc %d read %d lines\n", info.proc, lines);
  } else if (!strcmp(mode, "--lines")) {
    char line[300];
    for (int i = 0; i < arg1; i++) {
      int n = snprintf(line, sizeof line, "line proc=%d i=%d ", info.proc, i);
      for (; n < 250; n++) line[n] = (char)('a' + (info.proc + i + n) % 26);
      line[n] = '\0';
      printf("%s end\n", line);
    }
  } else if (!strcmp(mode, "--exit") && info.proc == arg1) {
    fflush(stdout);
    _exit(arg2);
  } else if ((!strcmp(mode, "--kill") || !strcmp(mode, "--kill-stubborn"))) {
    if (!strcmp(mode, "--kill-stubborn")) signal(SIGTERM, SIG_IGN);
    if (skn_pmi_fence() != SKN_PMI_OK) FAIL("fence 3"); /* everyone has set up before the kill */
    if (info.proc == arg1) raise(SIGKILL);
    wait_forever();
  } else if (!strcmp(mode, "--abort")) {
    if (info.proc == arg1) skn_pmi_abort(arg2, "the test asked for it");
    wait_forever();
  }
  if (skn_pmi_finalize() != SKN_PMI_OK) FAIL("finalize");
  return 0;
}
