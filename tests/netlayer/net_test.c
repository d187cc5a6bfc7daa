/* Non-MPI test program for netlayer/ucx: processes started by skeinrun --procs P talk
 * through skn_net_* and check what arrives. Prints "PASS net_test <mode> proc p" and a
 * stats line per process, or "FAIL ..." and exits 1. Every wait has a 60 s deadline.
 *
 *   net_test pingpong   process 0 ping-pongs 0 B .. 16 MiB with every other process
 *   net_test order      every process floods every other one (all its ranks) with a mix of
 *                       eager and rendezvous sizes; delivery order per rank pair is checked
 *                       as it happens (with SKEIN_NET_TEST_SWAP=1 the sender reorders pairs)
 *   net_test delayed    rendezvous fetched 300 ms after arrival, in reverse order, into
 *                       buffers allocated then; one truncated fetch; the sender's sends
 *                       must not complete before the fetch
 *   net_test discard    half of the rendezvous messages are discarded, the rest fetched;
 *                       every send completes
 *   net_test sync       synchronous sends: acks carry the sender's cookies back, not before
 *                       the receiver has taken the message
 *   net_test threads    one thread per local rank sends to every remote rank (mixed sizes)
 *                       and progresses while the main thread receives; order per rank pair
 *   net_test sleep      process 1 waits only by sleeping on skn_net_event_fd between
 *                       messages sent 20 ms apart
 *   net_test kill V     every process sends to every other; then process V announces its
 *                       time and kills itself (SIGKILL); the others (ignoring the launcher's
 *                       SIGTERM) must get peer_failed for V, sleeping on the fd meanwhile,
 *                       and print the delay
 * Process 0's rank count comes from the launcher (-n): several ranks per process are used
 * as destinations in `order`. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "net.h"
#include "pmi.h"

static skn_pmi_info pi;
static const char *mode = "";

#define FAIL(...)                                                                                  \
  do {                                                                                             \
    printf("FAIL net_test %s proc %d: ", mode, pi.proc);                                           \
    printf(__VA_ARGS__);                                                                           \
    printf("\n");                                                                                  \
    fflush(stdout);                                                                                \
    _exit(1);                                                                                      \
  } while (0)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Byte i of message `tag` from world rank s to world rank d. */
static inline uint8_t pat(int s, int d, int tag, size_t i) {
  return (uint8_t)(s * 131 + d * 31 + tag * 7 + i * 13 + (i >> 9));
}
static void fill(uint8_t *b, size_t n, int s, int d, int tag) {
  for (size_t i = 0; i < n; i++) b[i] = pat(s, d, tag, i);
}
static void check(const uint8_t *b, size_t n, int s, int d, int tag) {
  for (size_t i = 0; i < n; i++)
    if (b[i] != pat(s, d, tag, i))
      FAIL("message tag %d from rank %d to %d (%zu bytes): byte %zu is %u, expected %u", tag, s, d,
           n, i, b[i], pat(s, d, tag, i));
}

/* ---------------------------------------------------------------- what the hooks record */

typedef struct item {
  struct item *next;
  skn_net_data_hdr env;
  uint8_t *data;     /* eager copy */
  skn_net_rndv *h;   /* rendezvous handle */
  uint64_t t_arrive;
} item;

static pthread_mutex_t inbox_lock = PTHREAD_MUTEX_INITIALIZER; /* threads mode */
static item *inbox_head, **inbox_tail = &inbox_head;
static int inbox_count;
static int failed_proc = -1;
static uint64_t failed_at;
static int acked[64];
static uint64_t acked_cookie_sum;
static int acks;
static int *next_tag; /* order mode: expected next tag per (src world, dst world) */

