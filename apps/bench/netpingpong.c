/* netpingpong.c — latency and bandwidth of Skein's UCX transport (netlayer/ucx) between two
 * processes, without MPI: the figure the runtime's inter-process path starts from. Run by
 * `skeinrun --procs 2 netpingpong`; apps/bench/netcompare.sh puts it beside ucx_perftest
 * and MPICH on the same UCX transport.
 *
 *   netpingpong [--sizes LIST] [--reps R] [--iters N] [--window W]
 *
 * latency:   half round trip (process 0 sends, 1 answers with the same size), median of R
 *            batches of N round trips, microseconds.
 * bandwidth: process 0 keeps W sends in flight (the same buffer), process 1 answers each
 *            batch of W with a 0-byte message; MB/s (1e6 B) = bytes * W / batch time,
 *            median of R batches.
 * progress:  ns per skn_net_progress call with nothing to do.
 * The receiver copies eager data into its buffer (as the core would) and fetches
 * rendezvous data straight into it from the delivery hook (a posted receive).
 * Every size is checked once for data integrity. Output: key=value lines. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net.h"
#include "pmi.h"

static skn_pmi_info pi;
static uint8_t *rbuf;       /* receive buffer */
static size_t rbuf_size;
static _Atomic(int) received; /* messages fully in rbuf */
static _Atomic(int) sent;     /* sends completed */
static int exp_recv, exp_sent; /* totals awaited: absolute, since a message may arrive early */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *msg) {
  fprintf(stderr, "netpingpong: proc %d: %s\n", pi.proc, msg);
  exit(1);
}

static void fetched(void *arg, int status) {
  if (status != SKN_NET_OK) die("fetch failed");
  received++;
}
static void on_deliver(void *c, const skn_net_data_hdr *env, const void *data, size_t len) {
  if (len > rbuf_size) die("message larger than the buffer");
  memcpy(rbuf, data, len);
  received++;
}
static void on_rndv(void *c, const skn_net_data_hdr *env, skn_net_rndv *h) {
  int rc = skn_net_fetch(h, rbuf, env->bytes, fetched, NULL);
  if (rc == SKN_NET_OK) received++;
  else if (rc != SKN_NET_INPROGRESS) die("fetch");
}
static void send_done(void *arg, int status) {
  if (status != SKN_NET_OK) die("send failed");
  sent++;
}

static void send_to_peer(const void *buf, size_t n, int tag) {
  int peer = 1 - pi.proc;
  skn_net_data_hdr env = {.src = pi.proc, .src_world = pi.first_rank, .dst_world = peer, .tag = tag};
  exp_sent++;
  int rc = skn_net_send(peer, &env, buf, n, send_done, NULL);
  if (rc == SKN_NET_OK) sent++;
  else if (rc != SKN_NET_INPROGRESS) die("send");
}

