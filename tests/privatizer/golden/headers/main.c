/* Golden test (header mode): see util.h. */
#include "util.h"

double total;

double run(int n) {
  for (int i = 0; i < n; i++) record(i);
  return total + steps;
}
