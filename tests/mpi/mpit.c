/* The tools interface. Control variables: MPI_T_init_thread before MPI_Init, the number of
 * control variables and their names, descriptions, types and scope; the index of
 * SKEIN_EAGER_LIMIT and its value (65536 by default, else what SKEIN_EAGER_LIMIT says when
 * it is a plain number); writing is refused; the "skein" category lists every variable;
 * SKEIN_BIND's enumeration. Performance variables: exact message and byte counts of a
 * known traffic pattern, counting only while started, stop/reset/readreset/write, the
 * unexpected queue's length and peak, the heap's bytes in use; errors of continuous
 * variables and bad handles. Bad arguments return their codes without calling an error
 * handler. Calls after the last MPI_T_finalize fail. */
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
  CHECK(ncat == 3, "categories: %d", ncat);
  char cname[32];
  int cl = sizeof cname;
  MPI_CHECK(MPI_T_category_get_info(0, cname, &cl, NULL, NULL, &ncv, &npv, &nsub));
  CHECK(!strcmp(cname, "skein") && ncv == n && npv == 0 && nsub == 0, "category %s: %d %d %d", cname, ncv, npv, nsub);
  int *ids = mt_malloc(sizeof(int) * (size_t)n);
  MPI_CHECK(MPI_T_category_get_cvars(0, n, ids));
  for (int i = 0; i < n; i++) CHECK(ids[i] == i, "category cvar %d: %d", i, ids[i]);
  free(ids);
  /* SKEIN_BIND names its values */
  MPI_CHECK(MPI_T_cvar_get_index("SKEIN_BIND", &idx));
  MPI_T_enum et;
  MPI_CHECK(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, NULL, &et, NULL, NULL, NULL, NULL));
  CHECK(et != MPI_T_ENUM_NULL, "SKEIN_BIND has no enumeration");
  int items = -1, val = -1;
  char ename[32];
  int el = sizeof ename;
  MPI_CHECK(MPI_T_enum_get_info(et, &items, ename, &el));
  CHECK(items == 2 && !strcmp(ename, "skein_bind"), "enumeration %s with %d items", ename, items);
  el = sizeof ename;
  MPI_CHECK(MPI_T_enum_get_item(et, 1, &val, ename, &el));
  CHECK(val == 1 && !strcmp(ename, "cores"), "item 1: %d %s", val, ename);
  CHECK(MPI_T_enum_get_item(et, 2, &val, ename, &el) == MPI_T_ERR_INVALID_ITEM, "item 2 accepted");

  /* performance variables */
  MPI_CHECK(MPI_T_pvar_get_num(&n));
  CHECK(n >= 7, "pvars: %d", n);
  const char *names[] = {"skein_sent_messages", "skein_sent_bytes", "skein_arrived_messages", "skein_unexpected_length",
                         "skein_unexpected_peak", "skein_heap_in_use"};
  const int classes[] = {MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_COUNTER,
                         MPI_T_PVAR_CLASS_LEVEL, MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_PVAR_CLASS_LEVEL};
  enum { SENT, BYTES, ARRIVED, ULEN, UPEAK, HEAP, NV };
  MPI_T_pvar_session ses;
  MPI_CHECK(MPI_T_pvar_session_create(&ses));
  MPI_T_pvar_handle ph[NV];
  for (int i = 0; i < NV; i++) {
    int pi = -1, cls = -1, cont = -1, ro = -1, cnt = -1;
    MPI_CHECK(MPI_T_pvar_get_index(names[i], classes[i], &pi));
    MPI_CHECK(MPI_T_pvar_get_info(pi, NULL, NULL, NULL, &cls, NULL, NULL, NULL, NULL, NULL, &ro, &cont, NULL));
    CHECK(cls == classes[i] && cont == (cls != MPI_T_PVAR_CLASS_COUNTER) && ro == cont, "%s: class %d continuous %d",
          names[i], cls, cont);
    MPI_CHECK(MPI_T_pvar_handle_alloc(ses, pi, NULL, &ph[i], &cnt));
    CHECK(cnt == 1, "%s: count %d", names[i], cnt);
  }
  CHECK(MPI_T_pvar_get_index("skein_sent_messages", MPI_T_PVAR_CLASS_LEVEL, &idx) == MPI_T_ERR_INVALID_NAME,
        "a name found under the wrong class");
  unsigned long long c[3];
  unsigned u = 99;
  MPI_CHECK(MPI_T_pvar_read(ses, ph[SENT], &c[0]));
  CHECK(c[0] == 0, "a counter never started reads %llu", c[0]);
  MPI_CHECK(MPI_T_pvar_read(ses, ph[ULEN], &u));
  CHECK(u == 0, "unexpected queue holds %u messages before any send", u);

  CHECK(MPI_T_pvar_start(ses, ph[ULEN]) == MPI_T_ERR_PVAR_NO_STARTSTOP, "a level was started");
  CHECK(MPI_T_pvar_reset(ses, ph[ULEN]) == MPI_T_ERR_PVAR_NO_WRITE, "a level was reset");
  /* 5 messages of 8 bytes to myself, left unreceived; 10 of 100 bytes to the right, whose
   * receives are posted before anyone sends (so only mine are unexpected). The counters
   * start before the barrier, which sends no point-to-point message within a process. */
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long long self[5] = {1, 2, 3, 4, 5};
  char out[10][100], in[10][100];
  MPI_Request rq[20];
  for (int i = 0; i < 10; i++) MPI_CHECK(MPI_Irecv(in[i], 100, MPI_CHAR, left, 78, MPI_COMM_WORLD, &rq[5 + i]));
  for (int i = SENT; i <= ARRIVED; i++) MPI_CHECK(MPI_T_pvar_start(ses, ph[i]));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  for (int i = 0; i < 5; i++) MPI_CHECK(MPI_Isend(&self[i], 1, MPI_LONG_LONG, rank, 77, MPI_COMM_WORLD, &rq[i]));
  MPI_CHECK(MPI_T_pvar_read(ses, ph[ULEN], &u));
  CHECK(u == 5, "unexpected queue: %u messages, expected 5", u);
  for (int i = 0; i < 10; i++) memset(out[i], i, sizeof out[i]);
  for (int i = 0; i < 5; i++) MPI_CHECK(MPI_Isend(out[i], 100, MPI_CHAR, right, 78, MPI_COMM_WORLD, &rq[15 + i]));
  MPI_CHECK(MPI_Waitall(5, rq + 15, MPI_STATUSES_IGNORE));
  MPI_CHECK(MPI_T_pvar_stop(ses, ph[SENT])); /* the next 5 sends are not counted by this handle */
  for (int i = 5; i < 10; i++) MPI_CHECK(MPI_Isend(out[i], 100, MPI_CHAR, right, 78, MPI_COMM_WORLD, &rq[10 + i]));
  MPI_CHECK(MPI_Waitall(15, rq + 5, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 5; i++) {
    long long got = 0;
    MPI_CHECK(MPI_Recv(&got, 1, MPI_LONG_LONG, rank, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == i + 1, "self message %d: %lld", i, got);
  }
  MPI_CHECK(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
  MPI_CHECK(MPI_T_pvar_read(ses, ph[SENT], &c[0]));
  MPI_CHECK(MPI_T_pvar_read(ses, ph[BYTES], &c[1]));
  MPI_CHECK(MPI_T_pvar_read(ses, ph[ARRIVED], &c[2]));
  CHECK(c[0] == 10, "sent messages while started: %llu, expected 10", c[0]);
  CHECK(c[1] == 5 * 8 + 10 * 100, "sent bytes: %llu, expected 1040", c[1]);
  CHECK(c[2] == 15, "arrived messages: %llu, expected 15", c[2]);
  MPI_CHECK(MPI_T_pvar_read(ses, ph[ULEN], &u));
  CHECK(u == 0, "unexpected queue: %u messages after receiving all", u);
  MPI_CHECK(MPI_T_pvar_read(ses, ph[UPEAK], &u));
  CHECK(u >= 5, "unexpected queue peak %u, at least 5 expected", u);
  MPI_CHECK(MPI_T_pvar_readreset(ses, ph[BYTES], &c[1]));
  MPI_CHECK(MPI_T_pvar_read(ses, ph[BYTES], &c[1]));
  CHECK(c[1] == 0, "sent bytes after readreset: %llu", c[1]);
  unsigned long long seven = 7;
  MPI_CHECK(MPI_T_pvar_write(ses, ph[ARRIVED], &seven));
  MPI_CHECK(MPI_T_pvar_read(ses, ph[ARRIVED], &c[2]));
  CHECK(c[2] == 7, "arrived messages after writing 7: %llu", c[2]);
  CHECK(MPI_T_pvar_write(ses, ph[UPEAK], &seven) == MPI_T_ERR_PVAR_NO_WRITE, "a high-water mark was written");
  MPI_CHECK(MPI_T_pvar_stop(ses, MPI_T_PVAR_ALL_HANDLES));
  /* the heap: a block of 4 MiB shows in the bytes in use (when the rank has its own heap) */
  unsigned long long h0 = 0, h1 = 0;
  MPI_CHECK(MPI_T_pvar_read(ses, ph[HEAP], &h0));
  char *block = mt_malloc(4 << 20);
  memset(block, 1, 4 << 20);
  MPI_CHECK(MPI_T_pvar_read(ses, ph[HEAP], &h1));
  CHECK(h0 == 0 || h1 >= h0 + (4 << 20), "heap in use: %llu then %llu after 4 MiB", h0, h1);
  free(block);
  MPI_T_pvar_handle gone = ph[SENT];
  MPI_CHECK(MPI_T_pvar_handle_free(ses, &ph[SENT]));
  CHECK(ph[SENT] == MPI_T_PVAR_HANDLE_NULL, "pvar handle not reset");
  CHECK(MPI_T_pvar_read(ses, gone, &c[0]) == MPI_T_ERR_INVALID_HANDLE, "a freed handle was read");
  MPI_CHECK(MPI_T_pvar_session_free(&ses));
  CHECK(ses == MPI_T_PVAR_SESSION_NULL, "session not reset");
  /* the categories hold the variables */
  int pidx[8], np = -1;
  MPI_CHECK(MPI_T_category_get_index("skein_p2p", &idx));
  MPI_CHECK(MPI_T_category_get_info(idx, NULL, NULL, NULL, NULL, NULL, &np, NULL));
  CHECK(np == 5, "skein_p2p holds %d variables", np);
  MPI_CHECK(MPI_T_category_get_pvars(idx, 8, pidx));
  MPI_CHECK(MPI_T_pvar_get_index("skein_unexpected_length", MPI_T_PVAR_CLASS_LEVEL, &n));
  CHECK(pidx[3] == n, "skein_p2p's fourth variable: %d, expected %d", pidx[3], n);
  /* Bad arguments return their code and call no error handler: MPI_COMM_SELF's and
   * MPI_COMM_WORLD's are MPI_ERRORS_ARE_FATAL here, which would end the job. */
  MPI_T_cvar_handle no_cvar = NULL;
  MPI_T_pvar_session no_session = NULL;
  CHECK(MPI_T_cvar_get_num(NULL) == MPI_ERR_ARG, "cvar_get_num(NULL)");
  CHECK(MPI_T_cvar_get_index(NULL, &idx) == MPI_ERR_ARG, "cvar_get_index(NULL name)");
  CHECK(MPI_T_cvar_handle_alloc(0, NULL, NULL, &count) == MPI_ERR_ARG, "cvar_handle_alloc(NULL handle)");
  CHECK(MPI_T_cvar_handle_free(NULL) == MPI_T_ERR_INVALID_HANDLE, "cvar_handle_free(NULL)");
  CHECK(MPI_T_cvar_handle_free(&no_cvar) == MPI_T_ERR_INVALID_HANDLE, "cvar_handle_free(&NULL handle)");
  CHECK(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_T_ERR_INVALID_INDEX,
        "cvar_get_info(-1)");
  CHECK(MPI_T_pvar_session_free(NULL) == MPI_T_ERR_INVALID_SESSION, "pvar_session_free(NULL)");
  CHECK(MPI_T_pvar_session_free(&no_session) == MPI_T_ERR_INVALID_SESSION, "pvar_session_free(&NULL session)");
  CHECK(MPI_T_category_get_cvars(0, 1, NULL) == MPI_ERR_ARG, "category_get_cvars(len 1, NULL)");
  CHECK(MPI_T_category_get_pvars(0, -1, pidx) == MPI_ERR_ARG, "category_get_pvars(len -1)");
  CHECK(MPI_T_category_changed(NULL) == MPI_ERR_ARG, "category_changed(NULL)");
  MPI_CHECK(MPI_T_finalize());
  MPI_Finalize();
  MPI_CHECK(MPI_T_finalize());
  CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "MPI_T usable after the last MPI_T_finalize");
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