static void record(const skn_net_data_hdr *env, const void *data, size_t len, skn_net_rndv *h) {
  item *it = calloc(1, sizeof *it);
  it->env = *env;
  it->h = h;
  it->t_arrive = now_ns();
  if (!h) {
    it->data = malloc(len ? len : 1);
    memcpy(it->data, data, len);
  }
  if (next_tag) { /* order is checked at delivery time: that is what the module promises */
    int *nt = &next_tag[env->src_world * pi.world_size + env->dst_world];
    if (env->tag != *nt)
      FAIL("from rank %d to %d: tag %d delivered, expected %d (seq %u)", env->src_world,
           env->dst_world, env->tag, *nt, env->seq);
    (*nt)++;
  }
  pthread_mutex_lock(&inbox_lock);
  *inbox_tail = it;
  inbox_tail = &it->next;
  inbox_count++;
  pthread_mutex_unlock(&inbox_lock);
}

static void on_deliver(void *c, const skn_net_data_hdr *env, const void *data, size_t len) {
  if (len != env->bytes) FAIL("eager length %zu, envelope says %llu", len, (unsigned long long)env->bytes);
  record(env, data, len, NULL);
}
static void on_rndv(void *c, const skn_net_data_hdr *env, skn_net_rndv *h) { record(env, NULL, 0, h); }
static void on_acked(void *c, const skn_net_ack_hdr *env) {
  if (env->cookie >= 1000 && env->cookie < 1064) acked[env->cookie - 1000]++;
  acked_cookie_sum += env->cookie;
  acks++;
}
static void on_failed(void *c, int proc, const char *why) {
  if (failed_proc < 0) {
    failed_proc = proc;
    failed_at = now_ns();
    printf("proc %d: peer_failed(%d): %s\n", pi.proc, proc, why);
    fflush(stdout);
  }
}

static uint64_t deadline_ns(void) {
  const char *d = getenv("NET_TEST_DEADLINE"); /* seconds, for debugging hangs */
  return now_ns() + (uint64_t)(d ? atoi(d) : 60) * 1000000000ull;
}

static void fail_stats(const char *what, int i) {
  skn_net_stats st;
  skn_net_get_stats(&st);
  FAIL("timeout waiting for %s %d; sent %llu+%llu delivered %llu+%llu held %llu", what, i,
       (unsigned long long)st.sent_eager, (unsigned long long)st.sent_rndv,
       (unsigned long long)st.delivered_eager, (unsigned long long)st.delivered_rndv,
       (unsigned long long)st.held);
}

/* Waits like an idle worker: progress while there is something, else arm and sleep on the
 * transport's fd. A sleep of 5 s means a missed wake-up: fail. */
static int sleeps;
static void progress_or_sleep(void) {
  if (skn_net_progress() || !skn_net_arm()) return;
  struct pollfd p = {.fd = skn_net_event_fd(), .events = POLLIN};
  int n = poll(&p, 1, 5000);
  if (n == 0) FAIL("slept 5 s on the transport's fd without a wake-up");
  sleeps++;
}

static item *take(void) {
  uint64_t end = deadline_ns() - 2000000000ull;
  pthread_mutex_lock(&inbox_lock);
  while (!inbox_head) {
    pthread_mutex_unlock(&inbox_lock);
    if (!skn_net_progress()) sched_yield();
    if (now_ns() > end) fail_stats("a message after", inbox_count);
    pthread_mutex_lock(&inbox_lock);
  }
  item *it = inbox_head;
  inbox_head = it->next;
  if (!inbox_head) inbox_tail = &inbox_head;
  inbox_count--;
  pthread_mutex_unlock(&inbox_lock);
  return it;
}

/* ---------------------------------------------------------------- completions */

typedef struct { _Atomic(int) done; int status; uint64_t t; } compl;
static void on_done(void *arg, int status) {
  compl *c = arg;
  c->t = now_ns();
  c->status = status;
  c->done++;
}

static _Thread_local const size_t *debug_len; /* sizes of the sends, for failure messages */
static void wait_compl(compl *c, int n, const char *what) {
  uint64_t end = deadline_ns();
  for (int i = 0; i < n; i++) {
    while (!c[i].done) {
      if (!skn_net_progress()) sched_yield(); /* more threads than cores in `threads` */
      if (now_ns() > end) {
        if (debug_len) printf("proc %d: the send waited for has %zu bytes\n", pi.proc, debug_len[i]);
        fail_stats(what, i);
      }
    }
    if (c[i].done != 1) FAIL("%s %d completed %d times", what, i, c[i].done);
    if (c[i].status != SKN_NET_OK) FAIL("%s %d completed with status %d", what, i, c[i].status);
  }
}

