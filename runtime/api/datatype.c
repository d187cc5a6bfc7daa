/* Derived datatypes: constructors, commit/free, queries, pack/unpack (issue 3).
 * Argument checks and handles here; building, flattening, copying and lifetime are the
 * core's (core/datatype_engine.c). Errors not tied to a communicator go to MPI_COMM_SELF's
 * handler. A derived type lives in the calling rank's table; a handle is
 * SKN_HANDLE(SKN_KIND_DATATYPE, SKN_DT_PREDEFINED_COUNT + slot). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "objects.h"

static inline int dt_slot(int h) {
  unsigned idx = (unsigned)h & 0xffffffu;
  if (((unsigned)h >> 24) != SKN_KIND_DATATYPE || idx < SKN_DT_PREDEFINED_COUNT) return -1;
  return (int)(idx - SKN_DT_PREDEFINED_COUNT);
}

const skn_dtype *skn_api_dtype_derived(skn_rank *me, int h) {
  int slot = dt_slot(h);
  if (slot < 1 || slot >= me->ntypes) return NULL;
  const skn_dtype *t = me->types[slot];
  return (t && (t->flags & SKN_DT_COMMITTED)) ? t : NULL;
}

/* Any valid type, committed or not (constructors and queries); NULL otherwise. */
static skn_dtype *dt_any(skn_rank *me, int h) {
  unsigned idx = (unsigned)h & 0xffffffu;
  if (((unsigned)h >> 24) != SKN_KIND_DATATYPE) return NULL;
  if (idx >= 1 && idx < SKN_DT_PREDEFINED_COUNT) return (skn_dtype *)&skn_dt_predefined[idx];
  int slot = dt_slot(h);
  return slot >= 1 ? skn_dt_table_get(me, slot) : NULL;
}

const skn_dtype *skn_api_dtype_any(skn_rank *me, int h) {
  skn_rank_lock(me);
  const skn_dtype *t = dt_any(me, h);
  skn_rank_unlock(me);
  return t;
}

static inline int dt_handle(int slot) { return SKN_HANDLE(SKN_KIND_DATATYPE, SKN_DT_PREDEFINED_COUNT + slot); }

/* The handle naming t: predefined ones by their index, derived ones get a new slot
 * holding one more reference (as MPI_Type_get_contents returns them). */
static int new_handle(skn_rank *me, skn_dtype *t) {
  if (!(t->flags & SKN_DT_DERIVED)) return SKN_DT((int)(t - skn_dt_predefined));
  int slot = skn_dt_table_add(me, t);
  if (slot < 0) return MPI_DATATYPE_NULL;
  skn_dt_retain(t);
  return dt_handle(slot);
}

static int type_error(skn_rank *me, const char *fn, const char *what, MPI_Datatype dt) {
  return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_TYPE, fn, "%s=%#x is not a valid datatype", what, (unsigned)dt);
}

/* Builds a derived type from checked arguments and returns its handle in *newtype. */
static int make_type(skn_rank *me, const char *fn, int combiner, int ni, const int *ints, int na,
                     const MPI_Aint *aints, int nd, const MPI_Datatype *types, MPI_Datatype *newtype) {
  if (!newtype) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "newtype=NULL");
  const skn_dtype *small[8], **kids = small;
  if (nd > 8 && !(kids = malloc((size_t)nd * sizeof *kids)))
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  int rc = MPI_SUCCESS;
  skn_rank_lock(me);
  skn_dt_collect(me);
  for (int i = 0; i < nd && rc == MPI_SUCCESS; i++) {
    kids[i] = dt_any(me, types[i]);
    if (!kids[i]) {
      skn_rank_unlock(me);
      rc = nd > 1 ? skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_TYPE, fn, "array_of_types[%d]=%#x is not a valid datatype",
                                  i, (unsigned)types[i])
                  : type_error(me, fn, "oldtype", types[i]);
      skn_rank_lock(me);
    }
  }
  if (rc == MPI_SUCCESS) {
    int err;
    skn_dtype *t = skn_dt_create(combiner, ni, ints, na, aints, nd, kids, &err);
    int slot = t ? skn_dt_table_add(me, t) : -1;
    if (slot < 0) {
      if (t) skn_dt_release(me, t);
      skn_rank_unlock(me);
      rc = err == SKN_ERR_TRUNCATE
               ? skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "the type's size or extent overflows MPI_Aint")
               : skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory for a datatype");
      skn_rank_lock(me);
    } else {
      *newtype = dt_handle(slot);
    }
  }
  skn_rank_unlock(me);
  if (kids != small) free(kids);
  return rc;
}

