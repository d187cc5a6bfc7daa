/* A heap overflow by one byte inside a rank, for valgrind: with
 * --soname-synonyms=somalloc=libskein.so* memcheck must see Skein's malloc and report the
 * invalid write (tests/alloc/CMakeLists.txt; memcheck's blocks are exactly as asked). Run
 * normally it passes: the byte lies within the block's usable size. */
#define TEST_NAME "vgbad"
#include <malloc.h>

#include "alloctest.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  char *p = malloc(10);
  CHECK(p && malloc_usable_size(p) >= 10, "malloc(10)");
  /* one past the 10 bytes asked for (within jemalloc's 16-byte block when run normally) */
  volatile size_t past = 10;
  CHECK(malloc_usable_size(p) == 10 || malloc_usable_size(p) > past, "usable size %zu", malloc_usable_size(p));
  ((volatile char *)p)[past] = 1;
  free(p);
  at_pass();
  return 0;
}
