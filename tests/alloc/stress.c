/* Stress: every rank allocates blocks of random sizes (8 B to 256 KiB), keeps some,
 * sends others to random ranks that check and free or reallocate them. Run with many
 * more ranks than workers. */
#define TEST_NAME "stress"
#include "alloctest.h"

#define ROUNDS 40
#define PER 48

typedef struct {
  void *p;
  size_t n;
  unsigned seed;
} blk;

static inline uint32_t rnd(uint32_t *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size <= 1024, "at most 1024 ranks");
  uint32_t s = 1234567u * (uint32_t)(rank + 1);
  blk *keep = calloc(PER, sizeof(blk));
  blk *out = malloc(sizeof(blk) * PER * (size_t)size), *in = malloc(sizeof(blk) * PER * (size_t)size);
  int *cnt = malloc(sizeof(int) * (size_t)size), *rcnt = malloc(sizeof(int) * (size_t)size);
  int *displ = malloc(sizeof(int) * (size_t)size), *rdispl = malloc(sizeof(int) * (size_t)size);
  for (int round = 0; round < ROUNDS; round++) {
    memset(cnt, 0, sizeof(int) * (size_t)size);
    blk *fresh = malloc(sizeof(blk) * PER);
    int dest[PER];
    for (int i = 0; i < PER; i++) {
      size_t n = (rnd(&s) % 8 == 0) ? 1 + rnd(&s) % (256 << 10) : 8 + rnd(&s) % 600;
      fresh[i] = (blk){malloc(n), n, rnd(&s)};
      CHECK(fresh[i].p, "malloc(%zu)", n);
      at_fill(fresh[i].p, n < 256 ? n : 256, fresh[i].seed);
      dest[i] = (int)(rnd(&s) % (unsigned)size);
      cnt[dest[i]]++;
    }
    for (int d = 0, off = 0; d < size; d++) {
      displ[d] = off;
      off += cnt[d];
    }
    int pos[1024];
    for (int d = 0; d < size; d++) pos[d] = displ[d];
    for (int i = 0; i < PER; i++) out[pos[dest[i]]++] = fresh[i];
    free(fresh);
    MPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int d = 0; d < size; d++) {
      rdispl[d] = total;
      total += rcnt[d];
    }
    for (int d = 0; d < size; d++) {
      cnt[d] *= (int)sizeof(blk);
      rcnt[d] *= (int)sizeof(blk);
      displ[d] *= (int)sizeof(blk);
      rdispl[d] *= (int)sizeof(blk);
    }
    MPI_Alltoallv(out, cnt, displ, MPI_BYTE, in, rcnt, rdispl, MPI_BYTE, MPI_COMM_WORLD);
    for (int i = 0; i < total; i++) {
      blk b = in[i];
      CHECK(at_check(b.p, b.n < 256 ? b.n : 256, b.seed), "round %d: received block of %zu bytes corrupted", round, b.n);
      int what = (int)(rnd(&s) % 4);
      if (what == 0) { /* keep it, replacing an older one */
        int slot = (int)(rnd(&s) % PER);
        if (keep[slot].p) {
          CHECK(at_check(keep[slot].p, keep[slot].n < 256 ? keep[slot].n : 256, keep[slot].seed), "kept block corrupted");
          free(keep[slot].p);
        }
        keep[slot] = b;
      } else if (what == 1) { /* move it to another size class */
        size_t n = 1 + rnd(&s) % 70000;
        char *q = realloc(b.p, n);
        CHECK(q, "realloc(%zu)", n);
        size_t k = b.n < n ? b.n : n;
        CHECK(at_check(q, k < 256 ? k : 256, b.seed), "realloc lost the contents");
        free(q);
      } else {
        free(b.p);
      }
    }
  }
  for (int i = 0; i < PER; i++) free(keep[i].p);
  free(keep);
  free(out);
  free(in);
  free(cnt);
  free(rcnt);
  free(displ);
  free(rdispl);
  at_pass();
  return 0;
}
