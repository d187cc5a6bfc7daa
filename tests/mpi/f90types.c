/* f90types.c - MPI_Type_create_f90_integer/real/complex and MPI_Type_match_size from C:
 * the datatype that fits each precision and range (also one that the next smaller kind
 * would miss by one digit), errors for ranges no kind holds, the types used in a
 * reduction, and MPI_Pcontrol with and without variadic arguments. The F90 types are their
 * own (MPI-3.1 17.1.9, issue 33): combiner MPI_COMBINER_F90_*, one per (p, r), returned
 * again for the same (p, r), and predefined (MPI_Type_free refuses them). */
#define TEST_NAME "f90types"
#include "mpitest.h"

/* got: an F90 type of the layout of want (size, extent) */
static void expect_type(MPI_Datatype got, MPI_Datatype want, int size, const char *what) {
  int s = -1, ni, na, nd, comb;
  MPI_Aint lb, ext, wlb, wext;
  MPI_CHECK(MPI_Type_size(got, &s));
  MPI_CHECK(MPI_Type_get_extent(got, &lb, &ext));
  MPI_CHECK(MPI_Type_get_extent(want, &wlb, &wext));
  MPI_CHECK(MPI_Type_get_envelope(got, &ni, &na, &nd, &comb));
  CHECK(got != want && s == size && ext == wext && lb == wlb, "%s: wrong datatype (size %d, expected %d)", what, s,
        size);
  CHECK(comb == MPI_COMBINER_F90_INTEGER || comb == MPI_COMBINER_F90_REAL || comb == MPI_COMBINER_F90_COMPLEX,
        "%s: combiner %d", what, comb);
  CHECK(na == 0 && nd == 0 && ni == (comb == MPI_COMBINER_F90_INTEGER ? 1 : 2), "%s: envelope %d %d %d", what, ni, na,
        nd);
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
  CHECK(t == MPI_INTEGER8, "match_size(INTEGER, 8)");
  MPI_CHECK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t));
  CHECK(t == MPI_DOUBLE_COMPLEX, "match_size(COMPLEX, 16)");

  /* one type per (p, r), the same one again; contents (p, r); predefined */
  MPI_Datatype r8, r9, r8again;
  MPI_CHECK(MPI_Type_create_f90_real(MPI_UNDEFINED, 8, &r8));
  MPI_CHECK(MPI_Type_create_f90_real(MPI_UNDEFINED, 9, &r9));
  MPI_CHECK(MPI_Type_create_f90_real(MPI_UNDEFINED, 8, &r8again));
  CHECK(r8 != r9 && r8 == r8again, "f90_real(-, 8), (-, 9): %#x %#x %#x", (unsigned)r8, (unsigned)r9,
        (unsigned)r8again);
  int pr[2] = {0, 0};
  MPI_Aint noaddr[1];
  MPI_Datatype notype[1];
  MPI_CHECK(MPI_Type_get_contents(r9, 2, 0, 0, pr, noaddr, notype));
  CHECK(pr[0] == MPI_UNDEFINED && pr[1] == 9, "f90_real(-, 9) contents %d %d", pr[0], pr[1]);

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
  MPI_Datatype keep = r8;
  rc = MPI_Type_free(&r8);
  MPI_CHECK(MPI_Error_class(rc, &cls));
  CHECK(cls == MPI_ERR_TYPE && r8 == keep, "MPI_Type_free of an f90 type: class %d, expected MPI_ERR_TYPE", cls);

  /* the returned types work in communication */
  long long v = rank + 1;
  MPI_CHECK(MPI_Type_create_f90_integer(15, &t));
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, t, MPI_SUM, MPI_COMM_WORLD));
  CHECK(v == (long long)nranks * (nranks + 1) / 2, "allreduce over f90_integer(15): %lld", v);

  MPI_CHECK(MPI_Pcontrol(0));
  MPI_CHECK(MPI_Pcontrol(2, "phase", 3));
  return mt_finish();
}