/* Starts a send; an immediate completion is recorded as one. */
static void send_from(int src_world, int dst_proc, int dst_world, int tag, const void *buf,
                      size_t len, uint32_t flags, uint64_t cookie, compl *c) {
  skn_net_data_hdr env = {.ctx = 7, .src = src_world, .src_world = src_world,
                     .dst_world = dst_world, .tag = tag, .flags = flags, .cookie = cookie};
  memset(c, 0, sizeof *c);
  int rc = skn_net_send(dst_proc, &env, buf, len, on_done, c);
  if (rc == SKN_NET_OK) {
    c->t = now_ns();
    c->done = 1;
  }
  else if (rc != SKN_NET_INPROGRESS) FAIL("send of %zu bytes to process %d: %d", len, dst_proc, rc);
}
static void send_msg(int dst_proc, int dst_world, int tag, const void *buf, size_t len,
                     uint32_t flags, uint64_t cookie, compl *c) {
  send_from(pi.first_rank, dst_proc, dst_world, tag, buf, len, flags, cookie, c);
}

/* Receives the next message into a new buffer (fetching rendezvous at once) and checks it. */
static item *recv_check(int src_world, int dst_world, int tag, size_t len) {
  item *it = take();
  if (it->env.src_world != src_world || it->env.tag != tag || it->env.bytes != len || it->env.ctx != 7)
    FAIL("expected tag %d (%zu B) from rank %d, got tag %d (%llu B) from rank %d", tag, len,
         src_world, it->env.tag, (unsigned long long)it->env.bytes, it->env.src_world);
  if (it->h) {
    it->data = malloc(len ? len : 1);
    compl c = {0};
    int rc = skn_net_fetch(it->h, it->data, len, on_done, &c);
    if (rc == SKN_NET_OK) c.done = 1;
    else if (rc != SKN_NET_INPROGRESS) FAIL("fetch: %d", rc);
    wait_compl(&c, 1, "fetch");
    it->h = NULL;
  }
  check(it->data, len, src_world, dst_world, tag);
  return it;
}
static void item_free(item *it) { free(it->data); free(it); }

/* ---------------------------------------------------------------- modes */

static const size_t pp_sizes[] = {0, 1, 7, 64, 1000, 8191, 8192, 8193, 65536, 1 << 20, 4 << 20, 16 << 20};
#define NPP (sizeof pp_sizes / sizeof pp_sizes[0])

static int world_of(int proc) {
  int first, count;
  skn_pmi_block(pi.world_size, pi.nprocs, proc, &first, &count);
  return first;
}

static void mode_pingpong(void) {
  uint8_t *buf = malloc(16 << 20);
  for (int q = 1; q < pi.nprocs; q++) {
    if (pi.proc != 0 && pi.proc != q) continue;
    int peer = pi.proc == 0 ? q : 0, me = pi.first_rank, pw = world_of(peer);
    for (size_t k = 0; k < NPP; k++) {
      size_t n = pp_sizes[k];
      compl c;
      if (pi.proc == 0) {
        fill(buf, n, me, pw, (int)k);
        send_msg(peer, pw, (int)k, buf, n, 0, 0, &c);
        wait_compl(&c, 1, "ping");
        item_free(recv_check(pw, me, (int)k + 100, n));
      } else {
        item_free(recv_check(pw, me, (int)k, n));
        fill(buf, n, me, pw, (int)k + 100);
        send_msg(peer, pw, (int)k + 100, buf, n, 0, 0, &c);
        wait_compl(&c, 1, "pong");
      }
    }
  }
  free(buf);
}

static const size_t mix_sizes[] = {0, 24, 4000, 8192, 8193, 30000, 200000, 16};
#define NMIX (sizeof mix_sizes / sizeof mix_sizes[0])
#define ORDER_MSGS 400

