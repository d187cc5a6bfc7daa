// Runs test bodies as ranks on the real scheduler, without the MPI API or the start-up
// interposers: N ranks (user-level threads) on W workers, each calling body(rank).
#pragma once
#include <functional>
#include <vector>

extern "C" {
#include "core/core.h"
#include "sched/sched.h"
}

namespace skntest {

inline void run_ranks(int nranks, int nworkers, std::function<void(skn_rank *)> body,
                      size_t eager_limit = 64 << 10, size_t budget = 4 << 20) {
  skn_sched_config cfg{};
  cfg.nworkers = nworkers;
  cfg.stack_size = 256 << 10;
  cfg.spin_iters = 100;
  cfg.bind = false;
  cfg.stall_ms = 5000;
  ASSERT_EQ(skn_sched_init(&cfg, nullptr), 0);
  ASSERT_EQ(skn_job_init(nranks, 1, 0, 0, nranks), 0);
  skn_job_g.eager_limit = eager_limit;
  skn_job_g.buffer_budget = budget;
  struct ctx {
    std::function<void(skn_rank *)> *body;
    skn_rank *rank;
  };
  std::vector<ctx> ctxs(nranks);
  for (int i = 0; i < nranks; i++) {
    skn_rank *r = skn_rank_create(i);
    ASSERT_NE(r, nullptr);
    ctxs[i] = {&body, r};
    r->unit = skn_sched_spawn(i * nworkers / nranks, [](void *p) {
      auto *c = static_cast<ctx *>(p);
      (*c->body)(c->rank);
    }, &ctxs[i], r);
    ASSERT_NE(r->unit, nullptr);
  }
  skn_sched_run();
  skn_job_fini(); /* the next run_ranks starts a new job */
}

}  // namespace skntest
