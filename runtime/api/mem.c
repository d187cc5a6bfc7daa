/* MPI_Alloc_mem and MPI_Free_mem (MPI-3.1 8.2). Memory comes from the calling rank's own
 * heap (allocator/), like its malloc, aligned to a cache line so that windows built on it
 * and atomics on its words do not share lines with other data. No info key changes that. */
#include <stdint.h>
#include <stdlib.h>

#include "api.h"
#include "objects.h"

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr) {
  static const char fn[] = "MPI_Alloc_mem";
  skn_rank *me = skn_api_self(fn);
  if (size < 0) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "size=%ld", (long)size);
  if (!baseptr) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "baseptr=NULL");
  if (info != MPI_INFO_NULL) { /* checked, then not needed */
    skn_info *copy = NULL;
    int rc = skn_info_copy_handle(me, fn, info, &copy);
    if (rc != MPI_SUCCESS) return rc;
    skn_info_destroy(copy);
  }
  size_t bytes = ((size_t)size + SKN_CACHELINE - 1) & ~(size_t)(SKN_CACHELINE - 1);
  void *p = aligned_alloc(SKN_CACHELINE, bytes ? bytes : SKN_CACHELINE);
  if (!p) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory for %ld bytes", (long)size);
  *(void **)baseptr = p;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Alloc_mem);

int PMPI_Free_mem(void *base) {
  skn_api_self("MPI_Free_mem");
  free(base);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Free_mem);
