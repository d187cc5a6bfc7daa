/* line_pingpong.c — the hardware floor of a message between two cores, without MPI.
 *
 * Two pthreads pinned to two CPUs pass a turn back and forth. A "message" is K cache
 * lines written by the sender and read by the receiver: K-1 payload lines, then the line
 * holding the turn word (stored last with release, so the receiver sees the payload once
 * it sees the turn). Each thread signals on its own set of lines, so a half round trip
 * moves K lines one way. With --xchg the turn is published by an atomic exchange, as a
 * lock or a completion word would be. The figure, median over batches, is nanoseconds per
 * half round trip: what the machine charges for K line transfers in one direction, to set
 * beside an MPI's 0 B latency (docs/performance.md). With --shared both threads use the
 * same K lines (one line bouncing between the cores, as a request's completion word does).
 *
 * usage: line_pingpong [--lines 1,2,3,4] [--cpus 0,1|none] [--iters N] [--reps R] [--xchg] [--shared]
 * Output, one line per K: `lines=K xchg=0|1 shared=0|1 ns=… min=… iters=… reps=…`. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LINE 64
#define MAX_LINES 8

/* One side's lines: line 0 holds the turn word, lines 1..K-1 the payload. */
typedef struct side {
  _Alignas(LINE) _Atomic(uint64_t) turn;
  char pad[LINE - sizeof(uint64_t)];
  _Alignas(LINE) uint64_t payload[MAX_LINES - 1][LINE / sizeof(uint64_t)];
} side;

typedef struct run {
  side s[2];             /* s[i] is written by thread i */
  int lines, xchg, shared, cpu[2];
  long iters;
  _Atomic(int) ready;
  uint64_t sink[2];       /* payload reads, so they are not optimised away */
} run;

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static void pin(int cpu) {
  if (cpu < 0) return; /* --cpus none: the kernel places the threads */
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set)) {
    fprintf(stderr, "line_pingpong: cannot pin to CPU %d\n", cpu);
    exit(2);
  }
}

/* Thread 0's i-th message carries 2i-1, thread 1's 2i: distinct even on shared lines. */
static void send_msg(run *R, int me, uint64_t v) {
  side *s = &R->s[R->shared ? 0 : me];
  for (int l = 0; l < R->lines - 1; l++) s->payload[l][0] = v;
  if (R->xchg) atomic_exchange(&s->turn, v);
  else atomic_store_explicit(&s->turn, v, memory_order_release);
}

static void recv_msg(run *R, int me, uint64_t v) {
  side *s = &R->s[R->shared ? 0 : 1 - me];
  while (atomic_load_explicit(&s->turn, memory_order_acquire) != v) __builtin_ia32_pause();
  uint64_t sum = 0;
  for (int l = 0; l < R->lines - 1; l++) sum += s->payload[l][0];
  if (R->lines > 1 && sum != v * (uint64_t)(R->lines - 1)) {
    fprintf(stderr, "line_pingpong: payload mismatch\n");
    exit(1);
  }
  R->sink[me] += sum;
}

/* Thread 1 echoes every message of thread 0. */
static void *echo(void *arg) {
  run *R = arg;
  pin(R->cpu[1]);
  atomic_store(&R->ready, 1);
  for (long i = 1; i <= R->iters; i++) {
    recv_msg(R, 1, 2 * (uint64_t)i - 1);
    send_msg(R, 1, 2 * (uint64_t)i);
  }
  return NULL;
}

/* reps batches of iters round trips with one echo thread (after a warm-up batch); t[r]
 * gets ns per half round trip of batch r. Short batches and the minimum over many show the
 * cost on a shared machine: a batch during which neither thread lost its core. */
static void batches(int lines, int xchg, int shared, const int cpu[2], long iters, int reps, double *t) {
  run *R = aligned_alloc(LINE, sizeof(run));
  memset(R, 0, sizeof *R);
  R->lines = lines, R->xchg = xchg, R->shared = shared, R->cpu[0] = cpu[0], R->cpu[1] = cpu[1];
  R->iters = iters * (reps + 1);
  pthread_t th;
  if (pthread_create(&th, NULL, echo, R)) exit(2);
  while (!atomic_load(&R->ready)) __builtin_ia32_pause();
  long i = 1;
  for (int r = -1; r < reps; r++) {
    double t0 = now_ns();
    for (long end = i + iters; i < end; i++) {
      send_msg(R, 0, 2 * (uint64_t)i - 1);
      recv_msg(R, 0, 2 * (uint64_t)i);
    }
    if (r >= 0) t[r] = (now_ns() - t0) / iters / 2;
  }
  pthread_join(th, NULL);
  free(R);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  char lines_list[64] = "1,2,3,4";
  int cpu[2] = {0, 1}, reps = 1001, xchg = 0, shared = 0;
  long iters = 200;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--lines") && i + 1 < argc) snprintf(lines_list, sizeof lines_list, "%s", argv[++i]);
    else if (!strcmp(argv[i], "--cpus") && i + 1 < argc) {
      if (!strcmp(argv[++i], "none")) cpu[0] = cpu[1] = -1;
      else if (sscanf(argv[i], "%d,%d", &cpu[0], &cpu[1]) != 2) return 2;
    } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atol(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--xchg")) xchg = 1;
    else if (!strcmp(argv[i], "--shared")) shared = 1;
    else {
      fprintf(stderr, "usage: %s [--lines 1,2,3,4] [--cpus 0,1|none] [--iters N] [--reps R] [--xchg] [--shared]\n", argv[0]);
      return 2;
    }
  }
  if (iters < 1 || reps < 1 || reps > 100000) return 2;
  pin(cpu[0]);
  double *t = malloc(sizeof(double) * reps);
  for (char *p = strtok(lines_list, ","); p; p = strtok(NULL, ",")) {
    int k = atoi(p);
    if (k < 1 || k > MAX_LINES) {
      fprintf(stderr, "line_pingpong: --lines between 1 and %d\n", MAX_LINES);
      return 2;
    }
    batches(k, xchg, shared, cpu, iters, reps, t);
    qsort(t, reps, sizeof *t, cmp);
    printf("lines=%d xchg=%d shared=%d ns=%.1f min=%.1f iters=%ld reps=%d\n", k, xchg, shared, t[reps / 2], t[0], iters,
           reps);
  }
  free(t);
  return 0;
}