/* ------------------------------------------------------------------ constructors */

/* The entry points generated from runtime/binding/functions.txt (entries_datatype.h,
 * included at the end) have found the rank and checked counts, array pointers, the types
 * given (committed or not) and the output pointers; what is left to check is here. */

/* bl: count entries (the entry point checked the pointer) */
static int check_blocklengths(skn_rank *me, const char *fn, int count, const int *bl) {
  for (int i = 0; i < count; i++)
    if (bl[i] < 0)
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "array_of_blocklengths[%d]=%d", i, bl[i]);
  return MPI_SUCCESS;
}

static int impl_Type_contiguous(skn_rank *me, const char *fn, int count, MPI_Datatype oldtype, const skn_dtype *old,
                                MPI_Datatype *newtype) {
  return make_type(me, fn, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &oldtype, newtype);
}

static int impl_Type_vector(skn_rank *me, const char *fn, int count, int blocklength, int stride, MPI_Datatype oldtype,
                            const skn_dtype *old, MPI_Datatype *newtype) {
  if (blocklength < 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "blocklength=%d", blocklength);
  int ints[3] = {count, blocklength, stride};
  return make_type(me, fn, MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &oldtype, newtype);
}

static int impl_Type_create_hvector(skn_rank *me, const char *fn, int count, int blocklength, MPI_Aint stride,
                                    MPI_Datatype oldtype, const skn_dtype *old, MPI_Datatype *newtype) {
  if (blocklength < 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "blocklength=%d", blocklength);
  int ints[2] = {count, blocklength};
  return make_type(me, fn, MPI_COMBINER_HVECTOR, 2, ints, 1, &stride, 1, &oldtype, newtype);
}

/* ints = count, then the arrays given (copied), for the indexed family */
static int *pack_ints(int first, int second, bool has_second, int count, const int *a, const int *b) {
  size_t n = 1 + (has_second ? 1 : 0) + (size_t)count * (b ? 2 : 1);
  int *ints = malloc(n * sizeof *ints);
  if (!ints) return NULL;
  int k = 0;
  ints[k++] = first;
  if (has_second) ints[k++] = second;
  if (count) memcpy(ints + k, a, (size_t)count * sizeof *a);
  if (b && count) memcpy(ints + k + count, b, (size_t)count * sizeof *b);
  return ints;
}

static int impl_Type_indexed(skn_rank *me, const char *fn, int count, const int array_of_blocklengths[],
                             const int array_of_displacements[], MPI_Datatype oldtype, const skn_dtype *old,
                             MPI_Datatype *newtype) {
  int rc = check_blocklengths(me, fn, count, array_of_blocklengths);
  if (rc) return rc;
  int *ints = pack_ints(count, 0, false, count, array_of_blocklengths, array_of_displacements);
  if (!ints) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  rc = make_type(me, fn, MPI_COMBINER_INDEXED, 1 + 2 * count, ints, 0, NULL, 1, &oldtype, newtype);
  free(ints);
  return rc;
}

static int impl_Type_create_hindexed(skn_rank *me, const char *fn, int count, const int array_of_blocklengths[],
                                     const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, const skn_dtype *old,
                                     MPI_Datatype *newtype) {
  int rc = check_blocklengths(me, fn, count, array_of_blocklengths);
  if (rc) return rc;
  int *ints = pack_ints(count, 0, false, count, array_of_blocklengths, NULL);
  if (!ints) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  rc = make_type(me, fn, MPI_COMBINER_HINDEXED, 1 + count, ints, count, array_of_displacements, 1, &oldtype,
                 newtype);
  free(ints);
  return rc;
}