static void wait_received(int n) {
  while (received < n) skn_net_progress();
}
static void wait_sent(int n) {
  while (sent < n) skn_net_progress();
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* One ping-pong round of n bytes; both processes call it. */
static void round_trip(const uint8_t *sbuf, size_t n) {
  if (pi.proc == 0) {
    send_to_peer(sbuf, n, 1);
    wait_received(++exp_recv);
  } else {
    wait_received(++exp_recv);
    send_to_peer(sbuf, n, 1);
  }
  wait_sent(exp_sent);
}

int main(int argc, char **argv) {
  size_t sizes[32] = {0, 8, 64, 512, 4096, 8192, 16384, 65536, 262144, 1 << 20, 4 << 20};
  int nsizes = 11, reps = 9, iters = 0, window = 32;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      nsizes = 0;
      for (char *t = strtok(argv[++i], ","); t && nsizes < 32; t = strtok(NULL, ","))
        sizes[nsizes++] = (size_t)strtoull(t, NULL, 0);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--window") && i + 1 < argc) window = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: netpingpong [--sizes LIST] [--reps R] [--iters N] [--window W]\n");
      return 2;
    }
  }
  if (reps < 1 || reps > 99 || window < 1) die("bad --reps or --window");
  if (skn_pmi_init(&pi) != SKN_PMI_OK) die("skn_pmi_init");
  if (pi.nprocs != 2) die("run with skeinrun --procs 2");
  skn_net_hooks hooks = {.deliver = on_deliver, .deliver_rndv = on_rndv, .pmi = &skn_net_pmi_static};
  if (skn_net_init(&pi, &hooks) != SKN_NET_OK) die("skn_net_init");
  size_t max = 1;
  for (int k = 0; k < nsizes; k++) max = sizes[k] > max ? sizes[k] : max;
  uint8_t *sbuf = malloc(max);
  rbuf = malloc(max);
  rbuf_size = max;
  memset(rbuf, 0, max);

  /* Idle progress cost (nothing in flight on either side). */
  {
    const int n = 2000000;
    double t0 = now_s();
    for (int i = 0; i < n; i++) skn_net_progress();
    double t = now_s() - t0;
    if (pi.proc == 0) printf("progress_idle_ns=%.1f\n", t / n * 1e9);
    if (skn_pmi_fence() != SKN_PMI_OK) die("fence");
  }
  skn_net_stats st;
  skn_net_get_stats(&st);
  if (pi.proc == 0) {
    printf("# UCX_TLS=%s rndv_threshold=%zu thread_mode=%s\n", getenv("UCX_TLS") ? getenv("UCX_TLS") : "(default)",
           st.rndv_threshold, st.thread_mode);
    printf("# latency: half round trip, median of %d batches; bandwidth: window %d\n", reps, window);
  }

  for (int k = 0; k < nsizes; k++) {
    size_t n = sizes[k];
    /* integrity, once per size */
    for (size_t i = 0; i < n; i++) sbuf[i] = (uint8_t)(i * 7 + (size_t)k + (size_t)pi.proc);
    round_trip(sbuf, n);
    for (size_t i = 0; i < n; i++)
      if (rbuf[i] != (uint8_t)(i * 7 + (size_t)k + (size_t)(1 - pi.proc))) die("data mismatch");
    /* latency */
    int it = iters > 0 ? iters : n <= 65536 ? 2000 : n <= (1 << 20) ? 200 : 50;
    double lat[99];
    for (int r = 0; r < reps; r++) {
      double t0 = now_s();
      for (int i = 0; i < it; i++) round_trip(sbuf, n);
      lat[r] = (now_s() - t0) / it / 2 * 1e6;
    }
    double l = median(lat, reps);
    /* bandwidth: window sends, one 0-byte answer */
    double bw[99];
    int bit = n <= 65536 ? 200 : n <= (1 << 20) ? 20 : 5;
    for (int r = 0; r < reps; r++) {
      double t0 = now_s();
      for (int i = 0; i < bit; i++) {
        if (pi.proc == 0) {
          for (int w = 0; w < window; w++) send_to_peer(sbuf, n, 2);
          wait_sent(exp_sent);
          wait_received(++exp_recv);
        } else {
          wait_received(exp_recv += window);
          send_to_peer(sbuf, 0, 3);
          wait_sent(exp_sent);
        }
      }
      double t = now_s() - t0;
      bw[r] = (double)n * window * bit / t / 1e6;
    }
    double b = median(bw, reps);
    if (pi.proc == 0) printf("size=%zu lat_us=%.3f bw_MBps=%.1f\n", n, l, b);
  }
  skn_net_get_stats(&st);
  if (pi.proc == 0) printf("# endpoints=%d (one per remote process)\n", st.endpoints);
  if (skn_net_finalize() != SKN_NET_OK) die("finalize");
  skn_pmi_finalize();
  free(sbuf);
  free(rbuf);
  return 0;
}
