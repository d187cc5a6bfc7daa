/* Derived datatypes: constructors, commit/free, queries, pack/unpack (issue 3). */
#include "api.h"

const skn_dtype *skn_api_dtype_derived(skn_rank *me, int h) {
  unsigned idx = (unsigned)h & 0xffffffu;
  if (((unsigned)h >> 24) != SKN_KIND_DATATYPE || idx < SKN_DT_PREDEFINED_COUNT) return NULL;
  idx -= SKN_DT_PREDEFINED_COUNT;
  return idx < (unsigned)me->ntypes ? me->types[idx] : NULL;
}
