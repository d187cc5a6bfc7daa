/* The datatypes of Fortran 90 parameterized types (MPI-3.1 17.1.9): MPI_Type_create_f90_*
 * (MPI_Type_match_size is in datatype.c). Each returns the predefined datatype of the
 * matching gfortran kind, so the handle needs no freeing; MPI_Type_get_envelope reports it as
 * MPI_COMBINER_NAMED, not MPI_COMBINER_F90_* (see docs/user-guide.md, "Fortran"). */
#include "api.h"

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

/* The entry points (functions.txt) check newtype; errors are associated with no object. */
static int f90_real(skn_rank *me, const char *fn, int p, int r, MPI_Datatype *newtype, int complex) {
  if (SKN_UNLIKELY(p == MPI_UNDEFINED && r == MPI_UNDEFINED) || (p < 0 && p != MPI_UNDEFINED) ||
      (r < 0 && r != MPI_UNDEFINED))
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "p=%d r=%d", p, r);
  for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
    if ((p == MPI_UNDEFINED || p <= reals[i].p) && (r == MPI_UNDEFINED || r <= reals[i].r)) {
      *newtype = complex ? reals[i].complex : reals[i].real;
      return MPI_SUCCESS;
    }
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
  if (r >= 0 && r <= 2) *newtype = MPI_INTEGER1;
  else if (r >= 0 && r <= 4) *newtype = MPI_INTEGER2;
  else if (r >= 0 && r <= 9) *newtype = MPI_INTEGER4;
  else if (r >= 0 && r <= 18) *newtype = MPI_INTEGER8;
  else if (r >= 0 && r <= 38) *newtype = MPI_INTEGER16;
  else return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "no INTEGER type with range %d", r);
  return MPI_SUCCESS;
}

#include "entries_f90types.h"
