/* A 1 GiB zero-initialized global array, privatized: each rank touches a few pages of its
 * own copy. The binary must stay small (NOBITS section) and the resident memory of the
 * whole job must stay far below ranks x 1 GiB (pages are mapped on demand). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define HUGE_BYTES (1L << 30)
static char huge[HUGE_BYTES];

static long status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, key, strlen(key)) == 0) sscanf(line + strlen(key), "%ld", &v);
  if (f) fclose(f);
  return v;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, n, fails = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  for (long off = 0; off < HUGE_BYTES; off += HUGE_BYTES / 8) huge[off + r] = (char)(r + 1);
  MPI_Barrier(MPI_COMM_WORLD);
  for (long off = 0; off < HUGE_BYTES; off += HUGE_BYTES / 8)
    for (int k = 0; k < n && k < 64; k++)
      if (huge[off + k] != (k == r ? (char)(r + 1) : 0)) fails++;
  if (fails) printf("FAIL hugezero: rank %d sees other ranks' bytes\n", r);
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 0) {
    struct stat st;
    long rss_mb = status_kb("VmRSS:") / 1024;
    if (stat(argv[0], &st) == 0 && st.st_size > (1 << 20)) {
      printf("FAIL hugezero: binary is %ld bytes\n", (long)st.st_size);
      fails++;
    }
    /* 8 touched pages per rank plus the runtime: a few MiB per rank at most */
    if (rss_mb > 64 + 2L * n) {
      printf("FAIL hugezero: resident %ld MiB for %d ranks\n", rss_mb, n);
      fails++;
    }
    printf("hugezero: %d ranks x 1 GiB array: resident %ld MiB, binary %ld bytes\n", n, rss_mb, (long)st.st_size);
  }
  int all;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (r == 0 && all == 0) printf("PASS hugezero\n");
  return all != 0;
}
