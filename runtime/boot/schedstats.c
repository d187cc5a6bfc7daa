/* SKEIN_SCHEDSTATS: at the end of a job, each rank's compute time and moves and each
 * worker's utilization and steals, so that a user sees the imbalance and what the
 * scheduler did about it (docs/user-guide.md, "Placement and moves"). */
#include <inttypes.h>
#include <stdio.h>

#include "core/core.h"
#include "boot.h"

void skn_boot_sched_report(uint64_t wall_ns) {
  fflush(stdout);
  skn_job *j = &skn_job_g;
  fprintf(stderr, "skein: schedstats: %6s %6s %12s %6s\n", "rank", "worker", "run_ms", "moves");
  uint64_t moves = 0;
  for (int i = j->first_rank; i < j->first_rank + j->nranks; i++) {
    const skn_unit *u = j->ranks[i]->unit;
    fprintf(stderr, "skein: schedstats: %6d %6d %12.3f %6" PRIu32 "\n", i, skn_sched_unit_worker_id(u),
            (double)u->run_ns * 1e-6, u->moves);
    moves += u->moves;
  }
  fprintf(stderr, "skein: schedstats: %6s %8s %8s %8s\n", "worker", "busy_ms", "util", "steals");
  for (int w = 0; w < skn_sched_nworkers(); w++) {
    skn_sched_worker_stats s;
    skn_sched_worker_stats_of(w, &s);
    double busy = (double)(wall_ns > s.idle_ns ? wall_ns - s.idle_ns : 0);
    fprintf(stderr, "skein: schedstats: %6d %8.1f %7.1f%% %8" PRIu64 "\n", w, busy * 1e-6,
            wall_ns ? 100.0 * busy / (double)wall_ns : 0.0, s.steals);
  }
  fprintf(stderr, "skein: schedstats: wall %.1f ms, %" PRIu64 " moves\n", (double)wall_ns * 1e-6, moves);
}
