// Inline functions and templates in a header that use globals: an extern global defined in
// one source, a header static (one per unit), an inline variable, a static local of an
// inline function, and a template static. All must be per rank in every unit.
#pragma once
extern int step_count;        // defined in work.cpp
extern double total_sum;      // defined in main.cpp
static int unit_calls;        // one per including unit
inline int generation = 100;  // C++17 inline variable

inline void tick() {
  step_count++;
  unit_calls++;
  generation++;
}

inline int &counter() {
  static int c;
  return c;
}

template <class T> T accumulate(T v) {
  total_sum += v;
  return (T)total_sum;
}

template <class T> struct Pool {
  static T last;
  static void put(T v) { last = v; counter()++; }
};
template <class T> T Pool<T>::last = T(-1);

int work(int rank);       // work.cpp
int work_calls();
