// Legacy-style C++ MPI program for the privatizer: each rank writes rank-specific values
// into every kind of global, yields inside MPI calls, and checks it sees its own.
#include <mpi.h>
#include <atomic>
#include <thread>
#include <cstdio>
#include <cstring>
#include "state.hpp"

SKEIN_SHARED int tracker_constructed;
// order[rank] records destructor ids; checked by a shared object destroyed at process end
SKEIN_SHARED int dtor_order[64][2];
SKEIN_SHARED int dtor_count[64];

Tracker::Tracker(int i) : id(i) { __atomic_fetch_add(&tracker_constructed, 1, __ATOMIC_SEQ_CST); }
Tracker::~Tracker() {
  if (rank >= 0 && rank < 64) dtor_order[rank][dtor_count[rank]++ % 2] = id;
}

Tracker first(1);   // constructed before `second` in each rank, destroyed after it
Tracker second(2);
std::ofstream out;  // opened by every rank: rank 0 to a file, the others to /dev/null
static std::vector<double> samples = {1.0, 2.0};
static std::string greeting("hello");
thread_local int tls_counter = 5;  // per rank and per thread
int *first_id = &first.id;         // initializer takes the address of a privatized global

namespace {
int anon_state;
}

struct Checker {  // shared: runs once, at process exit, after every rank has ended
  int size = 0;
  ~Checker() {
    for (int r = 0; r < size; r++)
      if (dtor_count[r] != 2 || dtor_order[r][0] != 2 || dtor_order[r][1] != 1)
        std::printf("FAIL legacy_cxx: rank %d destructors ran %d times, order %d %d\n", r, dtor_count[r],
                    dtor_order[r][0], dtor_order[r][1]);
  }
};
SKEIN_SHARED Checker checker;

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      std::printf("FAIL legacy_cxx: rank %d: %s\n", rank, #c);              \
      fails++;                                                              \
    }                                                                       \
  } while (0)

static int bump() {
  static int calls;  // function-local static
  return ++calls;
}

// Meyers singleton: a static local with a constructor, built once per rank
struct Registry2 {
  std::vector<int> items;
  int owner;
  explicit Registry2(int o) : owner(o) {}
};
static Registry2 &registry(int rank) {
  static Registry2 instance(rank);
  return instance;
}
static std::string &last_message() {
  static std::string msg = "none";
  return msg;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  first.rank = second.rank = rank;
  if (rank == 0) checker.size = size;
  out.open(rank == 0 ? "legacy_cxx.out" : "/dev/null");
  for (int s = 0; s < 4; s++) {
    Counter::instances += rank;
    Counter::inline_hits++;
    Registry<int>::add(rank);
    Registry<double>::add(0.5);
    inline_global += 1;
    app::history.push_back(rank * 10 + s);
    samples.push_back(rank);
    tls_counter += rank;
    anon_state += 2;
    bump();
    registry(rank).items.push_back(s);
    last_message() = "step " + std::to_string(s) + " of rank " + std::to_string(rank);
    out << "rank " << rank << " step " << s << "\n";
    MPI_Barrier(MPI_COMM_WORLD);
  }
  app::name = "rank" + std::to_string(rank);
  greeting += std::to_string(rank);
  int tls_in_thread = -1;
  {
    // a thread the rank creates sees the rank's globals and its own thread_local
    std::thread t([&] { tls_in_thread = tls_counter; app::history.push_back(-7); });
    t.join();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(Counter::instances == 100 + 4 * rank);
  CHECK(Counter::inline_hits == 4);
  CHECK(Registry<int>::total == 4 * rank);
  CHECK(Registry<double>::total == 2.0);
  CHECK(inline_global == 11);
  CHECK(app::history.size() == 8 && app::history[3] == rank * 10 && app::history[7] == -7);
  CHECK(samples.size() == 6 && samples[5] == rank);
  CHECK(tls_counter == 5 + 4 * rank);
  CHECK(tls_in_thread == 5);
  CHECK(anon_state == 8);
  CHECK(bump() == 5);
  CHECK(registry(-1).owner == rank && registry(-1).items.size() == 4);
  CHECK(last_message() == "step 3 of rank " + std::to_string(rank));
  CHECK(app::name == "rank" + std::to_string(rank) && app::other_rank() == rank);
  CHECK(greeting == "hello" + std::to_string(rank));
  CHECK(first_id == &first.id && *first_id == 1);
  CHECK(tracker_constructed >= size + 2);
  CHECK(out.good());
  int all;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0 && all == 0) std::printf("PASS legacy_cxx\n");
  return all != 0;
}
