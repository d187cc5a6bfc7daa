/* The datatypes of Fortran 90 parameterized types (MPI-3.1 17.1.9): MPI_Type_create_f90_*
 * (MPI_Type_match_size is in datatype.c). Each (combiner, p, r) gets its own type, a
 * duplicate of the predefined type of the matching gfortran kind whose combiner is
 * MPI_COMBINER_F90_* and whose contents are (p, r) or (r), created once per rank and then
 * returned again (the standard's caching, as MPICH does: r = 8 and r = 9 are two types of
 * one layout). They are predefined: MPI_Type_free refuses them, predefined operations apply
 * to them (datatype.c, coll.c, core's skn_dt_f90_base). */
#include <stdlib.h>

#include "api.h"

typedef struct skn_f90_type {
  int combiner, p, r;
  MPI_Datatype type;
} skn_f90_type;

/* gfortran's kinds on x86-64: precision and range of REAL(4), REAL(8), REAL(10) (the x87
 * extended type, C's long double) and REAL(16) (IEEE binary128, software quad). */
static const struct {
  int p, r;
  MPI_Datatype real, complex;
} reals[] = {
    {6, 37, MPI_REAL4, MPI_COMPLEX},
    {15, 307, MPI_REAL8, MPI_DOUBLE_COMPLEX},
    {18, 4931, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX},
    {33, 4931, MPI_REAL16, MPI_COMPLEX32},
};

/* The rank's type of (combiner, p, r), made from base the first time. */
static int cached(skn_rank *me, const char *fn, int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *newtype) {
  skn_api_rank *api = skn_api_of(me);
  skn_rank_lock(me);
  for (int i = 0; i < api->nf90; i++)
    if (api->f90[i].combiner == combiner && api->f90[i].p == p && api->f90[i].r == r) {
      *newtype = api->f90[i].type;
      skn_rank_unlock(me);
      return MPI_SUCCESS;
    }
  skn_rank_unlock(me);
  int ints[2] = {p, r};
  bool integer = combiner == MPI_COMBINER_F90_INTEGER;
  MPI_Datatype t;
  int rc = skn_api_type_f90(me, fn, combiner, integer ? 1 : 2, integer ? &ints[1] : ints, base, &t);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me);
  skn_f90_type *grown = realloc(api->f90, sizeof *grown * (size_t)(api->nf90 + 1));
  if (grown) {
    api->f90 = grown;
    api->f90[api->nf90++] = (skn_f90_type){combiner, p, r, t};
  }
  skn_rank_unlock(me);
  if (!grown) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  *newtype = t;
  return MPI_SUCCESS;
}

/* The entry points (functions.txt) check newtype; errors are associated with no object. */
static int f90_real(skn_rank *me, const char *fn, int p, int r, MPI_Datatype *newtype, int complex) {
  if (SKN_UNLIKELY(p == MPI_UNDEFINED && r == MPI_UNDEFINED) || (p < 0 && p != MPI_UNDEFINED) ||
      (r < 0 && r != MPI_UNDEFINED))
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "p=%d r=%d", p, r);
  for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
    if ((p == MPI_UNDEFINED || p <= reals[i].p) && (r == MPI_UNDEFINED || r <= reals[i].r))
      return cached(me, fn, complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p, r,
                    complex ? reals[i].complex : reals[i].real, newtype);
  }
  return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "no %s type with precision %d and range %d",
                       complex ? "COMPLEX" : "REAL", p, r);
}

static int impl_Type_create_f90_real(skn_rank *me, const char *fn, int p, int r, MPI_Datatype *newtype) {
  return f90_real(me, fn, p, r, newtype, 0);
}

static int impl_Type_create_f90_complex(skn_rank *me, const char *fn, int p, int r, MPI_Datatype *newtype) {
  return f90_real(me, fn, p, r, newtype, 1);
}

static int impl_Type_create_f90_integer(skn_rank *me, const char *fn, int r, MPI_Datatype *newtype) {
  /* INTEGER(k) holds every value of r decimal digits, -10^r < x < 10^r */
  MPI_Datatype base;
  if (r >= 0 && r <= 2) base = MPI_INTEGER1;
  else if (r >= 0 && r <= 4) base = MPI_INTEGER2;
  else if (r >= 0 && r <= 9) base = MPI_INTEGER4;
  else if (r >= 0 && r <= 18) base = MPI_INTEGER8;
  else if (r >= 0 && r <= 38) base = MPI_INTEGER16;
  else return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "no INTEGER type with range %d", r);
  return cached(me, fn, MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, base, newtype);
}

#include "entries_f90types.h"