static void mode_order(void) {
  next_tag = calloc((size_t)pi.world_size * pi.world_size, sizeof *next_tag);
  int npeers = pi.nprocs - 1, total = npeers * ORDER_MSGS;
  compl *c = calloc((size_t)total, sizeof *c);
  uint8_t **bufs = calloc((size_t)total, sizeof *bufs);
  size_t *lens = calloc((size_t)total, sizeof *lens);
  int k = 0;
  /* Tags count per destination rank, so each (source, destination) pair sees 0, 1, 2... */
  int *tag_of = calloc((size_t)pi.world_size, sizeof *tag_of);
  for (int i = 0; i < ORDER_MSGS; i++)
    for (int q = 0; q < pi.nprocs; q++) {
      if (q == pi.proc) continue;
      int first, count;
      skn_pmi_block(pi.world_size, pi.nprocs, q, &first, &count);
      int dw = first + i % count;
      size_t n = mix_sizes[(i + q) % NMIX];
      bufs[k] = malloc(n ? n : 1);
      lens[k] = n;
      fill(bufs[k], n, pi.first_rank, dw, tag_of[dw]);
      send_msg(q, dw, tag_of[dw]++, bufs[k], n, 0, 0, &c[k]);
      k++;
    }
  /* Receive: every peer's messages, checking contents (order was checked on delivery). */
  for (int got = 0; got < total; got++) {
    item *it = take();
    size_t n = it->env.bytes;
    if (it->h) {
      it->data = malloc(n ? n : 1);
      compl f = {0};
      int rc = skn_net_fetch(it->h, it->data, n, on_done, &f);
      if (rc == SKN_NET_OK) f.done = 1;
      else if (rc != SKN_NET_INPROGRESS) FAIL("fetch: %d", rc);
      wait_compl(&f, 1, "fetch");
    }
    check(it->data, n, it->env.src_world, it->env.dst_world, it->env.tag);
    item_free(it);
  }
  debug_len = lens;
  wait_compl(c, total, "send");
  debug_len = NULL;
  free(lens);
  for (int i = 0; i < total; i++) free(bufs[i]);
  free(bufs);
  free(c);
  free(tag_of);
}

/* threads: one thread per local rank sends to every remote rank and progresses while it
 * waits; the main thread receives. Sends, fetches and progress run on all threads at once. */
#define THR_MSGS 60
static void *sender_main(void *arg) {
  int me = pi.first_rank + (int)(intptr_t)arg;
  int remote = pi.world_size - pi.nranks, total = remote * THR_MSGS, k = 0;
  compl *c = calloc((size_t)total, sizeof *c);
  uint8_t **bufs = calloc((size_t)total, sizeof *bufs);
  size_t *lens = calloc((size_t)total, sizeof *lens);
  for (int i = 0; i < THR_MSGS; i++)
    for (int dw = 0; dw < pi.world_size; dw++) {
      int q = skn_net_proc_of(dw);
      if (q == pi.proc) continue;
      size_t n = mix_sizes[(i + dw + me) % NMIX];
      bufs[k] = malloc(n ? n : 1);
      lens[k] = n;
      fill(bufs[k], n, me, dw, i);
      send_from(me, q, dw, i, bufs[k], n, 0, 0, &c[k]);
      k++;
    }
  debug_len = lens;
  wait_compl(c, total, "send");
  debug_len = NULL;
  free(lens);
  for (int i = 0; i < total; i++) free(bufs[i]);
  free(bufs);
  free(c);
  return NULL;
}

