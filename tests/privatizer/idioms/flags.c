/* gcc-only flags and Clang-only warnings (tests/privatizer/gcc_flags.sh): gcc prints nothing
 * for this file with -Wall -Wextra, nor may a -fprivatize build. */
#include <mpi.h>

int counter;
static float scale = 16777217;   /* Clang: -Wimplicit-const-int-float-conversion */
static int table[4] = {1, 2, 3, 4};

static int half = 3.5;            /* Clang: -Wliteral-conversion */

int step(int x) {
  if (x == half) return 0;
  counter += x;
  table[x & 3] += (int)scale;
  return counter;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r = step(argc);
  MPI_Finalize();
  return r == 0;
}
