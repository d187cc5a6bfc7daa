// C++ program state: every kind of C++ global the privatizer handles.
#pragma once
#include <fstream>
#include <string>
#include <vector>
#include <skein_privatize.h>

struct Counter {
  static int instances;           // static data member (defined in other.cpp)
  static inline int inline_hits;  // C++17 inline static member
};

template <class T> struct Registry {
  static T total;                 // template static
  static void add(T v) { total += v; }
};
template <class T> T Registry<T>::total;

inline int inline_global = 7;     // C++17 inline variable

namespace app {
extern std::vector<int> history; // global with a destructor (other.cpp)
extern std::string name;
int other_rank();
}

// Construction and destruction order, per rank, for the check at process end.
struct Tracker {
  int id, rank = -1;
  explicit Tracker(int i);
  ~Tracker();
};
extern SKEIN_SHARED int tracker_constructed;