static void mode_threads(void) {
  next_tag = calloc((size_t)pi.world_size * pi.world_size, sizeof *next_tag);
  pthread_t t[64];
  if (pi.nranks > 64) FAIL("at most 64 ranks per process");
  for (int i = 0; i < pi.nranks; i++) pthread_create(&t[i], NULL, sender_main, (void *)(intptr_t)i);
  int total = (pi.world_size - pi.nranks) * pi.nranks * THR_MSGS;
  for (int got = 0; got < total; got++) {
    item *it = take();
    size_t n = it->env.bytes;
    if (it->h) {
      it->data = malloc(n ? n : 1);
      compl f = {0};
      int rc = skn_net_fetch(it->h, it->data, n, on_done, &f);
      if (rc == SKN_NET_OK) f.done = 1;
      else if (rc != SKN_NET_INPROGRESS) FAIL("fetch: %d", rc);
      wait_compl(&f, 1, "fetch");
    }
    check(it->data, n, it->env.src_world, it->env.dst_world, it->env.tag);
    item_free(it);
  }
  for (int i = 0; i < pi.nranks; i++) pthread_join(t[i], NULL);
}

/* sleep: process 1 waits only by sleeping on the fd between messages that process 0 sends
 * 20 ms apart (eager and rendezvous; the rendezvous completion needs process 1 awake). */
/* What the check tells apart is a process that sleeps from one that spins (which never
 * finds a message it has not looked for yet, so sleeps 0 times). A loaded machine can keep
 * process 1 from its next wait past the 20 ms gap (TSan at load 12: 13 of 16; a normal
 * build at load 15 once), so half the messages must find it asleep, not all. */
#define MIN_SLEEPS(n) ((n) / 2)
static void mode_sleep(void) {
  const int n = 16;
  if (pi.proc == 0) {
    uint8_t *b = malloc(200000);
    for (int i = 0; i < n; i++) {
      size_t len = mix_sizes[i % NMIX];
      fill(b, len, pi.first_rank, world_of(1), i);
      uint64_t t = now_ns() + 20000000u;
      while (now_ns() < t) skn_net_progress();
      compl c;
      send_msg(1, world_of(1), i, b, len, 0, 0, &c);
      wait_compl(&c, 1, "send");
    }
    free(b);
  } else if (pi.proc == 1) {
    for (int i = 0; i < n; i++) {
      while (!inbox_head) progress_or_sleep();
      item *it = take();
      size_t len = it->env.bytes;
      if (it->h) {
        it->data = malloc(len ? len : 1);
        compl f = {0};
        int rc = skn_net_fetch(it->h, it->data, len, on_done, &f);
        if (rc == SKN_NET_OK) f.done = 1;
        else if (rc != SKN_NET_INPROGRESS) FAIL("fetch: %d", rc);
        while (!f.done) progress_or_sleep();
        if (f.status != SKN_NET_OK) FAIL("fetch status %d", f.status);
      }
      check(it->data, len, world_of(0), pi.first_rank, i);
      item_free(it);
    }
    printf("proc 1: slept %d times on the transport's fd\n", sleeps);
    if (sleeps < MIN_SLEEPS(n)) FAIL("only %d sleeps for %d messages sent 20 ms apart", sleeps, n);
  }
}

#define NRNDV 8
static void mode_delayed(bool discard) {
  const size_t n = 1 << 20;
  if (pi.proc == 0) {
    uint8_t *b[NRNDV];
    compl c[NRNDV];
    uint64_t t0 = now_ns();
    for (int i = 0; i < NRNDV; i++) {
      b[i] = malloc(n + (size_t)i);
      fill(b[i], n + (size_t)i, pi.first_rank, world_of(1), i);
      send_msg(1, world_of(1), i, b[i], n + (size_t)i, 0, 0, &c[i]);
    }
    wait_compl(c, NRNDV, "send");
    for (int i = 0; i < NRNDV; i++) {
      if (!discard && c[i].t - t0 < 250000000u)
        FAIL("send %d completed %llu ms after it started, before the receiver fetched (300 ms)", i,
             (unsigned long long)((c[i].t - t0) / 1000000));
      free(b[i]);
    }
  } else if (pi.proc == 1) {
    item *its[NRNDV];
    for (int i = 0; i < NRNDV; i++) {
      its[i] = take();
      if (!its[i]->h || its[i]->env.tag != i) FAIL("message %d: not a rendezvous in order", i);
    }
    uint64_t end = now_ns() + 300000000u;
    while (now_ns() < end) skn_net_progress(); /* the payloads stay with the sender */
    compl f[NRNDV];
    memset(f, 0, sizeof f);
    for (int i = NRNDV - 1; i >= 0; i--) {
      size_t len = n + (size_t)i;
      if (discard && i % 2 == 0) {
        skn_net_discard(its[i]->h);
        f[i].done = 1;
        continue;
      }
      if (!discard && i == 3) len = 1000; /* truncated: the first 1000 bytes */
      its[i]->data = malloc(len); /* allocated only now */
      int rc = skn_net_fetch(its[i]->h, its[i]->data, len, on_done, &f[i]);
      if (rc == SKN_NET_OK) f[i].done = 1;
      else if (rc != SKN_NET_INPROGRESS) FAIL("fetch %d: %d", i, rc);
      its[i]->env.bytes = len;
    }
    wait_compl(f, NRNDV, "fetch");
    for (int i = 0; i < NRNDV; i++) {
      if (!(discard && i % 2 == 0)) check(its[i]->data, its[i]->env.bytes, world_of(0), pi.first_rank, i);
      item_free(its[i]);
    }
  }
}

