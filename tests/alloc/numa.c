/* NUMA binding: the memory of a rank's arena is bound (mbind MPOL_BIND) to the node of
 * its worker, read back with get_mempolicy(MPOL_F_ADDR).
 *   numa real         the machine's topology: every node is real, blocks must be bound.
 *   numa synthetic N  a forced topology (HWLOC_SYNTHETIC with N NUMA nodes, 1 core each,
 *                     one worker per core): rank r is on worker r*W/size and node w; nodes
 *                     the kernel does not have are reported but not bound. */
#define TEST_NAME "numa"
#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloctest.h"

static int policy_of(void *addr, unsigned long *mask) {
  int mode = -1;
  *mask = 0;
  long rc = syscall(SYS_get_mempolicy, &mode, mask, sizeof(*mask) * 8, addr, MPOL_F_ADDR);
  CHECK(rc == 0, "get_mempolicy(MPOL_F_ADDR) failed");
  return mode;
}

/* Nodes the kernel has. */
static unsigned long kernel_nodes(void) {
  unsigned long m[16] = {0};
  CHECK(syscall(SYS_get_mempolicy, NULL, m, sizeof m * 8, NULL, MPOL_F_MEMS_ALLOWED) == 0, "MPOL_F_MEMS_ALLOWED");
  return m[0];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc >= 2, "usage: numa real | numa synthetic NODES");
  int synthetic = strcmp(argv[1], "synthetic") == 0;
  int nodes = synthetic && argc > 2 ? atoi(argv[2]) : 1;
  MPIX_Heap_stats s = at_stats();
  CHECK(s.enabled, "heap off");
  int expect_node = 0;
  if (synthetic) {
    int workers = nodes < size ? nodes : size;
    expect_node = (int)((long long)rank * workers / size);
  }
  CHECK(s.numa_node == expect_node, "numa_node %d, expected %d", s.numa_node, expect_node);
  int real = (kernel_nodes() >> expect_node) & 1;
  size_t sizes[] = {64, 3000, 100000, 8 << 20};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    char *p = malloc(sizes[k]);
    memset(p, 1, sizes[k]);
    unsigned long mask;
    int mode = policy_of(p, &mask);
    if (real) {
      CHECK(mode == MPOL_BIND && mask == 1ul << expect_node, "%zu-byte block: mode %d mask %#lx, expected "
            "MPOL_BIND to node %d", sizes[k], mode, mask, expect_node);
    } else {
      CHECK(mode == MPOL_DEFAULT, "%zu-byte block on a node the kernel lacks: mode %d", sizes[k], mode);
    }
    free(p);
  }
  at_pass();
  return 0;
}