static int impl_Type_create_indexed_block(skn_rank *me, const char *fn, int count, int blocklength,
                                          const int array_of_displacements[], MPI_Datatype oldtype, const skn_dtype *old,
                                          MPI_Datatype *newtype) {
  if (blocklength < 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "blocklength=%d", blocklength);
  int *ints = pack_ints(count, blocklength, true, count, array_of_displacements, NULL);
  if (!ints) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  int rc = make_type(me, fn, MPI_COMBINER_INDEXED_BLOCK, 2 + count, ints, 0, NULL, 1, &oldtype, newtype);
  free(ints);
  return rc;
}

static int impl_Type_create_hindexed_block(skn_rank *me, const char *fn, int count, int blocklength,
                                           const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                           const skn_dtype *old, MPI_Datatype *newtype) {
  if (blocklength < 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "blocklength=%d", blocklength);
  int ints[2] = {count, blocklength};
  return make_type(me, fn, MPI_COMBINER_HINDEXED_BLOCK, 2, ints, count, array_of_displacements, 1, &oldtype,
                   newtype);
}

static int impl_Type_create_struct(skn_rank *me, const char *fn, int count, const int array_of_blocklengths[],
                                   const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                                   MPI_Datatype *newtype) {
  int rc = check_blocklengths(me, fn, count, array_of_blocklengths);
  if (rc) return rc;
  int *ints = pack_ints(count, 0, false, count, array_of_blocklengths, NULL);
  if (!ints) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  rc = make_type(me, fn, MPI_COMBINER_STRUCT, 1 + count, ints, count, array_of_displacements, count,
                 array_of_types, newtype);
  free(ints);
  return rc;
}

static int check_order(skn_rank *me, const char *fn, int order) {
  if (order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN) return MPI_SUCCESS;
  return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "order=%d (must be MPI_ORDER_C or MPI_ORDER_FORTRAN)", order);
}

static int impl_Type_create_subarray(skn_rank *me, const char *fn, int ndims, const int array_of_sizes[],
                                     const int array_of_subsizes[], const int array_of_starts[], int order,
                                     MPI_Datatype oldtype, const skn_dtype *old, MPI_Datatype *newtype) {
  if (ndims <= 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "ndims=%d", ndims);
  for (int i = 0; i < ndims; i++) {
    int sz = array_of_sizes[i], sub = array_of_subsizes[i], st = array_of_starts[i];
    if (sz <= 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "array_of_sizes[%d]=%d", i, sz);
    if (sub <= 0 || sub > sz)
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "array_of_subsizes[%d]=%d (size %d)", i, sub, sz);
    if (st < 0 || st > sz - sub)
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "array_of_starts[%d]=%d (size %d, subsize %d)", i, st, sz,
                           sub);
  }
  int rc = check_order(me, fn, order);
  if (rc) return rc;
  int *ints = malloc((size_t)(3 * ndims + 2) * sizeof *ints);
  if (!ints) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  ints[0] = ndims;
  memcpy(ints + 1, array_of_sizes, (size_t)ndims * sizeof *ints);
  memcpy(ints + 1 + ndims, array_of_subsizes, (size_t)ndims * sizeof *ints);
  memcpy(ints + 1 + 2 * ndims, array_of_starts, (size_t)ndims * sizeof *ints);
  ints[1 + 3 * ndims] = order;
  rc = make_type(me, fn, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, 0, NULL, 1, &oldtype, newtype);
  free(ints);
  return rc;
}

