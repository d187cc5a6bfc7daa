/* Attribute caching and info objects: predefined attributes of MPI_COMM_WORLD; keyvals
 * with MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN and user callbacks run on Comm_dup,
 * Comm_idup, Comm_free, Comm_delete_attr and on replacing a value (counted in per-rank
 * state passed as extra_state, no globals); a failing copy callback makes Comm_dup fail;
 * a keyval freed while in use keeps working for its attributes; attributes are per rank;
 * the MPI-1 names; Info_create/set/get/get_valuelen/get_nkeys/get_nthkey/delete/dup/free;
 * error classes of bad arguments under MPI_ERRORS_RETURN. */
#define TEST_NAME "attr"
#include "mpitest.h"

static void expect_class(int rc, int cls, const char *what) {
  int got = -1;
  CHECK(rc != MPI_SUCCESS, "%s: succeeded (expected error class %d)", what, cls);
  MPI_CHECK(MPI_Error_class(rc, &got));
  CHECK(got == cls, "%s: error class (expected %d got %d)", what, cls, got);
}

/* Per-rank bookkeeping of the callbacks, reached through extra_state. */
typedef struct counts {
  int copies, deletes;
  void *last_deleted;
  int copy_flag;       /* what the copy callback answers in *flag */
  int copy_rc;         /* what it returns */
  MPI_Comm last_comm;  /* comm given to the last callback */
  int values[8];       /* copies point here: values[i] = 2 * original */
} counts;

static int copy_cb(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)keyval;
  counts *c = extra;
  c->copies++;
  c->last_comm = oldcomm;
  if (c->copy_rc != MPI_SUCCESS) return c->copy_rc;
  int slot = c->copies % 8;
  c->values[slot] = 2 * *(int *)in;
  *(void **)out = &c->values[slot];
  *flag = c->copy_flag;
  return MPI_SUCCESS;
}

static int delete_cb(MPI_Comm comm, int keyval, void *val, void *extra) {
  (void)keyval;
  counts *c = extra;
  c->deletes++;
  c->last_deleted = val;
  c->last_comm = comm;
  return MPI_SUCCESS;
}

static void *get(MPI_Comm comm, int keyval, int *flag) {
  void *v = NULL;
  MPI_CHECK(MPI_Comm_get_attr(comm, keyval, &v, flag));
  return v;
}

