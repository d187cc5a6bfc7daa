/* Golden test (header mode): a project header whose inline function, macro and tentative
 * definition use globals; rewritten into the header directory. */
#ifndef UTIL_H
#define UTIL_H
#include <stddef.h>
#include "config.h"

extern double total;
int steps;                          /* tentative definition in a header: weak */
#define ADD(v) (total += (v))

static inline void record(double v) {
  ADD(v);
  steps++;
  if (steps > LIMIT) steps = 0;
}
#endif