static int impl_Type_create_darray(skn_rank *me, const char *fn, int size, int rank, int ndims,
                                   const int array_of_gsizes[], const int array_of_distribs[],
                                   const int array_of_dargs[], const int array_of_psizes[], int order,
                                   MPI_Datatype oldtype, const skn_dtype *old, MPI_Datatype *newtype) {
  if (size <= 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "size=%d", size);
  if (rank < 0 || rank >= size) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "rank=%d (size %d)", rank, size);
  if (ndims <= 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "ndims=%d", ndims);
  long long procs = 1;
  for (int i = 0; i < ndims; i++) {
    int g = array_of_gsizes[i], d = array_of_distribs[i], a = array_of_dargs[i], p = array_of_psizes[i];
    if (g <= 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "array_of_gsizes[%d]=%d", i, g);
    if (p <= 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "array_of_psizes[%d]=%d", i, p);
    procs *= p;
    if (procs > size) break;
    if (d != MPI_DISTRIBUTE_BLOCK && d != MPI_DISTRIBUTE_CYCLIC && d != MPI_DISTRIBUTE_NONE)
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "array_of_distribs[%d]=%d", i, d);
    if (a != MPI_DISTRIBUTE_DFLT_DARG && a <= 0)
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "array_of_dargs[%d]=%d", i, a);
    if (d == MPI_DISTRIBUTE_NONE && p != 1)
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "array_of_psizes[%d]=%d with MPI_DISTRIBUTE_NONE", i, p);
    if (d == MPI_DISTRIBUTE_BLOCK && a != MPI_DISTRIBUTE_DFLT_DARG && (long long)a * p < g)
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn,
                           "array_of_dargs[%d]=%d: %d blocks of %d cannot hold %d elements", i, a, p, a, g);
  }
  if (procs != size)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "the product of array_of_psizes is not size=%d", size);
  int rc = check_order(me, fn, order);
  if (rc) return rc;
  int n = 4 * ndims + 4;
  int *ints = malloc((size_t)n * sizeof *ints);
  if (!ints) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  ints[0] = size;
  ints[1] = rank;
  ints[2] = ndims;
  memcpy(ints + 3, array_of_gsizes, (size_t)ndims * sizeof *ints);
  memcpy(ints + 3 + ndims, array_of_distribs, (size_t)ndims * sizeof *ints);
  memcpy(ints + 3 + 2 * ndims, array_of_dargs, (size_t)ndims * sizeof *ints);
  memcpy(ints + 3 + 3 * ndims, array_of_psizes, (size_t)ndims * sizeof *ints);
  ints[3 + 4 * ndims] = order;
  rc = make_type(me, fn, MPI_COMBINER_DARRAY, n, ints, 0, NULL, 1, &oldtype, newtype);
  free(ints);
  return rc;
}

static int impl_Type_create_resized(skn_rank *me, const char *fn, MPI_Datatype oldtype, const skn_dtype *old,
                                    MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype) {
  MPI_Aint aints[2] = {lb, extent};
  return make_type(me, fn, MPI_COMBINER_RESIZED, 0, NULL, 2, aints, 1, &oldtype, newtype);
}

static int impl_Type_dup(skn_rank *me, const char *fn, MPI_Datatype oldtype, const skn_dtype *oldt,
                         MPI_Datatype *newtype) {
  int rc = make_type(me, fn, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &oldtype, newtype);
  if (rc) return rc;
  /* a duplicate of a committed type is committed */
  skn_rank_lock(me);
  skn_dtype *old = dt_any(me, oldtype), *t = dt_any(me, *newtype);
  int err = SKN_OK;
  if (!(old->flags & SKN_DT_DERIVED) || (old->flags & SKN_DT_COMMITTED)) err = skn_dt_commit(t);
  skn_rank_unlock(me);
  if (err != SKN_OK) {
    PMPI_Type_free(newtype);
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  }
  /* this rank's attributes, through their copy callbacks; on failure the new type goes */
  rc = skn_type_attrs_dup(me, oldtype, *newtype);
  if (rc != MPI_SUCCESS) {
    skn_type_attrs_free(me, *newtype);
    PMPI_Type_free(newtype);
    return skn_api_error(me, SKN_API_NOOBJ, skn_attr_errclass(rc), fn, "an attribute copy callback failed (%d)", rc);
  }
  return MPI_SUCCESS;
}

int skn_api_type_f90(skn_rank *me, const char *fn, int combiner, int ni, const int *ints, MPI_Datatype base,
                     MPI_Datatype *newtype) {
  int rc = make_type(me, fn, combiner, ni, ints, 0, NULL, 1, &base, newtype);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me);
  int err = skn_dt_commit(dt_any(me, *newtype));
  skn_rank_unlock(me);
  return err == SKN_OK ? MPI_SUCCESS : skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
}

/* ------------------------------------------------------------------ commit, free */

static int impl_Type_commit(skn_rank *me, const char *fn, MPI_Datatype *datatype) {
  skn_rank_lock(me);
  skn_dtype *t = dt_any(me, *datatype);
  int err = t ? skn_dt_commit(t) : SKN_OK;
  skn_rank_unlock(me);
  if (!t) return type_error(me, fn, "datatype", *datatype);
  if (err != SKN_OK) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory flattening the datatype");
  return MPI_SUCCESS;
}

