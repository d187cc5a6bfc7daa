/* jemalloc's API under the names of Skein's private copy (see CMakeLists.txt and
 * jemalloc.redefine): skn_je_mallocx and so on. Only the allocator includes this. */
#ifndef SKN_ALLOC_JE_H
#define SKN_ALLOC_JE_H

#define JEMALLOC_NO_RENAME
#define je_aligned_alloc skn_je_aligned_alloc
#define je_calloc skn_je_calloc
#define je_dallocx skn_je_dallocx
#define je_free skn_je_free
#define je_mallctl skn_je_mallctl
#define je_mallctlbymib skn_je_mallctlbymib
#define je_mallctlnametomib skn_je_mallctlnametomib
#define je_malloc skn_je_malloc
/* declared (hidden) and defined in heap.c */
#define je_malloc_conf skn_je_malloc_conf_unused
#define je_malloc_conf_2_conf_harder skn_je_malloc_conf_2_conf_harder
#define je_malloc_message skn_je_malloc_message
#define je_malloc_stats_print skn_je_malloc_stats_print
#define je_malloc_usable_size skn_je_malloc_usable_size
#define je_mallocx skn_je_mallocx
#define je_memalign skn_je_memalign
#define je_nallocx skn_je_nallocx
#define je_posix_memalign skn_je_posix_memalign
#define je_rallocx skn_je_rallocx
#define je_realloc skn_je_realloc
#define je_sallocx skn_je_sallocx
#define je_sdallocx skn_je_sdallocx
#define je_valloc skn_je_valloc
#define je_xallocx skn_je_xallocx
#define je_smallocx_54eaed1d8b56b1aa528be3bdd1877e59c56fa90c skn_je_smallocx_unused
#include <jemalloc/jemalloc.h>

#endif
