// Golden test: C++ globals (see cxx.cpp.expected).
#include <string>
#include <vector>

struct Stats {
  static int count;            // static data member
  static inline int hits = 0;  // inline static member: found by address
};
int Stats::count = 5;

template <class T> struct Box {
  static T value;              // template static: found by address
};
template <class T> T Box<T>::value;

inline int version = 3;        // inline variable: found by address

namespace app {
std::vector<int> history;      // constructor and destructor: per rank
std::string name("none");
int *first = &Stats::count;    // address of another privatized global
}  // namespace app

thread_local int per_thread = 1;   // per rank and per thread
constexpr int kMax = 8;            // constexpr: left alone

std::vector<int> &cache(int n) {
  static std::vector<int> values(n, 1);  // static local with a constructor: per rank, on first use
  return values;
}

int touch(int n) {
  static int calls;
  Stats::count += n;
  Stats::hits++;
  Box<int>::value += n;
  version++;
  per_thread += n;
  app::history.push_back(n + kMax);
  app::name = "touched";
  return ++calls + *app::first;
}
