// Scheduler: switching, yield order, wait/wake within and across workers, many units,
// adopted kernel threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <thread>
#include <vector>

#include "harness.h"

namespace {

struct Flag {
  std::atomic<int> value{0};
  std::atomic<skn_unit *> waiter{nullptr};
};

// Blocks until f.value >= want, using the documented waiting protocol.
void wait_for(Flag &f, int want) {
  skn_unit *me = skn_sched_self();
  f.waiter = me;
  for (;;) {
    skn_sched_prepare_wait(me);
    if (f.value.load() >= want) break;
    skn_sched_wait(me);
  }
  skn_sched_done_waiting(me);
}

void set_and_wake(Flag &f, int v) {
  f.value.store(v);
  if (skn_unit *w = f.waiter.load()) skn_sched_wake(w);
}

TEST(Sched, RunsEveryUnitToCompletion) {
  for (int workers : {1, 2}) {
    std::atomic<int> ran{0};
    skntest::run_ranks(100, workers, [&](skn_rank *) { ran++; });
    EXPECT_EQ(ran.load(), 100) << workers << " workers";
  }
}

TEST(Sched, YieldInterleavesUnitsOfOneWorkerInFifoOrder) {
  std::vector<int> trace;
  skntest::run_ranks(3, 1, [&](skn_rank *r) {
    for (int i = 0; i < 3; i++) {
      trace.push_back(r->world_rank);
      skn_sched_yield();
    }
  });
  std::vector<int> expect = {0, 1, 2, 0, 1, 2, 0, 1, 2};
  EXPECT_EQ(trace, expect);
}

TEST(Sched, UnitsKeepTheirWorker) {
  std::atomic<int> moved{0};
  skntest::run_ranks(8, 2, [&](skn_rank *) {
    int w = skn_sched_worker_id();
    for (int i = 0; i < 100; i++) {
      skn_sched_yield();
      if (skn_sched_worker_id() != w) moved++;
    }
  });
  EXPECT_EQ(moved.load(), 0);
}

TEST(Sched, WaitAndWakeOnOneWorkerAndAcrossWorkers) {
  for (int workers : {1, 2}) {
    Flag ping, pong;
    const int rounds = 2000;
    skntest::run_ranks(2, workers, [&](skn_rank *r) {
      for (int i = 1; i <= rounds; i++) {
        if (r->world_rank == 0) {
          set_and_wake(ping, i);
          wait_for(pong, i);
        } else {
          wait_for(ping, i);
          set_and_wake(pong, i);
        }
      }
    });
    EXPECT_EQ(ping.value.load(), rounds);
    EXPECT_EQ(pong.value.load(), rounds);
  }
}

TEST(Sched, SleepingWorkerIsWokenByAnotherWorker) {
  // Rank 0 (worker 0) blocks long enough for its worker to fall asleep on the futex.
  Flag f;
  std::atomic<bool> woke{false};
  skntest::run_ranks(2, 2, [&](skn_rank *r) {
    if (r->world_rank == 0) {
      wait_for(f, 1);
      woke = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      set_and_wake(f, 1);
    }
  });
  EXPECT_TRUE(woke.load());
}

TEST(Sched, YieldWhileAWokenUnitWaitsInTheInbox) {
  // Ranks 0 and 1 share worker 0; rank 2 (worker 1) wakes rank 0 while rank 1 yields in a
  // loop, so the yield finds rank 0 only in the inbox. It must switch to it, not to itself.
  Flag f, done;
  skntest::run_ranks(3, 2, [&](skn_rank *r) {
    switch (r->world_rank) {
      case 0:
        wait_for(f, 1);
        set_and_wake(done, 1);
        break;
      case 1:
        while (done.value.load() == 0) skn_sched_yield();
        break;
      case 2:
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        set_and_wake(f, 1);
        break;
    }
  });
  EXPECT_EQ(done.value.load(), 1);
}

TEST(Sched, ManyUnitsBlockAndWakeInAChain) {
  // Each rank waits for its predecessor: wakes travel through all 500 units.
  const int n = 500;
  std::vector<Flag> flags(n);
  std::vector<int> order;
  std::mutex m;
  skntest::run_ranks(n, 2, [&](skn_rank *r) {
    int i = r->world_rank;
    if (i > 0) wait_for(flags[i - 1], 1);
    {
      std::lock_guard<std::mutex> g(m);
      order.push_back(i);
    }
    set_and_wake(flags[i], 1);
  });
  ASSERT_EQ((int)order.size(), n);
  for (int i = 0; i < n; i++) EXPECT_EQ(order[i], i);
}

TEST(Sched, AdoptedKernelThreadWaitsOnFutex) {
  Flag f;
  std::atomic<int> seen{0};
  skntest::run_ranks(1, 1, [&](skn_rank *r) {
    std::thread t([&] {
      skn_sched_adopt_thread(r);
      EXPECT_EQ(skn_sched_self()->owner, r);
      wait_for(f, 1);
      seen = f.value.load();
      skn_sched_release_thread();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    set_and_wake(f, 1);
    t.join();
  });
  EXPECT_EQ(seen.load(), 1);
}

// Stealing on, every unit placed on worker 0: worker 1 takes units that wait behind a
// running one; each unit's errno comes back with it after every switch, moved or not;
// a pinned unit never moves.
TEST(Sched, IdleWorkerStealsQueuedUnitsWhichKeepTheirErrno) {
  skn_sched_config cfg{};
  cfg.nworkers = 2;
  cfg.stack_size = 256 << 10;
  cfg.spin_iters = 2000;
  cfg.stall_ms = 5000;
  cfg.steal = true;
  ASSERT_EQ(skn_sched_init(&cfg, nullptr), 0);
  struct Ctx {
    int id;
    std::atomic<int> *moved, *bad_errno, *pinned_moved;
  };
  const int n = 6;
  std::atomic<int> moved{0}, bad_errno{0}, pinned_moved{0};
  std::vector<Ctx> ctxs(n);
  for (int i = 0; i < n; i++) {
    ctxs[i] = {i, &moved, &bad_errno, &pinned_moved};
    ASSERT_NE(skn_sched_spawn(0, [](void *p) {
      auto *c = static_cast<Ctx *>(p);
      skn_unit *me = skn_sched_self();
      bool pin = c->id == 0;
      if (pin) skn_sched_pin(me);
      for (int round = 0; round < 20; round++) {
        uint64_t t0 = skn_now_ns();
        while (skn_now_ns() - t0 < 300000) { /* 0.3 ms of work: others wait behind it */ }
        int w = skn_sched_worker_id();
        errno = 1000 + c->id * 100 + round;
        skn_sched_yield();
        if (errno != 1000 + c->id * 100 + round) (*c->bad_errno)++;
        if (skn_sched_worker_id() != w) (pin ? *c->pinned_moved : *c->moved)++;
      }
      if (pin) skn_sched_unpin(me);
    }, &ctxs[i], nullptr), nullptr);
  }
  skn_sched_run();
  EXPECT_GT(moved.load(), 0) << "no unit was stolen by the idle worker";
  EXPECT_EQ(bad_errno.load(), 0);
  EXPECT_EQ(pinned_moved.load(), 0);
}

TEST(Sched, GuardPageLookupFindsTheUnit) {
  skn_unit *found = nullptr, *self = nullptr;
  skntest::run_ranks(1, 1, [&](skn_rank *) {
    self = skn_sched_self();
    found = skn_sched_unit_by_guard(self->stack_lo - 1);
    EXPECT_EQ(skn_sched_unit_by_guard(self->stack_lo), nullptr);
  });
  EXPECT_EQ(found, self);
}

}  // namespace
