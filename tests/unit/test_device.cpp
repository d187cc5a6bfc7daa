// The device interface (runtime/core/device.h) with a loopback fake transport: the
// engine's delivery, ordering, cancel, signature check and peer-failure paths, as a
// transport between processes drives them, without UCX.
//
// The job has 4 ranks in 2 "processes": ranks 0 and 1 run here, ranks 2 and 3 are
// proxies bound to the fake. The fake loops back: a message to proxy 2 + k arrives at
// local rank k, with the sender's envelope. It keeps messages in a FIFO wire until
// progress runs (the tests choose when), carries the type-signature summary the UCX
// transport carries, sends eagerly up to a threshold and by rendezvous above it (the
// receiver fetches from the sender's buffer, which completes the send).
#include <gtest/gtest.h>

#include <cstring>
#include <atomic>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

extern "C" {
#include "core/core.h"
#include "core/engine.h"
#include "sched/sched.h"
}

namespace {

const skn_dtype *const INT = &skn_dt_predefined[(unsigned)MPI_INT & 0xffffffu];
const skn_dtype *const DOUBLE = &skn_dt_predefined[(unsigned)MPI_DOUBLE & 0xffffffu];
const skn_dtype *const BYTE = &skn_dt_predefined[(unsigned)MPI_BYTE & 0xffffffu];
constexpr size_t EAGER_MAX = 256;

// ------------------------------------------------------------------ the fake transport

struct wire_msg {
  int dst_local;  // local rank it loops back to
  int ctx, src, tag;
  size_t bytes;
  skn_sigsum sum;
  std::vector<char> data;  // eager: a copy; rendezvous: the packed send data
  skn_req *sreq;           // rendezvous: completes when fetched or dropped
  bool rndv;
};

struct fake_env {
  skn_req req;  // first: the engine sees the request
  wire_msg *msg;
};

std::mutex wire_lock;
std::deque<wire_msg *> wire;
int fetches, releases, dead_proc = -1;

extern const skn_transport fake;

void sender_done(wire_msg *w) {
  if (w->sreq) skn_req_complete(w->sreq);
}

void fake_fetch(void *handle, void *dst, size_t n, skn_req *r) {
  auto *w = static_cast<wire_msg *>(handle);
  if (r) {
    memcpy(dst, w->data.data(), n);
    fetches++;
  }
  sender_done(w);
  delete w;
  if (r) skn_dev_fetched(r);
}

void fake_release(skn_req *env, bool matched) {
  (void)matched;
  auto *e = reinterpret_cast<fake_env *>(env);
  releases++;
  if (env->proto == SKN_PROTO_FETCH) {
    if (!matched) fake_fetch(e->msg, nullptr, 0, nullptr);  // withdrawn: drop the data
  } else {
    free(env->payload);
    delete e->msg;
  }
  free(e);
}

skn_req *make_env(void *arg, size_t) {
  auto *w = static_cast<wire_msg *>(arg);
  auto *e = static_cast<fake_env *>(aligned_alloc(SKN_CACHELINE, (sizeof(fake_env) + 63) & ~size_t(63)));
  memset(e, 0, sizeof *e);
  e->msg = w;
  skn_req *r = &e->req;
  r->kind = SKN_REQ_SEND;
  r->ctx = w->ctx;
  r->src = w->src;
  r->tag = w->tag;
  r->bytes = w->bytes;
  r->sum = w->sum;
  r->tp = &fake;
  if (w->rndv) {
    r->proto = SKN_PROTO_FETCH;
    r->payload = w;
  } else {
    r->proto = SKN_PROTO_EAGER;
    r->payload = malloc(w->bytes ? w->bytes : 1);
    if (w->bytes) memcpy(r->payload, w->data.data(), w->bytes); /* data() of an empty vector may be null */
  }
  atomic_store(&r->filled, 1u);
  return r;
}

std::mutex progress_lock;

// Delivers everything on the wire, in order, as a transport's progress does. One thread
// progresses at a time, as in the UCX module: two taking messages off the wire at once
// could let the second's arrival overtake the first's, against device.h's order contract
// (seen under ASan: a rendezvous message matched after the four behind it). A blocking
// lock, so that the tests' own calls still return with the wire drained; nothing inside
// switches units.
bool fake_progress() {
  std::lock_guard<std::mutex> one(progress_lock);
  bool any = false;
  for (;;) {
    wire_msg *w;
    {
      std::lock_guard<std::mutex> g(wire_lock);
      if (wire.empty()) return any;
      w = wire.front();
      wire.pop_front();
    }
    any = true;
    skn_req *r = skn_dev_arrive(skn_job_g.ranks[w->dst_local], w->ctx, w->src, w->tag, make_env, w);
    if (!r) continue;  // queued as an envelope
    skn_dev_msg m{};
    m.src = w->src;
    m.tag = w->tag;
    m.bytes = w->bytes;
    m.sum = &w->sum;
    if (w->rndv) {
      m.how = SKN_DATA_FETCH;
      m.tp = &fake;
      m.handle = w;
      if (skn_dev_deliver(r, &m)) skn_req_complete(r);
    } else {
      m.how = SKN_DATA_PACKED;
      m.data = w->data.data();
      skn_dev_deliver(r, &m);
      skn_req_complete(r);
      delete w;
    }
  }
}

void wait_progressing(skn_req *r) {
  while (!skn_req_done(r)) {
    fake_progress();
    skn_sched_yield();
  }
}

void fake_send(skn_rank *me, const skn_msg *m, skn_req *sreq) {
  (void)me;
  if (m->peer->proc == dead_proc) skn_dev_peer_lost(m->peer->proc, "node 0, host fake", "the fake lost it");
  auto *w = new wire_msg{};
  w->dst_local = m->peer->world_rank - skn_job_g.nranks;
  w->ctx = m->ctx;
  w->src = m->src;
  w->tag = m->tag;
  w->bytes = m->count * m->dt->size;
  skn_dt_sigsum(m->dt, m->count, &w->sum);
  w->data.resize(w->bytes);
  if (w->bytes) skn_dt_pack(w->data.data(), m->buf, m->dt, w->bytes);
  w->rndv = w->bytes > EAGER_MAX;
  skn_req stack;
  if (sreq) sreq->peer = m->peer;
  if (w->rndv) {
    if (!sreq) {
      memset(&stack, 0, offsetof(skn_req, cell));
      sreq = &stack;
    }
    w->sreq = sreq;
  }
  bool rndv = w->rndv;  // once on the wire, the receiver's progress may free w
  {
    std::lock_guard<std::mutex> g(wire_lock);
    wire.push_back(w);
  }
  if (sreq == &stack) wait_progressing(&stack);
  else if (sreq && !rndv) skn_req_complete(sreq);
}

bool still_on_wire(const skn_req *sreq, wire_msg **out) {
  for (auto it = wire.begin(); it != wire.end(); ++it)
    if ((*it)->sreq == sreq) {
      *out = *it;
      wire.erase(it);
      return true;
    }
  return false;
}

bool named(const skn_req *env, const void *arg) {
  return env->tp == &fake && reinterpret_cast<const fake_env *>(env)->msg->sreq == arg;
}

// Cancels rendezvous sends (eager ones complete at once, as over UCX below its threshold).
skn_status fake_cancel(skn_rank *, skn_req *r) {
  wire_msg *w = nullptr;
  {
    std::lock_guard<std::mutex> g(wire_lock);
    if (still_on_wire(r, &w)) delete w;
  }
  if (!w) {
    skn_req *env = skn_dev_withdraw(skn_job_g.ranks[r->peer->world_rank - skn_job_g.nranks], named, r);
    if (!env) return SKN_ERR_NOT_CANCELLED;
    auto *e = reinterpret_cast<fake_env *>(env);
    delete e->msg;  // the send completes here, not through a drop
    free(e);
  }
  r->cancelled = true;
  skn_req_complete(r);
  return SKN_OK;
}

const skn_transport fake = [] {
  skn_transport t{};
  t.name = "loopback";
  t.send = fake_send;
  t.cancel_send = fake_cancel;
  t.fetch = fake_fetch;
  t.release = fake_release;
  t.progress = fake_progress;
  return t;
}();

// ------------------------------------------------------------------ the job

void run_job(int nworkers, std::function<void(skn_rank *)> body) {
  skn_sched_config cfg{};
  cfg.nworkers = nworkers;
  cfg.stack_size = 256 << 10;
  cfg.spin_iters = 100;
  cfg.stall_ms = 5000;
  skn_sched_hooks hooks{};
  hooks.poll = fake_progress;
  ASSERT_EQ(skn_sched_init(&cfg, &hooks), 0);
  ASSERT_EQ(skn_job_init(4, 2, 0, 0, 2), 0);
  skn_job_g.eager_limit = 64 << 10;
  skn_job_g.buffer_budget = 4 << 20;
  fetches = releases = 0;
  struct ctx {
    std::function<void(skn_rank *)> *body;
    skn_rank *rank;
  } ctxs[2];
  for (int i = 0; i < 2; i++) {
    skn_rank *r = skn_rank_create(i);
    ASSERT_NE(r, nullptr);
    ctxs[i] = {&body, r};
    r->unit = skn_sched_spawn(i * nworkers / 2, [](void *p) {
      auto *c = static_cast<ctx *>(p);
      (*c->body)(c->rank);
    }, &ctxs[i], r);
  }
  skn_dev_bind(1, &fake);  // the proxies 2 and 3
  skn_sched_run();
  skn_job_fini(); /* the next run_job starts a new job */
  ASSERT_TRUE(wire.empty());
}

// Rank 0 sends to local rank 1 through proxy 3 (the fake loops it back).
skn_msg to_one(skn_rank *me, const void *buf, size_t count, const skn_dtype *dt, int tag) {
  skn_msg m{};
  m.buf = buf;
  m.count = count;
  m.dt = dt;
  m.src = me->world_rank;
  m.tag = tag;
  m.comm = MPI_COMM_WORLD;
  m.peer = skn_job_g.ranks[3];
  return m;
}

skn_req *post(skn_rank *me, void *buf, size_t count, const skn_dtype *dt, int src, int tag) {
  skn_req *r = skn_req_alloc(me);
  r->kind = SKN_REQ_RECV;
  r->buf = buf;
  r->count = count;
  r->dt = dt;
  r->src = src;
  r->tag = tag;
  skn_p2p_recv(me, r);
  return r;
}

skn_dtype *make_struct(const skn_dtype *a, const skn_dtype *b) {
  int ints[3] = {2, 1, 1};
  ptrdiff_t disp[2] = {0, 8};
  const skn_dtype *types[2] = {a, b};
  int err = 0;
  skn_dtype *t = skn_dt_create(MPI_COMBINER_STRUCT, 3, ints, 2, disp, 2, types, &err);
  EXPECT_NE(t, nullptr);
  EXPECT_EQ(skn_dt_commit(t), SKN_OK);
  return t;
}

// A barrier of the two local ranks that also progresses the wire.
std::atomic<int> met, generation;
void meet() {
  int g = generation.load();
  if (++met == 2) {
    met = 0;
    generation++;
    return;
  }
  while (generation.load() == g) {
    fake_progress();
    skn_sched_yield();
  }
}

// Starts a nonblocking send (a blocking rendezvous send would wait for a receive that the
// receiver posts only after the next meet()).
skn_req *isend(skn_rank *me, const skn_msg *m) {
  skn_req *s = skn_req_alloc(me);
  skn_p2p_send(me, m, s);
  return s;
}

void finish(skn_req *s) {
  wait_progressing(s);
  skn_req_release(s);
}

// ------------------------------------------------------------------ tests

TEST(Device, ProxiesAreBoundToTheirProcesssTransport) {
  run_job(1, [&](skn_rank *me) {
    EXPECT_EQ(me->tp, &skn_local_transport);
    EXPECT_EQ(skn_job_g.ranks[2]->tp, &fake);
    EXPECT_EQ(skn_job_g.ranks[3]->tp, &fake);
  });
}

// MPI_T's send counters (skn_dev_count_sends): while some rank has MPI_T initialized, every
// record is bound to the counting copy of its transport, which counts the sends of ranks
// that have it initialized (and only theirs) and sends as the real one; the last `off`
// binds the real tables back.
TEST(Device, CountingCopiesCountOnlyRanksWithMPITAndComeOffWithTheLast) {
  run_job(1, [&](skn_rank *me) {
    if (me->world_rank != 0) return;
    auto self_message = [&](int v) {  // rank 0 to itself: 4 bytes through the local transport
      skn_msg m{};
      m.buf = &v;
      m.count = 1;
      m.dt = INT;
      m.src = 0;
      m.tag = v;
      m.comm = MPI_COMM_WORLD;
      m.peer = skn_job_g.ranks[0];
      finish(isend(me, &m));
      int got = -1;
      skn_req *r = post(me, &got, 1, INT, 0, v);
      wait_progressing(r);
      EXPECT_EQ(got, v);
      skn_req_release(r);
    };
    skn_dev_count_sends(true);  // two ranks turn MPI_T on, this one among them
    skn_dev_count_sends(true);
    me->mpit_refs = 1;
    EXPECT_EQ(skn_job_g.ranks[0]->tp->counted, &skn_local_transport);
    EXPECT_EQ(skn_job_g.ranks[3]->tp->counted, &fake);
    EXPECT_EQ(skn_job_g.ranks[3]->tp->fetch, fake.fetch);
    self_message(1);
    EXPECT_EQ(me->sent_msgs.load(), 1u);
    EXPECT_EQ(me->sent_bytes.load(), 4u);
    me->mpit_refs = 0;  // this rank's MPI_T off, the other's still on: tables stay, no count
    skn_dev_count_sends(false);
    EXPECT_NE(skn_job_g.ranks[0]->tp->counted, nullptr);
    self_message(2);
    EXPECT_EQ(me->sent_msgs.load(), 1u);
    skn_dev_count_sends(false);  // the last off
    EXPECT_EQ(skn_job_g.ranks[0]->tp, &skn_local_transport);
    EXPECT_EQ(skn_job_g.ranks[3]->tp, &fake);
    self_message(3);
    EXPECT_EQ(me->sent_msgs.load(), 1u);
  });
}

TEST(Device, DeliversEagerAndFetchedDataToPostedAndLateReceives) {
  const std::vector<size_t> sizes = {0, 8, 200, 256, 257, 5000, 100000};
  for (int workers : {1, 2})
    for (int late = 0; late < 2; late++) {
      run_job(workers, [&](skn_rank *me) {
        for (size_t i = 0; i < sizes.size(); i++) {
          size_t n = sizes[i];
          if (me->world_rank == 0) {
            std::vector<char> buf(n, char('a' + i));
            if (!late) meet();
            skn_msg m = to_one(me, buf.data(), n, BYTE, (int)i);
            skn_req *s = isend(me, &m);
            if (late) meet();
            finish(s);
            meet();
          } else {
            std::vector<char> buf(n + 16, 'z');
            skn_req *r = nullptr;
            if (!late) r = post(me, buf.data(), n + 16, BYTE, 0, (int)i);
            meet();
            if (late) {
              fake_progress();  // the message becomes an envelope first
              r = post(me, buf.data(), n + 16, BYTE, 0, (int)i);
            }
            wait_progressing(r);
            EXPECT_EQ(r->bytes, n) << "size " << n << (late ? " late" : " posted");
            EXPECT_EQ(r->st_src, 0);
            EXPECT_EQ(r->st_tag, (int)i);
            EXPECT_FALSE(r->type_mismatch);
            EXPECT_FALSE(r->truncated);
            for (size_t k = 0; k < n; k++)
              if (buf[k] != char('a' + i)) {
                ADD_FAILURE() << "size " << n << ": byte " << k;
                break;
              }
            EXPECT_EQ(buf[n], 'z');
            skn_req_release(r);
            meet();
          }
        }
      });
    }
}

TEST(Device, KeepsEachSendersOrderAcrossProtocols) {
  const std::vector<size_t> sizes = {1, 300, 8, 100000, 4, 257, 0, 70000};
  run_job(2, [&](skn_rank *me) {
    if (me->world_rank == 0) {
      std::vector<std::vector<char>> bufs;
      std::vector<skn_req *> reqs;
      for (size_t i = 0; i < sizes.size(); i++) {
        bufs.emplace_back(sizes[i], char('A' + i));
        skn_req *s = skn_req_alloc(me);
        skn_msg m = to_one(me, bufs.back().data(), sizes[i], BYTE, 9);
        skn_p2p_send(me, &m, s);
        reqs.push_back(s);
      }
      for (auto *s : reqs) {
        wait_progressing(s);
        skn_req_release(s);
      }
    } else {
      for (int k = 0; k < 20; k++) skn_sched_yield();
      for (size_t i = 0; i < sizes.size(); i++) {
        std::vector<char> buf(1 << 17, 0);
        skn_req *r = post(me, buf.data(), buf.size(), BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG);
        wait_progressing(r);
        EXPECT_EQ(r->bytes, sizes[i]) << "message " << i;
        if (sizes[i]) EXPECT_EQ(buf[sizes[i] - 1], char('A' + i)) << "message " << i;
        skn_req_release(r);
      }
    }
  });
}

TEST(Device, TruncatesFetchedAndEagerDataAndFlagsIt) {
  for (size_t n : {size_t(100), size_t(5000)}) {
    run_job(1, [&](skn_rank *me) {
      if (me->world_rank == 0) {
        std::vector<int> v(n);
        for (size_t k = 0; k < n; k++) v[k] = (int)k;
        skn_msg m = to_one(me, v.data(), n, INT, 1);
        skn_p2p_send(me, &m, nullptr);
      } else {
        std::vector<int> got(n, -1);
        skn_req *r = post(me, got.data(), n / 2, INT, 0, 1);
        wait_progressing(r);
        EXPECT_TRUE(r->truncated);
        EXPECT_EQ(r->bytes, n / 2 * sizeof(int));
        EXPECT_EQ(got[n / 2 - 1], (int)(n / 2 - 1));
        EXPECT_EQ(got[n / 2], -1);
        skn_req_release(r);
      }
    });
  }
}

TEST(Device, NonContiguousReceivesUnpackFetchedData) {
  run_job(1, [&](skn_rank *me) {
    const size_t n = 2000;  // 8000 bytes: rendezvous
    if (me->world_rank == 0) {
      std::vector<int> v(n);
      for (size_t k = 0; k < n; k++) v[k] = (int)k;
      skn_msg m = to_one(me, v.data(), n, INT, 2);
      skn_p2p_send(me, &m, nullptr);
    } else {
      int ints[3] = {(int)n, 1, 2};  // every other int
      const skn_dtype *types[1] = {INT};
      int err = 0;
      skn_dtype *vec = skn_dt_create(MPI_COMBINER_VECTOR, 3, ints, 0, nullptr, 1, types, &err);
      ASSERT_NE(vec, nullptr);
      ASSERT_EQ(skn_dt_commit(vec), SKN_OK);
      std::vector<int> got(2 * n, -1);
      skn_req *r = post(me, got.data(), 1, vec, 0, 2);
      wait_progressing(r);
      EXPECT_FALSE(r->type_mismatch);
      EXPECT_EQ(r->bytes, n * sizeof(int));
      for (size_t k = 0; k < n; k++)
        if (got[2 * k] != (int)k || got[2 * k + 1] != -1) {
          ADD_FAILURE() << "element " << k;
          break;
        }
      skn_req_release(r);
      EXPECT_EQ(fetches, 1);
    }
  });
}

// The same rule as within a process: doubles received as ints, or (int, double) pairs
// received as (double, int) pairs, copy nothing and fail; an equal type built separately
// and MPI_BYTE pass. Eager and rendezvous sizes, posted and late receives.
TEST(Device, TypeSignaturesAreCheckedAsWithinAProcess) {
  for (size_t n : {size_t(4), size_t(1000)}) {
    for (int late = 0; late < 2; late++) {
      run_job(1, [&](skn_rank *me) {
        skn_dtype *id = make_struct(INT, DOUBLE), *di = make_struct(DOUBLE, INT), *id2 = make_struct(INT, DOUBLE);
        struct pair_id {
          int i;
          double d;
        };
        struct {
          const skn_dtype *st, *rt;
          size_t rcount;
          bool ok;
        } cases[] = {{DOUBLE, INT, 2 * n, false}, {id, di, n, false}, {id, id2, n, true}, {id, BYTE, 16 * n, true},
                     {DOUBLE, DOUBLE, n, true}};
        int round = 0;
        for (auto &c : cases) {
          if (me->world_rank == 0) {
            std::vector<pair_id> v(n);
            for (size_t k = 0; k < n; k++) v[k] = {(int)k, k + 0.5};
            if (!late) meet();
            skn_msg m = to_one(me, v.data(), n, c.st, 3);
            skn_req *s = isend(me, &m);
            if (late) meet();
            finish(s);
          } else {
            std::vector<char> buf(16 * n + 64, 0x5a);
            skn_req *r = nullptr;
            if (!late) r = post(me, buf.data(), c.rcount, c.rt, 0, 3);
            meet();
            if (late) {
              fake_progress();
              r = post(me, buf.data(), c.rcount, c.rt, 0, 3);
            }
            wait_progressing(r);
            EXPECT_EQ(r->type_mismatch, !c.ok) << "case " << round << " n " << n << (late ? " late" : " posted");
            if (!c.ok) {
              EXPECT_EQ(r->bytes, 0u);
              for (size_t k = 0; k < buf.size(); k++)
                if (buf[k] != 0x5a) {
                  ADD_FAILURE() << "a refused message wrote byte " << k;
                  break;
                }
            }
            skn_req_release(r);
          }
          round++;
        }
        for (skn_dtype *t : {id, di, id2}) skn_dt_release(me, t); /* its requests are released */
      });
    }
  }
}

TEST(Device, CancelWithdrawsAQueuedSendButNotAMatchedOne) {
  run_job(1, [&](skn_rank *me) {
    static std::vector<char> big(10000, 'c');
    if (me->world_rank == 0) {
      skn_req *a = skn_req_alloc(me), *b = skn_req_alloc(me), *c = skn_req_alloc(me);
      skn_msg m = to_one(me, big.data(), big.size(), BYTE, 4);
      skn_p2p_send(me, &m, a);  // still on the wire
      EXPECT_EQ(skn_p2p_cancel(me, a), SKN_OK);
      EXPECT_TRUE(a->cancelled);
      m.tag = 5;
      skn_p2p_send(me, &m, b);
      fake_progress();  // now an envelope in rank 1's queue
      EXPECT_EQ(skn_p2p_cancel(me, b), SKN_OK);
      EXPECT_TRUE(b->cancelled);
      m.tag = 6;
      skn_p2p_send(me, &m, c);
      meet();  // rank 1 has posted its receive for tag 6
      fake_progress();
      EXPECT_EQ(skn_p2p_cancel(me, c), SKN_ERR_NOT_CANCELLED);
      wait_progressing(c);
      EXPECT_FALSE(c->cancelled);
      for (auto *r : {a, b, c}) skn_req_release(r);
      meet();
    } else {
      std::vector<char> buf(10000);
      skn_req *r = post(me, buf.data(), buf.size(), BYTE, 0, 6);
      meet();
      wait_progressing(r);
      EXPECT_EQ(r->st_tag, 6);  // the cancelled ones never arrive
      EXPECT_EQ(buf[9999], 'c');
      skn_req_release(r);
      meet();
      skn_probe_info info;
      EXPECT_EQ(skn_p2p_probe(me, 0, MPI_ANY_SOURCE, MPI_ANY_TAG, false, &info), nullptr);
    }
  });
}

TEST(Device, ProbeDescribesAMessageOfTheTransportAndMatchedReceiveTakesIt) {
  run_job(1, [&](skn_rank *me) {
    if (me->world_rank == 0) {
      std::vector<double> v(600, 2.5);  // 4800 bytes: rendezvous
      skn_msg m = to_one(me, v.data(), v.size(), DOUBLE, 8);
      skn_p2p_send(me, &m, nullptr);
    } else {
      skn_probe_info info;
      skn_req *env = skn_p2p_probe_wait(me, 0, 0, 8, true, &info);  // polls the fake
      ASSERT_NE(env, nullptr);
      EXPECT_EQ(info.bytes, 4800u);
      EXPECT_EQ(info.src, 0);
      std::vector<double> got(600);
      skn_req *r = skn_req_alloc(me);
      r->kind = SKN_REQ_RECV;
      r->buf = got.data();
      r->count = got.size();
      r->dt = DOUBLE;
      skn_p2p_recv_matched(r, env);
      wait_progressing(r);
      EXPECT_EQ(got[599], 2.5);
      EXPECT_EQ(releases, 1);
      skn_req_release(r);
    }
  });
}

TEST(DeviceDeathTest, ALostPeerProcessEndsTheJobNamingItsRanks) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        dead_proc = 1;
        run_job(1, [&](skn_rank *me) {
          int v = 1;
          skn_msg m = to_one(me, &v, 1, INT, 0);
          skn_p2p_send(me, &m, nullptr);
        });
      },
      ::testing::ExitedWithCode(SKN_EXIT_PEER_LOST), "lost process 1 \\(ranks 2-3, node 0, host fake\\): the fake lost it");
}

}  // namespace
