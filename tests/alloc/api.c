/* The malloc family inside ranks: cross-rank and cross-thread frees, realloc across size
 * classes (and of another rank's block), alignment guarantees, calloc, zero sizes, bad
 * arguments. */
#define TEST_NAME "api"
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include "alloctest.h"

#define NBLK 200

static void *thread_free(void *arg) {
  void **blocks = arg;
  for (int i = 0; i < NBLK; i++) {
    CHECK(at_check(blocks[i], 1 + (size_t)i * 13, (unsigned)i), "block %d corrupted before a thread freed it", i);
    free(blocks[i]);
  }
  return NULL;
}

static void check_alignments(void) {
  long page = sysconf(_SC_PAGESIZE);
  for (size_t a = sizeof(void *); a <= (1 << 16); a *= 2) {
    for (size_t n = 1; n <= (1 << 17); n = n * 5 + 3) {
      void *p = NULL;
      CHECK(posix_memalign(&p, a, n) == 0 && p, "posix_memalign(%zu, %zu)", a, n);
      CHECK((uintptr_t)p % a == 0, "posix_memalign(%zu) gave %p", a, p);
      CHECK(malloc_usable_size(p) >= n, "usable %zu < %zu", malloc_usable_size(p), n);
      memset(p, 0x5a, n);
      free(p);
      p = aligned_alloc(a, n);
      CHECK(p && (uintptr_t)p % a == 0, "aligned_alloc(%zu, %zu) gave %p", a, n, p);
      free(p);
      p = memalign(a, n);
      CHECK(p && (uintptr_t)p % a == 0, "memalign(%zu, %zu) gave %p", a, n, p);
      free(p);
    }
  }
  void *p = valloc(10);
  CHECK(p && (uintptr_t)p % (size_t)page == 0, "valloc gave %p", p);
  free(p);
  p = pvalloc(10);
  CHECK(p && (uintptr_t)p % (size_t)page == 0 && malloc_usable_size(p) >= (size_t)page, "pvalloc gave %p", p);
  free(p);
  p = memalign(24, 100); /* not a power of two: rounded up to 32, as glibc does */
  CHECK(p && (uintptr_t)p % 32 == 0, "memalign(24) gave %p", p);
  free(p);
  p = (void *)1;
  CHECK(posix_memalign(&p, 24, 10) == EINVAL && p == (void *)1, "posix_memalign(24) must fail with EINVAL");
  CHECK(posix_memalign(&p, 4, 10) == EINVAL, "posix_memalign(4) must fail with EINVAL");
  errno = 0;
  CHECK(aligned_alloc(3, 10) == NULL && errno == EINVAL, "aligned_alloc(3) must fail with EINVAL");
  for (size_t n = 0; n < 3000; n += 17) {
    p = malloc(n);
    /* as jemalloc: 16-byte alignment, but 8 for blocks of at most 8 bytes (which can
     * hold no object that needs more) */
    size_t want = n <= 8 ? 8 : 16;
    CHECK(p && (uintptr_t)p % want == 0, "malloc(%zu) gave %p: not %zu-byte aligned", n, p, want);
    free(p);
  }
}

static void check_realloc(int rank) {
  /* grow across size classes (small, large, huge) then shrink, keeping the contents */
  size_t sizes[] = {1, 8, 24, 100, 1000, 4096, 40000, 300000, 5 << 20, 70000, 500, 3};
  char *p = NULL;
  size_t have = 0;
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    size_t n = sizes[k];
    p = realloc(p, n);
    CHECK(p, "realloc to %zu", n);
    size_t keep = have < n ? have : n;
    CHECK(at_check(p, keep, 99u + (unsigned)rank), "realloc to %zu lost the contents", n);
    at_fill(p, n, 99u + (unsigned)rank);
    have = n;
  }
  free(p);
  p = malloc(10);
  CHECK(realloc(p, 0) == NULL, "realloc(p, 0) frees and returns NULL");
  volatile size_t huge = SIZE_MAX - 4096, half = SIZE_MAX / 2; /* hidden from the compiler's checks */
  errno = 0;
  CHECK(malloc(huge) == NULL && errno == ENOMEM, "huge malloc must fail with ENOMEM");
  CHECK(calloc(half, 3) == NULL && errno == ENOMEM, "overflowing calloc must fail with ENOMEM");
  void *a = malloc(0), *b = malloc(0);
  CHECK(a && b && a != b, "malloc(0) must give distinct pointers");
  free(a);
  free(b);
  free(NULL);
  CHECK(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL)");
  for (size_t n = 1; n < 100000; n = n * 3 + 1) {
    unsigned char *z = malloc(n);
    memset(z, 0xff, n);
    free(z);
    z = calloc(n, 1);
    CHECK(z, "calloc(%zu)", n);
    for (size_t i = 0; i < n; i++) CHECK(z[i] == 0, "calloc(%zu) byte %zu not zero", n, i);
    free(z);
  }
  void *r = reallocarray(NULL, 10, 10);
  CHECK(r && malloc_usable_size(r) >= 100, "reallocarray");
  errno = 0;
  CHECK(reallocarray(r, half, 3) == NULL && errno == ENOMEM, "reallocarray overflow");
  free(r);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check_alignments();
  check_realloc(rank);

  /* Blocks allocated by this rank are freed by the next rank, by a thread the next rank
   * creates, or reallocated by it. */
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  void *mine[NBLK], *theirs[NBLK];
  for (int i = 0; i < NBLK; i++) {
    mine[i] = malloc(1 + (size_t)i * 13);
    at_fill(mine[i], 1 + (size_t)i * 13, (unsigned)i);
  }
  MPI_Sendrecv(mine, sizeof mine, MPI_BYTE, next, 0, theirs, sizeof theirs, MPI_BYTE, prev, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  for (int round = 0; round < 3; round++) {
    if (round == 0) {
      for (int i = 0; i < NBLK; i++) {
        CHECK(at_check(theirs[i], 1 + (size_t)i * 13, (unsigned)i), "block %d from rank %d corrupted", i, prev);
        free(theirs[i]);
      }
    } else if (round == 1) {
      pthread_t t;
      CHECK(pthread_create(&t, NULL, thread_free, theirs) == 0, "pthread_create");
      pthread_join(t, NULL);
    } else {
      for (int i = 0; i < NBLK; i++) {
        size_t n = 1 + (size_t)i * 13;
        char *q = realloc(theirs[i], n * 3 + 5000);
        CHECK(q && at_check(q, n, (unsigned)i), "realloc of rank %d's block %d lost its contents", prev, i);
        free(q);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (round < 2) {
      for (int i = 0; i < NBLK; i++) {
        mine[i] = malloc(1 + (size_t)i * 13);
        at_fill(mine[i], 1 + (size_t)i * 13, (unsigned)i);
      }
      MPI_Sendrecv(mine, sizeof mine, MPI_BYTE, next, 0, theirs, sizeof theirs, MPI_BYTE, prev, 0, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    }
  }
  at_pass();
  return 0;
}
