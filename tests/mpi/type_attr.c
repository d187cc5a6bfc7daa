/* Datatype names and attribute caching: per-rank names (predefined types included),
 * copy callbacks on MPI_Type_dup, delete callbacks on replace, delete and MPI_Type_free,
 * and keyvals of the wrong kind refused. */
#define TEST_NAME "type_attr"
#include "mpitest.h"

typedef struct counters {
  int copies, deletes;
  int last_deleted;
} counters;

static int count_copy(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)t, (void)keyval;
  ((counters *)extra)->copies++;
  *(void **)out = (void *)((char *)in + 1); /* a recognisably different value */
  *flag = 1;
  return MPI_SUCCESS;
}

static int count_delete(MPI_Datatype t, int keyval, void *val, void *extra) {
  (void)t, (void)keyval;
  counters *c = extra;
  c->deletes++;
  c->last_deleted = (int)(intptr_t)val;
  return MPI_SUCCESS;
}

static int refuse_delete(MPI_Datatype t, int keyval, void *val, void *extra) {
  (void)t, (void)keyval, (void)val, (void)extra;
  return MPI_ERR_OTHER;
}

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size, len;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  char name[MPI_MAX_OBJECT_NAME], want[MPI_MAX_OBJECT_NAME];

  /* ---- names: predefined defaults, then a name per rank on MPI_INT */
  MPI_CHECK(MPI_Type_get_name(MPI_INT, name, &len));
  CHECK(!strcmp(name, "MPI_INT") && len == 7, "MPI_INT is named '%s' (%d)", name, len);
  MPI_CHECK(MPI_Type_get_name(MPI_DOUBLE_INT, name, &len));
  CHECK(!strcmp(name, "MPI_DOUBLE_INT"), "MPI_DOUBLE_INT is named '%s'", name);
  snprintf(want, sizeof want, "int of rank %d", rank);
  MPI_CHECK(MPI_Type_set_name(MPI_INT, want));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every rank has named its MPI_INT */
  MPI_CHECK(MPI_Type_get_name(MPI_INT, name, &len));
  CHECK(!strcmp(name, want), "MPI_INT is named '%s', expected this rank's '%s'", name, want);

  MPI_Datatype vec, dup;
  MPI_CHECK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
  MPI_CHECK(MPI_Type_get_name(vec, name, &len));
  CHECK(len == 0 && name[0] == '\0', "a new derived type is named '%s'", name);
  MPI_CHECK(MPI_Type_set_name(vec, "columns"));
  MPI_CHECK(MPI_Type_get_name(vec, name, &len));
  CHECK(!strcmp(name, "columns") && len == 7, "vec is named '%s'", name);

  /* ---- attributes with callbacks; extra_state lives on this rank's stack */
  counters cnt = {0, 0, 0};
  int kv_copy, kv_nocopy, kv_dupfn;
  MPI_CHECK(MPI_Type_create_keyval(count_copy, count_delete, &kv_copy, &cnt));
  MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, count_delete, &kv_nocopy, &cnt));
  MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kv_dupfn, NULL));
  int base = 1000 * (rank + 1);
  MPI_CHECK(MPI_Type_set_attr(vec, kv_copy, (void *)(intptr_t)base));
  MPI_CHECK(MPI_Type_set_attr(vec, kv_nocopy, (void *)(intptr_t)(base + 500)));
  MPI_CHECK(MPI_Type_set_attr(vec, kv_dupfn, (void *)(intptr_t)(base + 700)));
  void *val = NULL;
  int flag = 0;
  MPI_CHECK(MPI_Type_get_attr(vec, kv_copy, &val, &flag));
  CHECK(flag && (intptr_t)val == base, "get_attr(vec) flag %d value %ld", flag, (long)(intptr_t)val);

  MPI_CHECK(MPI_Type_commit(&vec));
  MPI_CHECK(MPI_Type_dup(vec, &dup));
  CHECK(cnt.copies == 1, "dup ran %d copy callbacks, expected 1", cnt.copies);
  MPI_CHECK(MPI_Type_get_attr(dup, kv_copy, &val, &flag));
  CHECK(flag && (intptr_t)val == base + 1, "dup's copied attribute: flag %d value %ld", flag, (long)(intptr_t)val);
  MPI_CHECK(MPI_Type_get_attr(dup, kv_nocopy, &val, &flag));
  CHECK(!flag, "MPI_TYPE_NULL_COPY_FN attribute was copied");
  MPI_CHECK(MPI_Type_get_attr(dup, kv_dupfn, &val, &flag));
  CHECK(flag && (intptr_t)val == base + 700, "MPI_TYPE_DUP_FN attribute: flag %d", flag);

  /* replacing runs the delete callback on the old value */
  MPI_CHECK(MPI_Type_set_attr(dup, kv_copy, (void *)(intptr_t)(base + 2)));
  CHECK(cnt.deletes == 1 && cnt.last_deleted == base + 1, "replace: %d deletes, last %d", cnt.deletes,
        cnt.last_deleted);
  /* the dup still works for communication and frees its attributes with it */
  int src[12], dst[12];
  for (int i = 0; i < 12; i++) src[i] = rank * 100 + i, dst[i] = -1;
  MPI_CHECK(MPI_Sendrecv(src, 1, dup, 0, 0, dst, 1, vec, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE));
  for (int b = 0; b < 3; b++)
    for (int k = 0; k < 2; k++) CHECK(dst[4 * b + k] == rank * 100 + 4 * b + k, "vector element %d", 4 * b + k);
  MPI_CHECK(MPI_Type_free(&dup));
  CHECK(cnt.deletes == 2 && cnt.last_deleted == base + 2, "free(dup): %d deletes, last %d", cnt.deletes,
        cnt.last_deleted);
  MPI_CHECK(MPI_Type_delete_attr(vec, kv_nocopy));
  CHECK(cnt.deletes == 3 && cnt.last_deleted == base + 500, "delete_attr: %d deletes", cnt.deletes);
  MPI_CHECK(MPI_Type_get_attr(vec, kv_nocopy, &val, &flag));
  CHECK(!flag, "deleted attribute still there");

  /* ---- attributes on a predefined type are this rank's own */
  MPI_CHECK(MPI_Type_set_attr(MPI_DOUBLE, kv_dupfn, (void *)(intptr_t)(base + 9)));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_CHECK(MPI_Type_get_attr(MPI_DOUBLE, kv_dupfn, &val, &flag));
  CHECK(flag && (intptr_t)val == base + 9, "MPI_DOUBLE's attribute is %ld, expected this rank's %d",
        (long)(intptr_t)val, base + 9);
  MPI_CHECK(MPI_Type_delete_attr(MPI_DOUBLE, kv_dupfn));

  /* ---- errors: a communicator keyval on a type, a failing delete callback keeps the type */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)); /* errors of no object (MPI-4.0) */
  int comm_kv, cls = -1;
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &comm_kv, NULL));
  int rc = MPI_Type_set_attr(vec, comm_kv, NULL);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_KEYVAL, "a communicator keyval on a datatype gave class %d", cls);
  rc = MPI_Type_get_attr(MPI_DATATYPE_NULL, kv_copy, &val, &flag);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_TYPE, "get_attr on MPI_DATATYPE_NULL gave class %d", cls);
  int kv_refuse;
  MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, refuse_delete, &kv_refuse, NULL));
  MPI_CHECK(MPI_Type_set_attr(vec, kv_refuse, NULL));
  rc = MPI_Type_free(&vec);
  CHECK(rc != MPI_SUCCESS && vec != MPI_DATATYPE_NULL, "free with a failing delete callback returned %d", rc);
  MPI_CHECK(MPI_Type_get_name(vec, name, &len)); /* still a valid type */
  CHECK(!strcmp(name, "columns"), "vec renamed '%s' after a failed free", name);
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL)); /* errors of no object (MPI-4.0) */

  MPI_CHECK(MPI_Comm_free_keyval(&comm_kv));
  MPI_CHECK(MPI_Type_free_keyval(&kv_copy));
  MPI_CHECK(MPI_Type_free_keyval(&kv_nocopy));
  MPI_CHECK(MPI_Type_free_keyval(&kv_dupfn));
  MPI_CHECK(MPI_Type_free_keyval(&kv_refuse));
  CHECK(kv_copy == MPI_KEYVAL_INVALID, "free_keyval did not reset the handle");
  MPI_CHECK(MPI_Finalize());
  if (rank == 0) printf("PASS " TEST_NAME "\n");
  return 0;
}
