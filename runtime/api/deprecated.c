/* The MPI-1 calls that MPI-3.0 removed and MPICH still provides (legacy codes call them):
 * thin wrappers over their MPI-2 replacements. MPI_LB and MPI_UB are markers understood by
 * MPI_Type_struct only: they set the new type's bounds, as in MPI-1 (through
 * MPI_Type_create_resized); anywhere else they are invalid datatypes. mpi.h hides these
 * declarations when SKEIN_MPI_STRICT is defined. The MPI-1 attribute calls (Keyval_create,
 * Attr_put...) are in attr.c. */
#include <stdlib.h>

#include "objects.h"

/* The impl_ functions are called by the entry points generated from
 * runtime/binding/functions.txt (entries_deprecated.h, included at the end), which
 * checked what the description says; the replacement checks the rest. */

static int impl_Address(skn_rank *me, const char *fn, void *location, MPI_Aint *address) {
  return PMPI_Get_address(location, address);
}

static int impl_Type_extent(skn_rank *me, const char *fn, MPI_Datatype dt, const skn_dtype *t, MPI_Aint *extent) {
  MPI_Aint lb;
  return PMPI_Type_get_extent(dt, &lb, extent);
}

static int impl_Type_lb(skn_rank *me, const char *fn, MPI_Datatype dt, const skn_dtype *t, MPI_Aint *displacement) {
  MPI_Aint extent;
  return PMPI_Type_get_extent(dt, displacement, &extent);
}

static int impl_Type_ub(skn_rank *me, const char *fn, MPI_Datatype dt, const skn_dtype *t, MPI_Aint *displacement) {
  MPI_Aint lb, extent;
  int rc = PMPI_Type_get_extent(dt, &lb, &extent);
  if (rc == MPI_SUCCESS) *displacement = lb + extent;
  return rc;
}

static int impl_Type_hvector(skn_rank *me, const char *fn, int count, int blocklength, MPI_Aint stride,
                             MPI_Datatype oldtype, MPI_Datatype *newtype) {
  return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

static int impl_Type_hindexed(skn_rank *me, const char *fn, int count, int blocklengths[], MPI_Aint displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype) {
  return PMPI_Type_create_hindexed(count, blocklengths, displacements, oldtype, newtype);
}

static int impl_Type_struct(skn_rank *me, const char *fn, int count, int blocklengths[], MPI_Aint displacements[],
                            MPI_Datatype types[], MPI_Datatype *newtype) {
  int markers = 0;
  for (int i = 0; i < count; i++) markers += types[i] == MPI_LB || types[i] == MPI_UB;
  if (markers == 0) return PMPI_Type_create_struct(count, blocklengths, displacements, types, newtype);
  /* the type without the markers, then its bounds moved to the markers' */
  int n = count - markers;
  int *bl = malloc(sizeof(int) * (size_t)(n + 1));
  MPI_Aint *disp = malloc(sizeof(MPI_Aint) * (size_t)(n + 1));
  MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)(n + 1));
  if (!bl || !disp || !ty) {
    free(bl), free(disp), free(ty);
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  }
  bool has_lb = false, has_ub = false;
  MPI_Aint lb = 0, ub = 0;
  for (int i = 0, j = 0; i < count; i++) {
    if (types[i] == MPI_LB) {
      if (!has_lb || displacements[i] < lb) lb = displacements[i];
      has_lb = true;
    } else if (types[i] == MPI_UB) {
      if (!has_ub || displacements[i] > ub) ub = displacements[i];
      has_ub = true;
    } else {
      bl[j] = blocklengths[i], disp[j] = displacements[i], ty[j++] = types[i];
    }
  }
  MPI_Datatype inner;
  int rc = PMPI_Type_create_struct(n, bl, disp, ty, &inner);
  free(bl), free(disp), free(ty);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Aint ilb, iext;
  PMPI_Type_get_extent(inner, &ilb, &iext);
  if (!has_lb) lb = ilb;
  if (!has_ub) ub = ilb + iext;
  rc = PMPI_Type_create_resized(inner, lb, ub - lb, newtype);
  PMPI_Type_free(&inner);
  return rc;
}

static int impl_Errhandler_create(skn_rank *me, const char *fn, MPI_Handler_function *function,
                                  MPI_Errhandler *errhandler) {
  return PMPI_Comm_create_errhandler(function, errhandler);
}

static int impl_Errhandler_set(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v,
                               MPI_Errhandler errhandler, skn_errhandler *e) {
  return PMPI_Comm_set_errhandler(comm, errhandler);
}

static int impl_Errhandler_get(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v,
                               MPI_Errhandler *errhandler) {
  return PMPI_Comm_get_errhandler(comm, errhandler);
}

#include "entries_deprecated.h"