static void predefined(int rank, int size) {
  int flag = 0, *v;
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
  CHECK(flag && *v >= 32767, "MPI_TAG_UB: flag %d value %d (expected >= 32767)", flag, flag ? *v : 0);
  int tag_ub = *v, *v2 = NULL;
  MPI_CHECK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &v2, &flag)); /* MPI-1 name */
  CHECK(flag && *v2 == tag_ub, "MPI_Attr_get(MPI_TAG_UB) (expected %d got %d)", tag_ub, flag ? *v2 : 0);
  /* the largest tag works */
  int x = rank, y = -1;
  MPI_CHECK(MPI_Sendrecv(&x, 1, MPI_INT, rank, tag_ub, &y, 1, MPI_INT, rank, tag_ub, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
  CHECK(y == rank, "self message with tag MPI_TAG_UB (expected %d got %d)", rank, y);
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
  CHECK(flag && (*v == MPI_PROC_NULL || (*v >= 0 && *v < size)), "MPI_HOST: flag %d value %d", flag, flag ? *v : 0);
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
  CHECK(flag && (*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || (*v >= 0 && *v < size)), "MPI_IO: flag %d value %d",
        flag, flag ? *v : 0);
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
  CHECK(!flag || *v == 0 || *v == 1, "MPI_WTIME_IS_GLOBAL: value %d", *v);
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
  CHECK(!flag || *v >= size, "MPI_UNIVERSE_SIZE: value %d (world size %d)", *v, size);
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
  CHECK(!flag || *v >= 0, "MPI_APPNUM: value %d", *v);
}

static void info_tests(int rank) {
  MPI_Info info, dup;
  int flag = -1, n = -1, len = -1;
  char value[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
  MPI_CHECK(MPI_Info_create(&info));
  CHECK(info != MPI_INFO_NULL, "Info_create gave MPI_INFO_NULL");
  MPI_CHECK(MPI_Info_get_nkeys(info, &n));
  CHECK(n == 0, "new info: nkeys (expected 0 got %d)", n);
  char mine[32];
  snprintf(mine, sizeof mine, "rank-%d", rank);
  const char *keys[3] = {"alpha", "beta", "gamma"};
  const char *vals[3] = {"1", "two", mine};
  for (int i = 0; i < 3; i++) MPI_CHECK(MPI_Info_set(info, keys[i], vals[i]));
  MPI_CHECK(MPI_Info_set(info, "beta", "second")); /* replaces */
  vals[1] = "second";
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every rank has set its own values meanwhile */
  MPI_CHECK(MPI_Info_get_nkeys(info, &n));
  CHECK(n == 3, "nkeys (expected 3 got %d)", n);
  int seen[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) {
    MPI_CHECK(MPI_Info_get_nthkey(info, i, key));
    int k = -1;
    for (int j = 0; j < 3; j++)
      if (!strcmp(key, keys[j])) k = j;
    CHECK(k >= 0 && !seen[k], "nthkey(%d) = '%s' unknown or repeated", i, key);
    seen[k] = 1;
  }
  for (int i = 0; i < 3; i++) {
    MPI_CHECK(MPI_Info_get(info, keys[i], MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && !strcmp(value, vals[i]), "Info_get(%s) (expected '%s' got flag %d '%s')", keys[i], vals[i], flag,
          flag ? value : "");
    MPI_CHECK(MPI_Info_get_valuelen(info, keys[i], &len, &flag));
    CHECK(flag && len == (int)strlen(vals[i]), "Info_get_valuelen(%s) (expected %d got %d)", keys[i],
          (int)strlen(vals[i]), len);
  }
  MPI_CHECK(MPI_Info_get(info, "delta", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(!flag, "Info_get of a missing key gave flag %d", flag);
  MPI_CHECK(MPI_Info_get_valuelen(info, "delta", &len, &flag));
  CHECK(!flag, "Info_get_valuelen of a missing key gave flag %d", flag);
  /* a short buffer gets the value's first valuelen characters (MPICH also returns
   * MPI_ERR_INFO_VALUE, which the standard does not ask for: the return code is not
   * checked) */
  memset(value, 'x', sizeof value);
  MPI_Info_get(info, "beta", 3, value, &flag);
  CHECK(flag && !strcmp(value, "sec"), "Info_get with valuelen 3 (expected 'sec' got '%.8s')", value);
  /* dup is independent */
  MPI_CHECK(MPI_Info_dup(info, &dup));
  MPI_CHECK(MPI_Info_delete(info, "alpha"));
  MPI_CHECK(MPI_Info_set(info, "gamma", "changed"));
  MPI_CHECK(MPI_Info_get_nkeys(info, &n));
  CHECK(n == 2, "nkeys after delete (expected 2 got %d)", n);
  MPI_CHECK(MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(!flag, "deleted key still there");
  MPI_CHECK(MPI_Info_get_nkeys(dup, &n));
  CHECK(n == 3, "dup: nkeys (expected 3 got %d)", n);
  MPI_CHECK(MPI_Info_get(dup, "gamma", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag && !strcmp(value, mine), "dup: gamma (expected '%s' got '%s')", mine, value);
  MPI_CHECK(MPI_Info_get(dup, "alpha", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag && !strcmp(value, "1"), "dup: alpha (expected '1' got '%s')", value);
  /* errors */
  char longkey[MPI_MAX_INFO_KEY + 8];
  memset(longkey, 'k', sizeof longkey - 1);
  longkey[sizeof longkey - 1] = '\0';
  expect_class(MPI_Info_delete(info, "alpha"), MPI_ERR_INFO_NOKEY, "Info_delete(missing key)");
  expect_class(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY, "Info_set(key too long)");
  expect_class(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY, "Info_set(empty key)");
  expect_class(MPI_Info_get(info, longkey, 10, value, &flag), MPI_ERR_INFO_KEY, "Info_get(key too long)");
  expect_class(MPI_Info_get_nthkey(info, 2, key), MPI_ERR_ARG, "Info_get_nthkey(n == nkeys)");
  expect_class(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG, "Info_get_nthkey(n = -1)");
  expect_class(MPI_Info_get(info, "beta", -1, value, &flag), MPI_ERR_ARG, "Info_get(valuelen = -1)");
  {
    int rc = MPI_Info_get_nkeys(MPI_INFO_NULL, &n), cls = -1;
    CHECK(rc != MPI_SUCCESS, "Info_get_nkeys(MPI_INFO_NULL) succeeded");
    MPI_CHECK(MPI_Error_class(rc, &cls));
    /* MPI_ERR_INFO is the standard's class for a bad info object; MPICH says MPI_ERR_ARG */
    CHECK(cls == MPI_ERR_INFO || cls == MPI_ERR_ARG, "Info_get_nkeys(MPI_INFO_NULL): class %d", cls);
  }
  MPI_CHECK(MPI_Info_free(&info));
  CHECK(info == MPI_INFO_NULL, "Info_free did not set MPI_INFO_NULL");
  MPI_CHECK(MPI_Info_free(&dup));
}

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size, flag = -1;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  predefined(rank, size);

  counts cnt;
  memset(&cnt, 0, sizeof cnt);
  cnt.copy_flag = 1;
  int k_dup, k_null, k_user;
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k_dup, NULL));
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &k_null, &cnt));
  MPI_CHECK(MPI_Comm_create_keyval(copy_cb, delete_cb, &k_user, &cnt));
  CHECK(k_dup != k_null && k_null != k_user && k_dup != MPI_KEYVAL_INVALID, "keyvals not distinct: %d %d %d", k_dup,
        k_null, k_user);

  /* ---- per-rank values on one communicator */
  MPI_Comm base;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
  int a = 100 + rank, b = 200 + rank, c = 300 + rank;
  void *v = get(base, k_user, &flag);
  CHECK(!flag, "attribute present before set");
  MPI_CHECK(MPI_Comm_set_attr(base, k_dup, &a));
  MPI_CHECK(MPI_Comm_set_attr(base, k_null, &b));
  MPI_CHECK(MPI_Comm_set_attr(base, k_user, &c));
  MPI_CHECK(MPI_Barrier(base)); /* every rank has set its values */
  v = get(base, k_dup, &flag);
  CHECK(flag && v == &a && *(int *)v == 100 + rank, "get k_dup (expected my own %d got flag %d value %d)", 100 + rank,
        flag, flag ? *(int *)v : 0);
  v = get(base, k_user, &flag);
  CHECK(flag && v == &c, "get k_user: not my own value");
  /* ... and on MPI_COMM_WORLD, whose handle is the same in every rank */
  MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, k_dup, &a));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  v = get(MPI_COMM_WORLD, k_dup, &flag);
  CHECK(flag && v == &a, "attribute on MPI_COMM_WORLD: not my own value");
  MPI_CHECK(MPI_Comm_delete_attr(MPI_COMM_WORLD, k_dup));
  v = get(MPI_COMM_WORLD, k_dup, &flag);
  CHECK(!flag, "attribute on MPI_COMM_WORLD still there after delete");

  /* ---- replacing a value runs the delete callback on the old one */
  int b2 = 250 + rank;
  MPI_CHECK(MPI_Comm_set_attr(base, k_null, &b2));
  CHECK(cnt.deletes == 1 && cnt.last_deleted == &b && cnt.last_comm == base,
        "replace: delete callback (expected 1 call on &b got %d)", cnt.deletes);
  v = get(base, k_null, &flag);
  CHECK(flag && v == &b2, "replace: new value not stored");

  /* ---- dup: DUP_FN copies the pointer, NULL_COPY_FN copies nothing, the user
   * callback decides */
  MPI_Comm d1;
  MPI_CHECK(MPI_Comm_dup(base, &d1));
  CHECK(cnt.copies == 1 && cnt.last_comm == base, "dup: copy callback calls (expected 1 got %d)", cnt.copies);
  v = get(d1, k_dup, &flag);
  CHECK(flag && v == &a, "dup: k_dup (MPI_COMM_DUP_FN) not copied");
  v = get(d1, k_null, &flag);
  CHECK(!flag, "dup: k_null (MPI_COMM_NULL_COPY_FN) was copied");
  v = get(d1, k_user, &flag);
  CHECK(flag && *(int *)v == 2 * c, "dup: k_user (expected %d got flag %d value %d)", 2 * c, flag,
        flag ? *(int *)v : 0);
  void *copied = v;
  /* the original keeps its own values */
  v = get(base, k_user, &flag);
  CHECK(flag && v == &c, "dup changed the original's attribute");
  /* copy callback saying flag = 0 */
  cnt.copy_flag = 0;
  MPI_Comm d2;
  MPI_CHECK(MPI_Comm_dup(base, &d2));
  v = get(d2, k_user, &flag);
  CHECK(!flag, "dup: copy callback answered flag 0 but the attribute was copied");
  cnt.copy_flag = 1;
  /* dup of a dup copies again (from d1's value) */
  MPI_Comm d3;
  MPI_CHECK(MPI_Comm_dup(d1, &d3));
  v = get(d3, k_user, &flag);
  CHECK(flag && *(int *)v == 4 * c, "dup of dup: k_user (expected %d got %d)", 4 * c, flag ? *(int *)v : 0);

  /* ---- idup copies too */
  MPI_Comm d4;
  MPI_Request req;
  int copies_before = cnt.copies;
  MPI_CHECK(MPI_Comm_idup(base, &d4, &req));
  MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK(cnt.copies == copies_before + 1, "idup: copy callback calls (expected %d got %d)", copies_before + 1,
        cnt.copies);
  v = get(d4, k_dup, &flag);
  CHECK(flag && v == &a, "idup: k_dup not copied");

  /* ---- free runs the delete callbacks of the attributes it holds */
  int del_before = cnt.deletes;
  MPI_CHECK(MPI_Comm_free(&d1)); /* holds k_dup (null delete) and k_user */
  CHECK(cnt.deletes == del_before + 1 && cnt.last_deleted == copied, "free: delete callbacks (expected %d got %d)",
        del_before + 1, cnt.deletes);
  del_before = cnt.deletes;
  MPI_CHECK(MPI_Comm_free(&d2)); /* k_dup only */
  CHECK(cnt.deletes == del_before, "free: a delete callback ran for an attribute that was not copied");
  MPI_CHECK(MPI_Comm_free(&d4));

  /* ---- delete_attr */
  del_before = cnt.deletes;
  MPI_CHECK(MPI_Comm_delete_attr(base, k_user));
  CHECK(cnt.deletes == del_before + 1 && cnt.last_deleted == &c, "delete_attr: callback (expected 1 call on &c)");
  v = get(base, k_user, &flag);
  CHECK(!flag, "delete_attr: attribute still there");

  /* ---- a freed keyval still serves the attributes that use it */
  MPI_CHECK(MPI_Comm_set_attr(base, k_user, &c));
  MPI_CHECK(MPI_Comm_free_keyval(&k_user));
  CHECK(k_user == MPI_KEYVAL_INVALID, "Comm_free_keyval did not set MPI_KEYVAL_INVALID");
  MPI_Comm d5;
  copies_before = cnt.copies;
  MPI_CHECK(MPI_Comm_dup(base, &d5));
  CHECK(cnt.copies == copies_before + 1, "dup after free_keyval: copy callback not run");
  del_before = cnt.deletes;
  MPI_CHECK(MPI_Comm_free(&d5));
  MPI_CHECK(MPI_Comm_free(&d3));
  CHECK(cnt.deletes == del_before + 2, "free after free_keyval: delete callbacks (expected %d got %d)",
        del_before + 2, cnt.deletes);

  /* ---- a failing copy callback makes dup fail */
  MPI_CHECK(MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN));
  cnt.copy_rc = MPI_ERR_OTHER;
  MPI_Comm d6 = MPI_COMM_WORLD;
  int rc = MPI_Comm_dup(base, &d6);
  expect_class(rc, MPI_ERR_OTHER, "Comm_dup with a failing copy callback");
  CHECK(d6 == MPI_COMM_NULL, "failed Comm_dup: newcomm is not MPI_COMM_NULL");
  cnt.copy_rc = MPI_SUCCESS;
  /* base keeps the freed keyval's attribute until it is freed itself */

  /* ---- many keyvals on one communicator, copied by dup */
  int many[20], vals[20];
  for (int i = 0; i < 20; i++) {
    vals[i] = 1000 * rank + i;
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &many[i], NULL));
    MPI_CHECK(MPI_Comm_set_attr(base, many[i], &vals[i]));
  }
  MPI_Comm d7;
  MPI_CHECK(MPI_Comm_dup(base, &d7));
  for (int i = 0; i < 20; i++) {
    v = get(d7, many[i], &flag);
    CHECK(flag && v == &vals[i], "dup of 20 attributes: attribute %d", i);
    MPI_CHECK(MPI_Comm_free_keyval(&many[i]));
  }
  MPI_CHECK(MPI_Comm_free(&d7));

  /* ---- MPI-1 names */
  int k1, one = 1;
  MPI_CHECK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k1, NULL));
  MPI_CHECK(MPI_Attr_put(base, k1, &one));
  int *p1 = NULL;
  MPI_CHECK(MPI_Attr_get(base, k1, &p1, &flag));
  CHECK(flag && p1 == &one, "Attr_get after Attr_put");
  MPI_CHECK(MPI_Attr_delete(base, k1));
  MPI_CHECK(MPI_Attr_get(base, k1, &p1, &flag));
  CHECK(!flag, "Attr_get after Attr_delete");
  MPI_CHECK(MPI_Keyval_free(&k1));

  /* ---- bad arguments */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)); /* errors of no object (MPI-4.0) */
  int bogus = 12345, tag = MPI_TAG_UB;
  expect_class(MPI_Comm_set_attr(MPI_COMM_WORLD, bogus, &a), MPI_ERR_KEYVAL, "Comm_set_attr(unknown keyval)");
  expect_class(MPI_Comm_get_attr(MPI_COMM_WORLD, bogus, &v, &flag), MPI_ERR_KEYVAL, "Comm_get_attr(unknown keyval)");
  expect_class(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &a), MPI_ERR_KEYVAL, "Comm_set_attr(MPI_TAG_UB)");
  expect_class(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL, "Comm_delete_attr(MPI_TAG_UB)");
  expect_class(MPI_Comm_free_keyval(&tag), MPI_ERR_KEYVAL, "Comm_free_keyval(MPI_TAG_UB)");
  expect_class(MPI_Comm_get_attr(MPI_COMM_NULL, MPI_TAG_UB, &v, &flag), MPI_ERR_COMM, "Comm_get_attr(MPI_COMM_NULL)");
  expect_class(MPI_Comm_set_attr(MPI_COMM_NULL, k_dup, &a), MPI_ERR_COMM, "Comm_set_attr(MPI_COMM_NULL)");

  info_tests(rank);

  MPI_CHECK(MPI_Comm_free(&base));
  MPI_CHECK(MPI_Comm_free_keyval(&k_dup));
  MPI_CHECK(MPI_Comm_free_keyval(&k_null));
  return mt_finish();
}
