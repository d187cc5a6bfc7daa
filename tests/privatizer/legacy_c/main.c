/* Legacy C MPI program with every kind of C global, for the privatizer: each rank writes
 * rank-specific values, yields inside MPI calls, then checks that it sees its own. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "state.h"

struct params params = {-1, 0, 5, 1.5};
int ticks;
static int local_store[8];
int *cursor = &local_store[2];                  /* initializer takes an address */
static int *table[] = {&ticks, &local_store[0]}; /* array of addresses */
static char label[32] = "unset";
static const int primes[4] = {2, 3, 5, 7};      /* const: left alone */
SKEIN_SHARED int shared_hits;                   /* marked shared by attribute */
int pragma_shared;                              /* marked shared by pragma */
#pragma skein shared(pragma_shared)
static long huge[1 << 24];                      /* 128 MiB, zero: demand-paged */
static __thread int tcount = 3;                 /* per rank and per thread */

static void *thread_body(void *arg) {
  int *seen = arg;
  seen[0] = tcount;      /* a new thread starts from the initial value */
  tcount = 1000;
  seen[1] = params.rank; /* and sees its rank's globals */
  return NULL;
}

static int fails;
#define CHECK(c, ...) do { if (!(c)) { printf("FAIL legacy_c: rank %d: " #c " ", params.rank); printf(__VA_ARGS__); printf("\n"); fails++; } } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &params.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &params.size);
  int r = params.rank;
  snprintf(label, sizeof label, "rank-%d", r);
  __atomic_fetch_add(&shared_hits, 1, __ATOMIC_SEQ_CST);
  __atomic_fetch_add(&pragma_shared, 1, __ATOMIC_SEQ_CST);
  for (int s = 0; s < NSTEPS; s++) {
    solver_step(s);
    *cursor += r + 1;
    *table[0] += 10;
    common_steps++;
    huge[(size_t)r * 4096] = r + 1;
    solver_calls();
    tcount += r;
    MPI_Barrier(MPI_COMM_WORLD); /* every other rank runs in between */
  }
  double sum = solver_sum();
  int counts[2] = {ticks, solver_iters}, maxc[2];
  MPI_Allreduce(counts, maxc, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* address of a global array element */
  int seen[2] = {-1, -1};
  pthread_t th;
  pthread_create(&th, NULL, thread_body, seen);
  pthread_join(th, NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(tcount == 3 + 5 * r, "tcount=%d", tcount);
  CHECK(seen[0] == 3 && seen[1] == r, "thread saw tcount=%d rank=%d", seen[0], seen[1]);
  CHECK(ticks == 5 + 50, "ticks=%d", ticks);
  CHECK(solver_iters == 5, "iters=%d", solver_iters);
  CHECK(common_steps == 5 + 5, "common_steps=%d", common_steps);
  CHECK(solver_calls() == 6, "static local");
  CHECK(local_store[2] == 5 * (r + 1), "local_store[2]=%d", local_store[2]);
  CHECK(cursor == &local_store[2], "cursor points at this rank's copy");
  CHECK(table[1] == &local_store[0] && table[0] == &ticks, "table points at this rank's copies");
  double expect = 0;
  for (int i = 0; i < N; i++) expect += r * 1000.0 + i;
  CHECK(sum == expect, "sum=%g expected %g", sum, expect);
  CHECK(last_bits.d == r * 1000.0 + N - 1, "union");
  char want[32];
  snprintf(want, sizeof want, "rank-%d", r);
  CHECK(strcmp(label, want) == 0, "label=%s", label);
  CHECK(huge[(size_t)r * 4096] == r + 1 && (r == 0 || huge[0] == 0), "huge");
  CHECK(primes[3] == 7, "const");
  CHECK(params.scale == 1.5 && params.size > 0, "params");
  CHECK(maxc[0] == 55, "maxc");
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(shared_hits == params.size, "shared_hits=%d", shared_hits);
  CHECK(pragma_shared == params.size, "pragma_shared=%d", pragma_shared);
  int all;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (r == 0 && all == 0) printf("PASS legacy_c\n");
  return all != 0;
}
