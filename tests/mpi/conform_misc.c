/* The smaller missing calls: MPI_Status_set_elements_x (and the other _x queries),
 * Comm_set_info/Comm_get_info (kept per communicator, copied by Comm_dup, replaced by
 * Comm_dup_with_info), Comm_idup_with_info, MPI-4.0 Info_get_string, MPI_INFO_ENV and its
 * keys (read-only), and the MPI-1 calls MPI-3.0 removed: Address, Type_extent/lb/ub,
 * Type_hvector/hindexed/struct (with MPI_LB/MPI_UB markers), Errhandler_create/set/get. */
#define TEST_NAME "conform_misc"
#include "mpitest.h"

static void expect_kv(MPI_Info info, const char *key, const char *want) {
  char v[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
  if (!want) {
    CHECK(!flag, "key %s is set (to %s)", key, v);
    return;
  }
  CHECK(flag && !strcmp(v, want), "key %s: expected %s got %s", key, want, flag ? v : "(unset)");
}

static void on_err(MPI_Comm *c, int *code, ...) { (void)c, (void)code; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* ---- _x functions */
  MPI_Status st;
  MPI_Count n = -1, lb = -1, ext = -1;
  MPI_CHECK(MPI_Status_set_elements_x(&st, MPI_DOUBLE, (MPI_Count)3));
  MPI_CHECK(MPI_Get_elements_x(&st, MPI_DOUBLE, &n));
  CHECK(n == 3, "Get_elements_x after Status_set_elements_x: %lld", (long long)n);
  MPI_CHECK(MPI_Type_size_x(MPI_DOUBLE, &n));
  MPI_CHECK(MPI_Type_get_extent_x(MPI_DOUBLE, &lb, &ext));
  CHECK(n == 8 && lb == 0 && ext == 8, "Type_size_x/get_extent_x of MPI_DOUBLE");
  MPI_CHECK(MPI_Type_get_true_extent_x(MPI_INT, &lb, &ext));
  CHECK(lb == 0 && ext == 4, "Type_get_true_extent_x of MPI_INT");

  /* ---- info on communicators */
  MPI_Info in, used;
  MPI_CHECK(MPI_Info_create(&in));
  MPI_CHECK(MPI_Info_set(in, "skein_hint", "yes"));
  MPI_Comm d1, d2, d3;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d1));
  MPI_CHECK(MPI_Comm_get_info(d1, &used));
  int nkeys = -1;
  MPI_CHECK(MPI_Info_get_nkeys(used, &nkeys));
  CHECK(nkeys == 0, "Comm_get_info of a fresh dup: %d keys", nkeys);
  MPI_CHECK(MPI_Info_free(&used));
  MPI_CHECK(MPI_Comm_set_info(d1, in));
  MPI_CHECK(MPI_Info_set(in, "skein_hint", "changed")); /* the communicator kept a copy */
  MPI_CHECK(MPI_Comm_get_info(d1, &used));
  expect_kv(used, "skein_hint", "yes");
  MPI_CHECK(MPI_Info_free(&used));
  MPI_CHECK(MPI_Comm_dup(d1, &d2));
  MPI_CHECK(MPI_Comm_get_info(d2, &used));
  expect_kv(used, "skein_hint", "yes");
  MPI_CHECK(MPI_Info_free(&used));
  MPI_CHECK(MPI_Comm_dup_with_info(d1, in, &d3));
  MPI_CHECK(MPI_Comm_get_info(d3, &used));
  expect_kv(used, "skein_hint", "changed");
  MPI_CHECK(MPI_Info_free(&used));
  MPI_Comm d4;
  MPI_Request r;
  MPI_CHECK(MPI_Comm_idup_with_info(d1, in, &d4, &r));
  MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  int csize = -1;
  MPI_CHECK(MPI_Comm_size(d4, &csize));
  CHECK(csize == size, "Comm_idup_with_info: size %d", csize);
  MPI_CHECK(MPI_Comm_free(&d4));
  MPI_CHECK(MPI_Comm_free(&d3));
  MPI_CHECK(MPI_Comm_free(&d2));
  MPI_CHECK(MPI_Comm_free(&d1));

  /* ---- Info_get_string */
  char buf[64];
  int len = 0, flag = -1;
  MPI_CHECK(MPI_Info_get_string(in, "skein_hint", &len, buf, &flag));
  CHECK(flag && len == 8, "Info_get_string length query: flag %d buflen %d (expected 8)", flag, len);
  len = 4;
  MPI_CHECK(MPI_Info_get_string(in, "skein_hint", &len, buf, &flag));
  CHECK(flag && len == 8 && !strcmp(buf, "cha"), "Info_get_string truncated: \"%s\" buflen %d", buf, len);
  len = sizeof buf;
  MPI_CHECK(MPI_Info_get_string(in, "none", &len, buf, &flag));
  CHECK(!flag, "Info_get_string of a missing key: flag %d", flag);
  MPI_CHECK(MPI_Info_free(&in));

  /* ---- MPI_INFO_ENV */
  char want[32];
  snprintf(want, sizeof want, "%d", size);
  expect_kv(MPI_INFO_ENV, "maxprocs", want);
  char v[MPI_MAX_INFO_VAL + 1];
  static const char *const keys[] = {"command", "host", "arch", "wdir", "thread_level"};
  for (int i = 0; i < 5; i++) {
    MPI_CHECK(MPI_Info_get(MPI_INFO_ENV, keys[i], MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && v[0], "MPI_INFO_ENV has no %s", keys[i]);
  }
  MPI_CHECK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, v, &flag));
  CHECK(strstr(v, "conform_misc") != NULL, "MPI_INFO_ENV command: %s", v);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* errors of no object (MPI-4.0) */
  CHECK(MPI_Info_set(MPI_INFO_ENV, "command", "x") != MPI_SUCCESS, "MPI_INFO_ENV is writable");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL); /* errors of no object (MPI-4.0) */

  /* ---- MPI-1 calls removed by MPI-3.0 */
  struct {
    int a;
    double b;
  } s[2];
  MPI_Aint base, ab, e = -1, l = -1, u = -1;
  MPI_CHECK(MPI_Address(&s[0], &base));
  MPI_CHECK(MPI_Address(&s[0].b, &ab));
  int bl[4] = {1, 1, 1, 1};
  MPI_Aint disp[4] = {-8, 0, ab - base, 64};
  MPI_Datatype types[4] = {MPI_LB, MPI_INT, MPI_DOUBLE, MPI_UB}, st1, hv, hi;
  MPI_CHECK(MPI_Type_struct(4, bl, disp, types, &st1));
  MPI_CHECK(MPI_Type_extent(st1, &e));
  MPI_CHECK(MPI_Type_lb(st1, &l));
  MPI_CHECK(MPI_Type_ub(st1, &u));
  CHECK(l == -8 && u == 64 && e == 72, "Type_struct with MPI_LB/MPI_UB: lb %td ub %td extent %td", l, u, e);
  MPI_CHECK(MPI_Type_struct(2, bl + 1, disp + 1, types + 1, &hv)); /* no markers */
  MPI_CHECK(MPI_Type_extent(hv, &e));
  CHECK(e == (MPI_Aint)sizeof s[0], "Type_struct without markers: extent %td", e);
  MPI_CHECK(MPI_Type_free(&hv));
  MPI_CHECK(MPI_Type_hvector(2, 1, 16, MPI_INT, &hv));
  MPI_CHECK(MPI_Type_extent(hv, &e));
  CHECK(e == 20, "Type_hvector extent %td", e);
  MPI_Aint hd[2] = {0, 12};
  int hbl[2] = {1, 2};
  MPI_CHECK(MPI_Type_hindexed(2, hbl, hd, MPI_INT, &hi));
  MPI_CHECK(MPI_Type_ub(hi, &u));
  CHECK(u == 20, "Type_hindexed ub %td", u);
  MPI_CHECK(MPI_Type_free(&st1));
  MPI_CHECK(MPI_Type_free(&hv));
  MPI_CHECK(MPI_Type_free(&hi));
  MPI_Errhandler eh, got;
  MPI_CHECK(MPI_Errhandler_create(on_err, &eh));
  MPI_CHECK(MPI_Errhandler_set(MPI_COMM_WORLD, eh));
  MPI_CHECK(MPI_Errhandler_get(MPI_COMM_WORLD, &got));
  CHECK(got == eh, "Errhandler_get");
  MPI_CHECK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MPI_CHECK(MPI_Errhandler_free(&eh));

  MPI_Finalize();
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