#define NSYNC 12
static void mode_sync(void) {
  if (pi.proc == 0) {
    compl c[NSYNC];
    uint8_t *b[NSYNC];
    uint64_t sum = 0, t0 = now_ns();
    for (int i = 0; i < NSYNC; i++) {
      size_t n = mix_sizes[i % NMIX];
      b[i] = malloc(n ? n : 1);
      fill(b[i], n, pi.first_rank, world_of(1), i);
      send_msg(1, world_of(1), i, b[i], n, SKN_NET_SYNC, 1000 + (uint64_t)i, &c[i]);
      sum += 1000 + (uint64_t)i;
    }
    wait_compl(c, NSYNC, "send");
    uint64_t end = now_ns() + 60000000000ull;
    while (acks < NSYNC && now_ns() < end) skn_net_progress();
    uint64_t t = now_ns() - t0;
    if (acks != NSYNC || acked_cookie_sum != sum) FAIL("%d acks (cookie sum %llu), expected %d", acks, (unsigned long long)acked_cookie_sum, NSYNC);
    for (int i = 0; i < NSYNC; i++)
      if (acked[i] != 1) FAIL("cookie %d acked %d times", 1000 + i, acked[i]);
    if (t < 150000000u) FAIL("acks arrived after %llu ms, before the receiver took the messages (200 ms)", (unsigned long long)(t / 1000000));
    for (int i = 0; i < NSYNC; i++) free(b[i]);
  } else if (pi.proc == 1) {
    uint64_t end = now_ns() + 200000000u;
    while (now_ns() < end) skn_net_progress(); /* messages arrive but are not "matched" yet */
    if (acks != 0) FAIL("receiver got %d acks", acks);
    for (int i = 0; i < NSYNC; i++) {
      item *it = recv_check(world_of(0), pi.first_rank, i, mix_sizes[i % NMIX]);
      if (!(it->env.flags & SKN_NET_SYNC) || it->env.cookie != 1000 + (uint64_t)i) FAIL("flags/cookie lost");
      if (skn_net_ack(&(skn_net_ack_hdr){.src_world = it->env.src_world, .cookie = it->env.cookie}) != SKN_NET_OK) FAIL("ack %d", i);
      item_free(it);
    }
  }
}

