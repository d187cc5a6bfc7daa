/* Built into libcounter.so: its globals live in the library's own privatized sections. */
#include "app.h"

static int count;
int history[4];

int counter_bump(int by) {
  history[count % 4] = by;
  return count += by;
}
int counter_get(void) { return count; }
