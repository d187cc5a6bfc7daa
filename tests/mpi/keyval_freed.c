/* A keyval freed (Comm_free_keyval, Type_free_keyval) while attributes still use it stays
 * usable through a saved copy of its handle until the last attribute is deleted: get and
 * delete_attr work, delete callbacks still run, and a second free of the copy succeeds
 * (as in MPICH's attr/keyval_double_free). Comm and datatype keyvals. */
#define TEST_NAME "keyval_freed"
#include "mpitest.h"

typedef struct counts {
  int deletes;
  void *last;
} counts;

static int del_comm(MPI_Comm c, int k, void *val, void *extra) {
  (void)c, (void)k;
  counts *n = extra;
  n->deletes++;
  n->last = val;
  return MPI_SUCCESS;
}
static int del_type(MPI_Datatype t, int k, void *val, void *extra) {
  (void)t, (void)k;
  counts *n = extra;
  n->deletes++;
  n->last = val;
  return MPI_SUCCESS;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int a = 1, b = 2, flag = 0;
  void *got = NULL;

  /* ---- communicators */
  counts cc = {0, NULL};
  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int k, kcopy;
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_comm, &k, &cc));
  kcopy = k;
  int kcopy2 = k;
  MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, k, &a));
  MPI_CHECK(MPI_Comm_set_attr(dup, k, &b));
  MPI_CHECK(MPI_Comm_free_keyval(&k));
  CHECK(k == MPI_KEYVAL_INVALID, "Comm_free_keyval did not set MPI_KEYVAL_INVALID");
  MPI_CHECK(MPI_Comm_get_attr(dup, kcopy, &got, &flag));
  CHECK(flag && got == &b, "get_attr through the freed keyval (flag %d)", flag);
  MPI_CHECK(MPI_Comm_delete_attr(dup, kcopy));
  CHECK(cc.deletes == 1 && cc.last == &b, "delete callback after free_keyval (deletes %d)", cc.deletes);
  MPI_CHECK(MPI_Comm_free_keyval(&kcopy)); /* second free: no effect */
  MPI_CHECK(MPI_Comm_free(&dup));
  MPI_CHECK(MPI_Comm_delete_attr(MPI_COMM_SELF, kcopy2)); /* the last attribute */
  CHECK(cc.deletes == 2 && cc.last == &a, "delete callback of the last attribute (deletes %d)", cc.deletes);

  /* a keyval freed twice with no attribute left is invalid the second time */
  int k2, k2copy;
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL));
  k2copy = k2;
  MPI_CHECK(MPI_Comm_free_keyval(&k2));
  int rc = MPI_Comm_get_attr(MPI_COMM_WORLD, k2copy, &got, &flag);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_KEYVAL, "get_attr on a keyval freed with no attributes: class %d", cls);

  /* ---- datatypes */
  counts tc = {0, NULL};
  MPI_Datatype t1, t2;
  MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &t1));
  MPI_CHECK(MPI_Type_dup(MPI_DOUBLE, &t2));
  int tk, tkcopy;
  MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, del_type, &tk, &tc));
  tkcopy = tk;
  MPI_CHECK(MPI_Type_set_attr(t1, tk, &a));
  MPI_CHECK(MPI_Type_set_attr(t2, tk, &b));
  MPI_CHECK(MPI_Type_free_keyval(&tk));
  CHECK(tk == MPI_KEYVAL_INVALID, "Type_free_keyval did not set MPI_KEYVAL_INVALID");
  MPI_CHECK(MPI_Type_get_attr(t1, tkcopy, &got, &flag));
  CHECK(flag && got == &a, "Type_get_attr through the freed keyval (flag %d)", flag);
  MPI_CHECK(MPI_Type_delete_attr(t1, tkcopy));
  CHECK(tc.deletes == 1 && tc.last == &a, "type delete callback after free_keyval (deletes %d)", tc.deletes);
  MPI_CHECK(MPI_Type_free_keyval(&tkcopy));
  MPI_CHECK(MPI_Type_free(&t2)); /* the last attribute: its delete callback runs */
  CHECK(tc.deletes == 2 && tc.last == &b, "Type_free: delete callback (deletes %d)", tc.deletes);
  MPI_CHECK(MPI_Type_free(&t1));

  MPI_Finalize();
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