static void mode_kill(int victim) {
  signal(SIGTERM, SIG_IGN); /* the launcher's SIGTERM must not end us before we detect (a
                             * mask would not do: UCX's own thread would take the signal) */
  /* Connect everyone with everyone first. */
  uint8_t x = 1;
  compl c;
  for (int q = 0; q < pi.nprocs; q++)
    if (q != pi.proc) {
      send_msg(q, world_of(q), 1, &x, 1, 0, 0, &c);
      wait_compl(&c, 1, "send");
    }
  /* The victim's time (tag 2) may overtake another process's hello (tag 1). */
  uint64_t t_kill = 0;
  for (int hellos = 0; hellos < pi.nprocs - 1 || (pi.proc != victim && !t_kill);) {
    item *it = take();
    if (it->env.tag == 2) memcpy(&t_kill, it->data, sizeof t_kill);
    else hellos++;
    item_free(it);
  }
  if (pi.proc == victim) {
    uint64_t t = now_ns();
    for (int q = 0; q < pi.nprocs; q++)
      if (q != pi.proc) {
        send_msg(q, world_of(q), 2, &t, sizeof t, 0, 0, &c);
        wait_compl(&c, 1, "send");
      }
    printf("proc %d: killing myself\n", pi.proc);
    fflush(stdout);
    raise(SIGKILL);
  }
  uint64_t end = now_ns() + 60000000000ull;
  while (failed_proc < 0 && now_ns() < end) progress_or_sleep(); /* as an idle worker would */
  if (failed_proc != victim) FAIL("peer_failed named process %d, expected %d", failed_proc, victim);
  double ms = (double)(failed_at - t_kill) / 1e6;
  printf("proc %d: detected the death of process %d after %.1f ms\n", pi.proc, victim, ms);
  if (ms > 10000) FAIL("detection took %.1f ms", ms);
  skn_net_data_hdr env = {.src_world = pi.first_rank, .dst_world = world_of(victim)};
  int rc = skn_net_send(victim, &env, &x, 1, NULL, NULL);
  if (rc != SKN_NET_ERR_PEER) FAIL("send to the dead process returned %d, not SKN_NET_ERR_PEER", rc);
  printf("PASS net_test %s proc %d\n", mode, pi.proc);
  fflush(stdout);
  /* No finalize (its fence would wait for the dead process), and no exit either: the others
   * must not see this process end before they have detected the victim. The launcher's
   * SIGKILL ends us. */
  for (;;) pause();
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: net_test pingpong|order|delayed|discard|sync|kill V\n");
    return 2;
  }
  mode = argv[1];
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (skn_pmi_init(&pi) != SKN_PMI_OK) FAIL("skn_pmi_init");
  if (pi.nprocs < 2) FAIL("needs at least 2 processes (skeinrun --procs P)");
  skn_net_hooks hooks = {.deliver = on_deliver, .deliver_rndv = on_rndv, .acked = on_acked,
                         .peer_failed = on_failed, .pmi = &skn_net_pmi_static};
  if (skn_net_init(&pi, &hooks) != SKN_NET_OK) FAIL("skn_net_init");
  if (!strcmp(mode, "pingpong")) mode_pingpong();
  else if (!strcmp(mode, "order")) mode_order();
  else if (!strcmp(mode, "delayed")) mode_delayed(false);
  else if (!strcmp(mode, "discard")) mode_delayed(true);
  else if (!strcmp(mode, "sync")) mode_sync();
  else if (!strcmp(mode, "threads")) mode_threads();
  else if (!strcmp(mode, "sleep")) mode_sleep();
  else if (!strcmp(mode, "kill") && argc > 2) mode_kill(atoi(argv[2]));
  else FAIL("unknown mode %s", mode);
  if (inbox_count) FAIL("%d unexpected messages left", inbox_count);
  if (failed_proc >= 0) FAIL("process %d reported failed", failed_proc);
  skn_net_stats st;
  skn_net_get_stats(&st);
  if (st.endpoints > pi.nprocs - 1) FAIL("%d endpoints for %d other processes", st.endpoints, pi.nprocs - 1);
  if (skn_net_finalize() != SKN_NET_OK) FAIL("skn_net_finalize");
  printf("stats proc %d: endpoints %d eager %llu rndv %llu delivered %llu+%llu held %llu acks %llu/%llu mode %s\n",
         pi.proc, st.endpoints, (unsigned long long)st.sent_eager, (unsigned long long)st.sent_rndv,
         (unsigned long long)st.delivered_eager, (unsigned long long)st.delivered_rndv,
         (unsigned long long)st.held, (unsigned long long)st.acks_sent,
         (unsigned long long)st.acks_received, st.thread_mode);
  skn_pmi_finalize();
  printf("PASS net_test %s proc %d\n", mode, pi.proc);
  return 0;
}
