/* The tools interface, control variables: MPI_T_init_thread before MPI_Init, the number of
 * control variables and their names, descriptions, types and scope; the index of
 * SKEIN_EAGER_LIMIT and its value (65536 by default, else what SKEIN_EAGER_LIMIT says when
 * it is a plain number); writing is refused; the "skein" category lists every variable;
 * no performance variables; calls after the last MPI_T_finalize fail. */
#define TEST_NAME "mpit"
#include "mpitest.h"

int main(int argc, char **argv) {
  int provided = -1, n = -1;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) FAIL("MPI_T_init_thread before MPI_Init");
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_CHECK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided)); /* nested */
  MPI_CHECK(MPI_T_cvar_get_num(&n));
  CHECK(n >= 7, "MPI_T_cvar_get_num: %d", n);
  for (int i = 0; i < n; i++) {
    char name[64], desc[256];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum et;
    MPI_CHECK(MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &et, desc, &dl, &bind, &scope));
    CHECK(!strncmp(name, "SKEIN_", 6) && nl == (int)strlen(name) + 1 && dl > 1, "cvar %d: %s (%d) %s", i, name, nl,
          desc);
    CHECK(bind == MPI_T_BIND_NO_OBJECT && scope == MPI_T_SCOPE_READONLY && (dt == MPI_INT || dt == MPI_UNSIGNED_LONG_LONG),
          "cvar %s: bind %d scope %d", name, bind, scope);
  }
  int idx = -1, count = -1;
  MPI_CHECK(MPI_T_cvar_get_index("SKEIN_EAGER_LIMIT", &idx));
  MPI_T_cvar_handle h;
  MPI_CHECK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
  CHECK(count == 1, "count %d", count);
  unsigned long long v = 0, want = 65536;
  const char *env = getenv("SKEIN_EAGER_LIMIT");
  if (env && env[0] && strspn(env, "0123456789") == strlen(env)) want = strtoull(env, NULL, 10);
  MPI_CHECK(MPI_T_cvar_read(h, &v));
  CHECK(!env || want != 65536 || v == want, "SKEIN_EAGER_LIMIT read %llu", v);
  if (!env) CHECK(v == want, "SKEIN_EAGER_LIMIT: %llu, expected %llu", v, want);
  CHECK(MPI_T_cvar_write(h, &v) == MPI_T_ERR_CVAR_SET_NEVER, "cvar_write accepted");
  MPI_CHECK(MPI_T_cvar_handle_free(&h));
  CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not reset");
  CHECK(MPI_T_cvar_get_index("NO_SUCH", &idx) == MPI_T_ERR_INVALID_NAME, "unknown name accepted");
  int ncat = -1, ncv = -1, npv = -1, nsub = -1;
  MPI_CHECK(MPI_T_category_get_num(&ncat));
  CHECK(ncat == 1, "categories: %d", ncat);
  char cname[32];
  int cl = sizeof cname;
  MPI_CHECK(MPI_T_category_get_info(0, cname, &cl, NULL, NULL, &ncv, &npv, &nsub));
  CHECK(!strcmp(cname, "skein") && ncv == n && npv == 0 && nsub == 0, "category %s: %d %d %d", cname, ncv, npv, nsub);
  int *ids = mt_malloc(sizeof(int) * (size_t)n);
  MPI_CHECK(MPI_T_category_get_cvars(0, n, ids));
  for (int i = 0; i < n; i++) CHECK(ids[i] == i, "category cvar %d: %d", i, ids[i]);
  free(ids);
  MPI_CHECK(MPI_T_pvar_get_num(&n));
  CHECK(n == 0, "pvars: %d", n);
  MPI_CHECK(MPI_T_finalize());
  MPI_Finalize();
  MPI_CHECK(MPI_T_finalize());
  CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "MPI_T usable after the last MPI_T_finalize");
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
