/* f90types.c - MPI_Type_create_f90_integer/real/complex and MPI_Type_match_size from C:
 * the datatype that fits each precision and range (also one that the next smaller kind
 * would miss by one digit), errors for ranges no kind holds, the types used in a
 * reduction, and MPI_Pcontrol with and without variadic arguments. */
#define TEST_NAME "f90types"
#include "mpitest.h"

static void expect_type(MPI_Datatype got, MPI_Datatype want, int size, const char *what) {
  int s = -1;
  MPI_CHECK(MPI_Type_size(got, &s));
  CHECK(got == want && s == size, "%s: wrong datatype (size %d, expected %d)", what, s, size);
}

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, nranks, cls;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
  MPI_Datatype t;

  MPI_CHECK(MPI_Type_create_f90_integer(2, &t));
  expect_type(t, MPI_INTEGER1, 1, "f90_integer(2)");
  MPI_CHECK(MPI_Type_create_f90_integer(3, &t));
  expect_type(t, MPI_INTEGER2, 2, "f90_integer(3)");
  MPI_CHECK(MPI_Type_create_f90_integer(9, &t));
  expect_type(t, MPI_INTEGER4, 4, "f90_integer(9)");
  MPI_CHECK(MPI_Type_create_f90_integer(10, &t));
  expect_type(t, MPI_INTEGER8, 8, "f90_integer(10)");
  MPI_CHECK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
  expect_type(t, MPI_REAL4, 4, "f90_real(6, -)");
  MPI_CHECK(MPI_Type_create_f90_real(6, 38, &t));
  expect_type(t, MPI_REAL8, 8, "f90_real(6, 38)");
  MPI_CHECK(MPI_Type_create_f90_real(MPI_UNDEFINED, 307, &t));
  expect_type(t, MPI_REAL8, 8, "f90_real(-, 307)");
  MPI_CHECK(MPI_Type_create_f90_real(16, MPI_UNDEFINED, &t));
  expect_type(t, MPI_LONG_DOUBLE, (int)sizeof(long double), "f90_real(16, -)");
  MPI_CHECK(MPI_Type_create_f90_complex(7, MPI_UNDEFINED, &t));
  expect_type(t, MPI_DOUBLE_COMPLEX, 16, "f90_complex(7, -)");
  MPI_CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t));
  expect_type(t, MPI_INTEGER8, 8, "match_size(INTEGER, 8)");

  /* gfortran's 16-byte kinds: INTEGER(16), REAL(16) (binary128) */
  MPI_CHECK(MPI_Type_create_f90_integer(19, &t));
  expect_type(t, MPI_INTEGER16, 16, "f90_integer(19)");
  MPI_CHECK(MPI_Type_create_f90_real(33, MPI_UNDEFINED, &t));
  expect_type(t, MPI_REAL16, 16, "f90_real(33, -)");
  MPI_CHECK(MPI_Type_create_f90_complex(20, MPI_UNDEFINED, &t));
  expect_type(t, MPI_COMPLEX32, 32, "f90_complex(20, -)");

  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)); /* errors of no object (MPI-4.0) */
  int rc = MPI_Type_create_f90_integer(39, &t);
  MPI_CHECK(MPI_Error_class(rc, &cls));
  CHECK(cls == MPI_ERR_ARG, "f90_integer(39): class %d, expected MPI_ERR_ARG", cls);
  rc = MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t);
  MPI_CHECK(MPI_Error_class(rc, &cls));
  CHECK(cls == MPI_ERR_ARG, "f90_real(40, -): class %d, expected MPI_ERR_ARG", cls);
  rc = MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t);
  MPI_CHECK(MPI_Error_class(rc, &cls));
  CHECK(cls == MPI_ERR_ARG, "f90_real(-, -): class %d, expected MPI_ERR_ARG", cls);
  rc = MPI_Type_create_f90_complex(-5, 10, &t);
  MPI_CHECK(MPI_Error_class(rc, &cls));
  CHECK(cls == MPI_ERR_ARG, "f90_complex(-5, 10): class %d, expected MPI_ERR_ARG", cls);

  /* the returned types work in communication */
  long long v = rank + 1;
  MPI_CHECK(MPI_Type_create_f90_integer(15, &t));
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, t, MPI_SUM, MPI_COMM_WORLD));
  CHECK(v == (long long)nranks * (nranks + 1) / 2, "allreduce over f90_integer(15): %lld", v);

  MPI_CHECK(MPI_Pcontrol(0));
  MPI_CHECK(MPI_Pcontrol(2, "phase", 3));
  return mt_finish();
}