static int impl_Type_free(skn_rank *me, const char *fn, MPI_Datatype *datatype) {
  int slot = dt_slot(*datatype);
  if (slot >= 1 && skn_api_dtype_any(me, *datatype)) { /* this rank's attributes go first */
    int rc = skn_type_attrs_free(me, *datatype);
    if (rc != MPI_SUCCESS)
      return skn_api_error(me, SKN_API_NOOBJ, skn_attr_errclass(rc), fn, "an attribute delete callback failed (%d)", rc);
  }
  skn_rank_lock(me);
  skn_dtype *t = slot >= 1 ? skn_dt_table_get(me, slot) : NULL;
  if (t && skn_dt_f90_base(t)) { /* MPI_Type_create_f90_*'s are predefined (MPI-3.1 17.1.9) */
    skn_rank_unlock(me);
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_TYPE, fn,
                         "datatype=%#x is predefined (MPI_Type_create_f90_*) and cannot be freed", (unsigned)*datatype);
  }
  if (t) {
    skn_dt_table_remove(me, slot);
    skn_dt_release(me, t); /* kept while a pending request uses it */
    skn_dt_collect(me);
  }
  skn_rank_unlock(me);
  if (!t) {
    if (dt_any(me, *datatype))
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_TYPE, fn, "datatype=%#x is predefined and cannot be freed",
                           (unsigned)*datatype);
    return type_error(me, fn, "datatype", *datatype);
  }
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ queries */

static int impl_Type_size(skn_rank *me, const char *fn, MPI_Datatype dt, const skn_dtype *t, int *size) {
  *size = t->size > INT_MAX ? MPI_UNDEFINED : (int)t->size;
  return MPI_SUCCESS;
}

static int impl_Type_size_x(skn_rank *me, const char *fn, MPI_Datatype dt, const skn_dtype *t, MPI_Count *size) {
  *size = (MPI_Count)t->size;
  return MPI_SUCCESS;
}

static int impl_Type_get_extent(skn_rank *me, const char *fn, MPI_Datatype dt, const skn_dtype *t, MPI_Aint *lb,
                                MPI_Aint *extent) {
  *lb = t->lb;
  *extent = t->extent;
  return MPI_SUCCESS;
}

static int impl_Type_get_extent_x(skn_rank *me, const char *fn, MPI_Datatype dt, const skn_dtype *t, MPI_Count *lb,
                                  MPI_Count *extent) {
  *lb = t->lb;
  *extent = t->extent;
  return MPI_SUCCESS;
}

static int impl_Type_get_true_extent(skn_rank *me, const char *fn, MPI_Datatype dt, const skn_dtype *t,
                                     MPI_Aint *true_lb, MPI_Aint *true_extent) {
  *true_lb = t->true_lb;
  *true_extent = t->true_extent;
  return MPI_SUCCESS;
}

static int impl_Type_get_true_extent_x(skn_rank *me, const char *fn, MPI_Datatype dt, const skn_dtype *t,
                                       MPI_Count *true_lb, MPI_Count *true_extent) {
  *true_lb = t->true_lb;
  *true_extent = t->true_extent;
  return MPI_SUCCESS;
}

static int impl_Type_get_envelope(skn_rank *me, const char *fn, MPI_Datatype dt, const skn_dtype *t, int *num_integers,
                                  int *num_addresses, int *num_datatypes, int *combiner) {
  int ni, na, nd;
  const int *ints;
  const ptrdiff_t *aints;
  skn_dtype *const *types;
  skn_dt_contents(t, &ni, &ints, &na, &aints, &nd, &types);
  *num_integers = ni;
  *num_addresses = na;
  *num_datatypes = nd;
  *combiner = t->combiner;
  return MPI_SUCCESS;
}

