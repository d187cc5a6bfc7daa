// Matching engine and protocols, driven directly through the core (no MPI API):
// ordering, wildcards, truncation, cancel, probe, and the buffer budget.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "harness.h"

namespace {

const skn_dtype *const INT = &skn_dt_predefined[8];
const skn_dtype *const BYTE = &skn_dt_predefined[4];

skn_msg msg_to(skn_rank *me, int dst, const void *buf, size_t count, const skn_dtype *dt, int tag,
               uint8_t mode = SKN_MODE_STANDARD) {
  skn_msg m{};
  m.buf = buf;
  m.count = count;
  m.dt = dt;
  m.ctx = 0;
  m.src = me->world_rank;
  m.tag = tag;
  m.comm = MPI_COMM_WORLD;
  m.peer = skn_job_g.ranks[dst];
  m.mode = mode;
  return m;
}

skn_req *post_recv(skn_rank *me, void *buf, size_t count, const skn_dtype *dt, int src, int tag) {
  skn_req *r = skn_req_alloc(me);
  r->kind = SKN_REQ_RECV;
  r->buf = buf;
  r->count = count;
  r->dt = dt;
  r->ctx = 0;
  r->src = src;
  r->tag = tag;
  skn_p2p_recv(me, r);
  return r;
}

void send(skn_rank *me, int dst, const void *buf, size_t count, const skn_dtype *dt, int tag,
          uint8_t mode = SKN_MODE_STANDARD) {
  skn_msg m = msg_to(me, dst, buf, count, dt, tag, mode);
  skn_p2p_send(me, &m, nullptr);
}

TEST(Match, NonOvertakingAcrossProtocols) {
  // Sizes cross the inline, eager and by-reference protocols; the receiver posts late.
  const std::vector<size_t> sizes = {1, 100, 128, 129, 4096, 65536, 65537, 1 << 20, 3};
  for (int workers : {1, 2}) {
    std::vector<int> bad;
    skntest::run_ranks(2, workers, [&](skn_rank *me) {
      if (me->world_rank == 0) {
        std::vector<std::vector<char>> bufs;
        std::vector<skn_req *> reqs;
        for (size_t i = 0; i < sizes.size(); i++) {
          bufs.emplace_back(sizes[i], (char)('a' + i));
          skn_req *s = skn_req_alloc(me);
          skn_msg m = msg_to(me, 1, bufs.back().data(), sizes[i], BYTE, 5);
          skn_p2p_send(me, &m, s);
          reqs.push_back(s);
        }
        for (auto *s : reqs) {
          skn_req_wait(s);
          skn_req_release(s);
        }
      } else {
        for (int i = 0; i < 50; i++) skn_sched_yield();
        for (size_t i = 0; i < sizes.size(); i++) {
          std::vector<char> buf(1 << 20);
          skn_req *r = post_recv(me, buf.data(), buf.size(), BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG);
          skn_req_wait(r);
          if (r->bytes != sizes[i] || buf[0] != (char)('a' + i) || buf[sizes[i] - 1] != (char)('a' + i))
            bad.push_back((int)i);
          skn_req_release(r);
        }
      }
    });
    EXPECT_TRUE(bad.empty()) << "first out-of-order message index " << (bad.empty() ? -1 : bad[0]);
  }
}

TEST(Match, WildcardsAndSpecificTagsSelectTheRightMessage) {
  skntest::run_ranks(3, 1, [&](skn_rank *me) {
    int v;
    if (me->world_rank == 1) {
      v = 11; send(me, 0, &v, 1, INT, 7);
      v = 12; send(me, 0, &v, 1, INT, 8);
    } else if (me->world_rank == 2) {
      v = 21; send(me, 0, &v, 1, INT, 7);
    } else {
      for (int i = 0; i < 10; i++) skn_sched_yield();  // all three are unexpected now
      int got = 0;
      skn_req *r = post_recv(me, &got, 1, INT, 1, 8);  // skips rank 1's tag 7
      skn_req_wait(r);
      EXPECT_EQ(got, 12);
      EXPECT_EQ(r->st_src, 1);
      EXPECT_EQ(r->st_tag, 8);
      skn_req_release(r);
      r = post_recv(me, &got, 1, INT, 2, MPI_ANY_TAG);
      skn_req_wait(r);
      EXPECT_EQ(got, 21);
      skn_req_release(r);
      r = post_recv(me, &got, 1, INT, MPI_ANY_SOURCE, 7);
      skn_req_wait(r);
      EXPECT_EQ(got, 11);
      skn_req_release(r);
    }
  });
}

TEST(Match, ContextsDoNotMatchEachOther) {
  skntest::run_ranks(2, 1, [&](skn_rank *me) {
    int v = 1;
    if (me->world_rank == 0) {
      skn_msg m = msg_to(me, 1, &v, 1, INT, 0);
      m.ctx = 4;
      skn_p2p_send(me, &m, nullptr);
      v = 2;
      send(me, 1, &v, 1, INT, 0);
    } else {
      int got = 0;
      skn_req *r = post_recv(me, &got, 1, INT, MPI_ANY_SOURCE, MPI_ANY_TAG);
      skn_req_wait(r);
      EXPECT_EQ(got, 2);  // context 0 only
      skn_req_release(r);
      skn_probe_info info;
      skn_req *env = skn_p2p_probe(me, 4, 0, 0, true, &info);
      ASSERT_NE(env, nullptr);
      r = skn_req_alloc(me);
      r->kind = SKN_REQ_RECV; r->buf = &got; r->count = 1; r->dt = INT;
      skn_p2p_recv_matched(r, env);
      EXPECT_EQ(got, 1);
      skn_req_release(r);
    }
  });
}

TEST(Match, TruncationCopiesWhatFitsAndFlagsIt) {
  for (size_t n : {8, 1000, 200000}) {  // inline, eager, by-reference
    skntest::run_ranks(2, 1, [&](skn_rank *me) {
      std::vector<int> data(n, 42);
      if (me->world_rank == 0) {
        send(me, 1, data.data(), n, INT, 1);
      } else {
        for (int i = 0; i < 5; i++) skn_sched_yield();
        std::vector<int> small(n / 2 + 1, 0);
        small.push_back(-1);  // sentinel past the receive count
        skn_req *r = post_recv(me, small.data(), n / 2 + 1 - 1, INT, 0, 1);
        skn_req_wait(r);
        EXPECT_TRUE(r->truncated);
        EXPECT_EQ(r->bytes, (n / 2) * sizeof(int));
        EXPECT_EQ(small[n / 2 - 1], 42);
        EXPECT_EQ(small.back(), -1);
        skn_req_release(r);
      }
    });
  }
}

TEST(Match, CancelRemovesAPostedReceiveButNotAMatchedOne) {
  skntest::run_ranks(2, 1, [&](skn_rank *me) {
    int got = 0, v = 3;
    if (me->world_rank == 1) {
      skn_req *r = post_recv(me, &got, 1, INT, 0, 9);
      EXPECT_EQ(skn_p2p_cancel(me, r), SKN_OK);
      EXPECT_TRUE(skn_req_done(r));
      EXPECT_TRUE(r->cancelled);
      skn_req_release(r);
      r = post_recv(me, &got, 1, INT, 0, 10);
      skn_req_wait(r);  // rank 0 sends tag 10
      EXPECT_EQ(skn_p2p_cancel(me, r), SKN_ERR_NOT_CANCELLED);
      EXPECT_EQ(got, 3);
      skn_req_release(r);
    } else {
      send(me, 1, &v, 1, INT, 10);
    }
  });
}

TEST(Match, SynchronousSendWaitsForTheReceiver) {
  std::atomic<bool> posted{false}, send_done_before_post{false};
  skntest::run_ranks(2, 2, [&](skn_rank *me) {
    int v = 5, got = 0;
    if (me->world_rank == 0) {
      send(me, 1, &v, 1, INT, 0, SKN_MODE_SYNC);
      if (!posted.load()) send_done_before_post = true;
    } else {
      for (int i = 0; i < 2000; i++) skn_sched_yield();
      posted = true;
      skn_req *r = post_recv(me, &got, 1, INT, 0, 0);
      skn_req_wait(r);
      EXPECT_EQ(got, 5);
      skn_req_release(r);
    }
  });
  EXPECT_FALSE(send_done_before_post.load());
}

TEST(Match, BufferBudgetBoundsUnexpectedData) {
  // Blocking 1 KiB sends are buffered until the 64 KiB budget is used up; then the
  // sender blocks (by-reference) until the receiver, which starts late, takes them.
  const size_t budget = 64 << 10;
  size_t peak = 0;
  std::atomic<int> sent{0};
  int sent_when_receiving_began = -1;
  skntest::run_ranks(2, 1, [&](skn_rank *me) {
    std::vector<char> buf(1024, 'x');
    if (me->world_rank == 0) {
      for (int i = 0; i < 1000; i++) {
        send(me, 1, buf.data(), buf.size(), BYTE, 0);
        size_t b = skn_job_g.ranks[1]->mq.buffered;
        if (b > peak) peak = b;
        sent++;
      }
    } else {
      sent_when_receiving_began = sent.load();
      for (int i = 0; i < 1000; i++) {
        skn_req *r = post_recv(me, buf.data(), buf.size(), BYTE, 0, 0);
        skn_req_wait(r);
        EXPECT_EQ(r->bytes, 1024u);
        skn_req_release(r);
      }
    }
  }, 64 << 10, budget);
  EXPECT_LE(peak, budget);
  EXPECT_GT(sent_when_receiving_began, 0);     // some sends completed early (buffered)
  EXPECT_LT(sent_when_receiving_began, 1000);  // but the budget stopped the flood
  EXPECT_EQ(sent.load(), 1000);
}

TEST(Match, NonblockingSendsGoByReferenceAboveTheCell) {
  // An Isend larger than a cell completes only when matched: one copy, by the receiver.
  skntest::run_ranks(2, 1, [&](skn_rank *me) {
    std::vector<char> buf(4096, 'y');
    if (me->world_rank == 0) {
      skn_req *s = skn_req_alloc(me);
      skn_msg m = msg_to(me, 1, buf.data(), buf.size(), BYTE, 0);
      skn_p2p_send(me, &m, s);
      EXPECT_FALSE(skn_req_done(s));
      EXPECT_EQ(skn_job_g.ranks[1]->mq.buffered, 0u);
      skn_req_wait(s);
      skn_req_release(s);
    } else {
      std::vector<char> in(4096, 0);
      skn_req *r = post_recv(me, in.data(), in.size(), BYTE, 0, 0);
      skn_req_wait(r);
      EXPECT_EQ(in[4095], 'y');
      skn_req_release(r);
    }
  });
}

TEST(Match, ProbeWaitWakesWhenAMessageArrives) {
  skntest::run_ranks(2, 2, [&](skn_rank *me) {
    int v = 77;
    if (me->world_rank == 0) {
      for (int i = 0; i < 1000; i++) skn_sched_yield();
      send(me, 1, &v, 1, INT, 3);
    } else {
      skn_probe_info info;
      skn_req *env = skn_p2p_probe_wait(me, 0, MPI_ANY_SOURCE, MPI_ANY_TAG, false, &info);
      EXPECT_NE(env, nullptr);
      EXPECT_EQ(info.src, 0);
      EXPECT_EQ(info.tag, 3);
      EXPECT_EQ(info.bytes, sizeof(int));
      int got = 0;
      skn_req *r = post_recv(me, &got, 1, INT, 0, 3);
      skn_req_wait(r);
      EXPECT_EQ(got, 77);
      skn_req_release(r);
    }
  });
}

// The first receive posted into an empty queue sits in the queue's `solo` slot, which an
// arrival claims without the lock; later ones go to the list. A message must still meet
// the earliest matching receive, whichever of the two holds it.
TEST(Match, PostedReceivesMatchInPostingOrderAcrossSoloAndList) {
  std::atomic<int> phase{0};
  auto await = [&](int p) {
    while (phase.load() < p) skn_sched_yield();
  };
  skntest::run_ranks(2, 1, [&](skn_rank *me) {
    if (me->world_rank == 0) {
      await(1);
      int v = 2;
      send(me, 1, &v, 1, INT, 2);  // not for r1 (solo): the listed wildcard r2
      v = 10;
      send(me, 1, &v, 1, INT, 1);  // r1
      phase = 2;
      await(3);
      v = 11;
      send(me, 1, &v, 1, INT, 1);  // r3, listed before r4
      v = 12;
      send(me, 1, &v, 1, INT, 1);  // r4
    } else {
      int g1 = 0, g2 = 0, g3 = 0, g4 = 0;
      skn_req *r1 = post_recv(me, &g1, 1, INT, 0, 1);
      skn_req *r2 = post_recv(me, &g2, 1, INT, MPI_ANY_SOURCE, MPI_ANY_TAG);
      skn_req *r3 = post_recv(me, &g3, 1, INT, 0, 1);
      EXPECT_EQ(skn_p2p_cancel(me, r2), SKN_OK);  // out of the list
      skn_req_release(r2);
      r2 = post_recv(me, &g2, 1, INT, MPI_ANY_SOURCE, MPI_ANY_TAG);  // now after r3
      phase = 1;
      await(2);
      // solo is empty again but r3 is still listed: r4 must queue behind it
      skn_req *r4 = post_recv(me, &g4, 1, INT, 0, 1);
      phase = 3;
      for (skn_req *r : {r1, r2, r3, r4}) skn_req_wait(r);
      EXPECT_EQ(g1, 10);
      EXPECT_EQ(g2, 2);
      EXPECT_EQ(g3, 11);
      EXPECT_EQ(g4, 12);
      for (skn_req *r : {r1, r2, r3, r4}) skn_req_release(r);
    }
  });
}

TEST(Match, CancelTakesTheSoloReceiveAndTheNextPostRefillsIt) {
  skntest::run_ranks(2, 1, [&](skn_rank *me) {
    if (me->world_rank == 1) {
      int a = 0, b = 0, c = 0;
      skn_req *ra = post_recv(me, &a, 1, INT, 0, 5);  // solo
      skn_req *rb = post_recv(me, &b, 1, INT, 0, 5);  // list
      EXPECT_EQ(skn_p2p_cancel(me, ra), SKN_OK);
      EXPECT_TRUE(ra->cancelled);
      EXPECT_EQ(skn_p2p_cancel(me, ra), SKN_ERR_NOT_CANCELLED);  // not posted any more
      skn_req_release(ra);
      skn_req *rc = post_recv(me, &c, 1, INT, 0, 5);  // behind rb
      skn_req_wait(rb);
      skn_req_wait(rc);
      EXPECT_EQ(b, 1);
      EXPECT_EQ(c, 2);
      EXPECT_FALSE(rb->cancelled);
      skn_req_release(rb);
      skn_req_release(rc);
    } else {
      for (int i = 0; i < 10; i++) skn_sched_yield();  // rank 1 has posted and cancelled
      int v = 1;
      send(me, 1, &v, 1, INT, 5);
      v = 2;
      send(me, 1, &v, 1, INT, 5);
    }
  });
}

// Two senders on two workers race for one receiver's posted receives (lock-free claims
// of `solo` against arrivals under the lock): each sender's messages arrive in order and
// none is lost or delivered twice.
TEST(Match, ConcurrentSendersKeepTheirOrderThroughTheSoloSlot) {
  const int n = 3000;
  std::vector<int> bad;
  skntest::run_ranks(3, 2, [&](skn_rank *me) {
    if (me->world_rank != 1) {
      for (int i = 0; i < n; i++) send(me, 1, &i, 1, INT, i % 3);
      return;
    }
    int next[3] = {0, 0, 0};
    for (int k = 0; k < 2 * n;) {
      // sometimes two receives posted at once (solo and list), sometimes one
      int g[2] = {-1, -1};
      int both = (k % 7 == 0 && k + 1 < 2 * n) ? 2 : 1;
      skn_req *r[2];
      for (int j = 0; j < both; j++) r[j] = post_recv(me, &g[j], 1, INT, MPI_ANY_SOURCE, MPI_ANY_TAG);
      for (int j = 0; j < both; j++) {
        skn_req_wait(r[j]);
        int src = r[j]->st_src;
        if (src != 0 && src != 2) bad.push_back(-1);
        else if (g[j] != next[src]++ || r[j]->st_tag != g[j] % 3) bad.push_back(k + j);
        skn_req_release(r[j]);
      }
      k += both;
    }
  });
  EXPECT_TRUE(bad.empty()) << bad.size() << " out of order, first at " << (bad.empty() ? 0 : bad[0]);
}

}  // namespace
