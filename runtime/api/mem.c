/* MPI_Alloc_mem and MPI_Free_mem (MPI-3.1 8.2); entry points generated (entry=mem). Memory
 * comes from the calling rank's own heap (allocator/), like its malloc, aligned to a cache
 * line so that windows built on it and atomics on its words do not share lines with other
 * data. No info key changes that. */
#include <stdlib.h>

#include "api/api.h"
#include "api/objects.h"

static int impl_Alloc_mem(skn_rank *me, const char *fn, MPI_Aint size, MPI_Info info, skn_info *info_obj,
                          void *baseptr) {
  (void)info, (void)info_obj;
  if (!baseptr) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "baseptr=NULL");
  size_t bytes = ((size_t)size + SKN_CACHELINE - 1) & ~(size_t)(SKN_CACHELINE - 1);
  void *p = aligned_alloc(SKN_CACHELINE, bytes ? bytes : SKN_CACHELINE);
  if (!p) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory for %td bytes", size);
  *(void **)baseptr = p;
  return MPI_SUCCESS;
}

static int impl_Free_mem(skn_rank *me, const char *fn, void *base) {
  (void)me, (void)fn;
  free(base);
  return MPI_SUCCESS;
}

#include "entries_mem.h"