static int impl_Type_get_contents(skn_rank *me, const char *fn, MPI_Datatype dt, const skn_dtype *t, int max_integers,
                                  int max_addresses, int max_datatypes, int array_of_integers[],
                                  MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
  if (!(t->flags & SKN_DT_DERIVED))
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_TYPE, fn, "datatype=%#x is predefined (MPI_COMBINER_NAMED)",
                         (unsigned)dt);
  int ni, na, nd;
  const int *ints;
  const ptrdiff_t *aints;
  skn_dtype *const *types;
  skn_dt_contents(t, &ni, &ints, &na, &aints, &nd, &types);
  if (max_integers < ni || max_addresses < na || max_datatypes < nd)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn,
                         "arrays too small: need %d integers, %d addresses, %d datatypes", ni, na, nd);
  if (ni) memcpy(array_of_integers, ints, (size_t)ni * sizeof *ints);
  if (na) memcpy(array_of_addresses, aints, (size_t)na * sizeof *aints);
  skn_rank_lock(me);
  int i = 0;
  for (; i < nd; i++) {
    array_of_datatypes[i] = new_handle(me, types[i]);
    if (array_of_datatypes[i] == MPI_DATATYPE_NULL) break;
  }
  skn_rank_unlock(me);
  if (i < nd) {
    for (int k = 0; k < i; k++) PMPI_Type_free(&array_of_datatypes[k]);
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  }
  return MPI_SUCCESS;
}

static int impl_Type_match_size(skn_rank *me, const char *fn, int typeclass, int size, MPI_Datatype *datatype) {
  MPI_Datatype r = MPI_DATATYPE_NULL;
  switch (typeclass) {
  case MPI_TYPECLASS_INTEGER:
    r = size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2 : size == 4 ? MPI_INTEGER4
        : size == 8 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    break;
  case MPI_TYPECLASS_REAL:
    r = size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8 : size == (int)sizeof(long double) ? MPI_LONG_DOUBLE
        : MPI_DATATYPE_NULL;
    break;
  case MPI_TYPECLASS_COMPLEX:
    r = size == 8 ? MPI_COMPLEX : size == 16 ? MPI_DOUBLE_COMPLEX
        : size == (int)(2 * sizeof(long double)) ? MPI_C_LONG_DOUBLE_COMPLEX : MPI_DATATYPE_NULL;
    break;
  default:
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "typeclass=%d", typeclass);
  }
  if (r == MPI_DATATYPE_NULL)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "no type of class %d has %d bytes", typeclass, size);
  *datatype = r;
  return MPI_SUCCESS;
}

int PMPI_Get_address(const void *location, MPI_Aint *address) {
  *address = (MPI_Aint)(uintptr_t)location;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Get_address);

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp); }
SKN_WEAK_ALIAS(Aint_add);

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2); }
SKN_WEAK_ALIAS(Aint_diff);

/* ------------------------------------------------------------------ pack, unpack */

/* A committed type for pack/unpack; reports MPI_ERR_TYPE on comm otherwise. */
static const skn_dtype *committed(skn_rank *me, const char *fn, int comm, MPI_Datatype dt, int *rc) {
  const skn_dtype *t = skn_api_dtype(me, dt);
  *rc = MPI_SUCCESS;
  if (!t)
    *rc = dt_any(me, dt) ? skn_api_error(me, comm, MPI_ERR_TYPE, fn, "datatype=%#x is not committed", (unsigned)dt)
                         : skn_api_error(me, comm, MPI_ERR_TYPE, fn, "datatype=%#x is not a valid datatype",
                                         (unsigned)dt);
  return t;
}

static int impl_Pack(skn_rank *me, const char *fn, const void *inbuf, int incount, MPI_Datatype dt, void *outbuf,
                     int outsize, int *position, MPI_Comm comm, skn_comm_view *comm_v) {
  int rc;
  const skn_dtype *t = committed(me, fn, comm, dt, &rc);
  if (!t) return rc;
  if (*position < 0) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "position=%d", *position);
  size_t bytes = (size_t)incount * t->size;
  if ((size_t)*position + bytes > (size_t)outsize)
    return skn_api_error(me, comm, MPI_ERR_TRUNCATE, fn, "%zu bytes do not fit at position %d of %d bytes", bytes,
                         *position, outsize);
  if (bytes && !outbuf) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "outbuf=NULL");
  skn_dt_pack((char *)outbuf + *position, inbuf, t, bytes);
  *position += (int)bytes;
  return MPI_SUCCESS;
}

