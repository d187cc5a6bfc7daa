/* The optional 128-bit predefined types: MPI_REAL16 (IEEE binary128, C __float128, also
 * MPIX_C_FLOAT128), MPI_COMPLEX32 and MPI_INTEGER16. Point-to-point, reductions with values
 * a 64-bit type cannot hold, sizes and names, and external32 (big-endian binary128). */
#define TEST_NAME "types_quad"
#include "mpitest.h"

typedef _Complex float __attribute__((mode(TC))) complex128;

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));

  int sz;
  MPI_CHECK(MPI_Type_size(MPI_REAL16, &sz));
  if (sz != 16) FAIL("MPI_Type_size(MPI_REAL16) = %d", sz);
  MPI_CHECK(MPI_Type_size(MPI_COMPLEX32, &sz));
  if (sz != 32) FAIL("MPI_Type_size(MPI_COMPLEX32) = %d", sz);
  MPI_CHECK(MPI_Type_size(MPI_INTEGER16, &sz));
  if (sz != 16) FAIL("MPI_Type_size(MPI_INTEGER16) = %d", sz);
  if (MPIX_C_FLOAT128 != MPI_REAL16) FAIL("MPIX_C_FLOAT128 is not MPI_REAL16");
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  MPI_CHECK(MPI_Type_get_name(MPI_REAL16, name, &len));
  if (strcmp(name, "MPI_REAL16") != 0) FAIL("name of MPI_REAL16: %s", name);

  /* A value double cannot hold: 1 + 2^-100, sent around a ring. */
  __float128 tiny = 1.0Q / ((__float128)(1ULL << 50) * (__float128)(1ULL << 50));
  __float128 mine[3] = {1.0Q + tiny * rank, -rank * 3.5Q, tiny}, got[3];
  MPI_Status st;
  MPI_CHECK(MPI_Sendrecv(mine, 3, MPI_REAL16, (rank + 1) % size, 5, got, 3, MPI_REAL16, (rank + size - 1) % size, 5,
                         MPI_COMM_WORLD, &st));
  int left = (rank + size - 1) % size;
  if (got[0] != 1.0Q + tiny * left || got[1] != -left * 3.5Q || got[2] != tiny)
    FAIL("MPI_REAL16 ring: wrong values from rank %d", left);
  CHECK_STATUS(&st, MPI_REAL16, left, 5, 3, "MPI_REAL16 ring");

  /* Sum of 1 + rank * 2^-100: exact in binary128, lost in double. */
  __float128 x = 1.0Q + tiny * rank, sum = 0, mx = 0;
  MPI_CHECK(MPI_Allreduce(&x, &sum, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
  __float128 want = size + tiny * ((__float128)size * (size - 1) / 2);
  if (sum != want) FAIL("MPI_SUM on MPI_REAL16: not exact (%g)", (double)(sum - size));
  MPI_CHECK(MPI_Allreduce(&x, &mx, 1, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD));
  if (mx != 1.0Q + tiny * (size - 1)) FAIL("MPI_MAX on MPI_REAL16");

  /* 2^100 + rank: beyond 64 bits. */
  __int128 big = ((__int128)1 << 100) + rank, isum = 0, band = 0;
  MPI_CHECK(MPI_Allreduce(&big, &isum, 1, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD));
  __int128 iwant = ((__int128)size << 100) + (__int128)size * (size - 1) / 2;
  if (isum != iwant) FAIL("MPI_SUM on MPI_INTEGER16");
  MPI_CHECK(MPI_Allreduce(&big, &band, 1, MPI_INTEGER16, MPI_BAND, MPI_COMM_WORLD));
  if ((band >> 100) != 1) FAIL("MPI_BAND on MPI_INTEGER16");

  complex128 z = (1.0Q + tiny) + rank * 1.0iQ, zsum = 0;
  MPI_CHECK(MPI_Allreduce(&z, &zsum, 1, MPI_COMPLEX32, MPI_SUM, MPI_COMM_WORLD));
  if (__real__ zsum != size * (1.0Q + tiny) || __imag__ zsum != (__float128)size * (size - 1) / 2)
    FAIL("MPI_SUM on MPI_COMPLEX32");
  /* Logical ops are not defined on floating types. */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int rc = MPI_Allreduce(&x, &sum, 1, MPI_REAL16, MPI_BAND, MPI_COMM_WORLD), cls = -1;
  MPI_CHECK(MPI_Error_class(rc, &cls));
  if (cls != MPI_ERR_OP) FAIL("MPI_BAND on MPI_REAL16: class %d expected MPI_ERR_OP", cls);

  /* external32: binary128 big-endian; 1.0 is 3f ff 00 ... 00, -(2 - 2^-100) starts bf ff. */
  MPI_Aint esize = 0, pos = 0;
  MPI_CHECK(MPI_Pack_external_size("external32", 2, MPI_REAL16, &esize));
  if (esize != 32) FAIL("Pack_external_size of 2 MPI_REAL16 = %ld", (long)esize);
  __float128 two[2] = {1.0Q, -2.0Q + tiny}, back[2] = {0, 0};
  unsigned char ext[32];
  MPI_CHECK(MPI_Pack_external("external32", two, 2, MPI_REAL16, ext, sizeof ext, &pos));
  if (ext[0] != 0x3f || ext[1] != 0xff || ext[2] != 0 || ext[15] != 0 || ext[16] != 0xbf || ext[17] != 0xff)
    FAIL("external32 MPI_REAL16 bytes: %02x %02x %02x .. %02x %02x", ext[0], ext[1], ext[2], ext[15], ext[16]);
  pos = 0;
  MPI_CHECK(MPI_Unpack_external("external32", ext, sizeof ext, &pos, back, 2, MPI_REAL16));
  if (back[0] != two[0] || back[1] != two[1]) FAIL("external32 MPI_REAL16 round trip");
  return mt_finish();
}
