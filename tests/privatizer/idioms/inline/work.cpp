#include "util.hpp"

int step_count;

int work(int rank) {
  for (int i = 0; i <= rank; i++) tick();
  Pool<int>::put(rank);
  return (int)accumulate<double>(rank);
}

int work_calls() { return unit_calls; }