static int impl_Unpack(skn_rank *me, const char *fn, const void *inbuf, int insize, int *position, void *outbuf,
                       int outcount, MPI_Datatype dt, MPI_Comm comm, skn_comm_view *comm_v) {
  int rc;
  const skn_dtype *t = committed(me, fn, comm, dt, &rc);
  if (!t) return rc;
  if (*position < 0) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "position=%d", *position);
  size_t bytes = skn_dt_external_size(t, (size_t)outcount);
  if ((size_t)*position + bytes > (size_t)insize)
    return skn_api_error(me, comm, MPI_ERR_TRUNCATE, fn, "%zu bytes wanted at position %d of %d bytes", bytes,
                         *position, insize);
  if (bytes && !inbuf) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "inbuf=NULL");
  skn_dt_unpack(outbuf, t, (const char *)inbuf + *position, bytes);
  *position += (int)bytes;
  return MPI_SUCCESS;
}

static int impl_Pack_size(skn_rank *me, const char *fn, int incount, MPI_Datatype dt, const skn_dtype *t, MPI_Comm comm,
                          skn_comm_view *comm_v, int *size) {
  unsigned long long bytes = (unsigned long long)incount * t->size;
  if (bytes > INT_MAX)
    return skn_api_error(me, comm, MPI_ERR_ARG, fn, "%llu bytes do not fit in an int", bytes);
  *size = (int)bytes;
  return MPI_SUCCESS;
}

static bool is_external32(const char *datarep) { return datarep && strcmp(datarep, "external32") == 0; }

static int impl_Pack_external(skn_rank *me, const char *fn, const char datarep[], const void *inbuf, int incount,
                              MPI_Datatype dt, void *outbuf, MPI_Aint outsize, MPI_Aint *position) {
  if (!is_external32(datarep))
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "datarep=\"%s\" (only \"external32\")", datarep ? datarep : "");
  int rc;
  const skn_dtype *t = committed(me, fn, SKN_API_NOOBJ, dt, &rc);
  if (!t) return rc;
  if (*position < 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "position=%td", *position);
  size_t bytes = skn_dt_external_size(t, (size_t)incount);
  if ((size_t)*position + bytes > (size_t)outsize)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_TRUNCATE, fn, "%zu bytes do not fit at position %td of %td bytes",
                         bytes, *position, outsize);
  if (bytes && !outbuf) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "outbuf=NULL");
  if (skn_dt_pack_external((char *)outbuf + *position, inbuf, (size_t)incount, t) != SKN_OK)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_TYPE, fn, "the datatype's signature is too long for external32");
  *position += (MPI_Aint)bytes;
  return MPI_SUCCESS;
}

static int impl_Unpack_external(skn_rank *me, const char *fn, const char datarep[], const void *inbuf, MPI_Aint insize,
                                MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype dt) {
  if (!is_external32(datarep))
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "datarep=\"%s\" (only \"external32\")", datarep ? datarep : "");
  int rc;
  const skn_dtype *t = committed(me, fn, SKN_API_NOOBJ, dt, &rc);
  if (!t) return rc;
  if (*position < 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "position=%td", *position);
  size_t bytes = skn_dt_external_size(t, (size_t)outcount);
  if ((size_t)*position + bytes > (size_t)insize)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_TRUNCATE, fn, "%zu bytes wanted at position %td of %td bytes", bytes,
                         *position, insize);
  if (bytes && !inbuf) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "inbuf=NULL");
  if (skn_dt_unpack_external(outbuf, (size_t)outcount, t, (const char *)inbuf + *position) != SKN_OK)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_TYPE, fn, "the datatype's signature is too long for external32");
  *position += (MPI_Aint)bytes;
  return MPI_SUCCESS;
}

static int impl_Pack_external_size(skn_rank *me, const char *fn, const char datarep[], int incount, MPI_Datatype dt,
                                   const skn_dtype *t, MPI_Aint *size) {
  if (!is_external32(datarep))
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "datarep=\"%s\" (only \"external32\")", datarep ? datarep : "");
  *size = (MPI_Aint)skn_dt_external_size(t, (size_t)incount);
  return MPI_SUCCESS;
}

#include "entries_datatype.h"
