/* Each communicator's own MPI state (name, error handler, cached attributes, info hints),
 * made with every new communicator, whatever created it: the new one has no name, the
 * parent's error handler (used by its errors: here MPI_ERRORS_RETURN on a parent, while
 * MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL, so a wrong handler ends the job), the
 * attributes and hints only dup gives, and nothing left from a freed communicator whose
 * slot it reuses. MPI_COMM_WORLD and MPI_COMM_SELF have their names from MPI_Init. */
#define TEST_NAME "comm_state"
#include "mpitest.h"

enum { NO_ATTR = 0, ATTR = 1, NO_HINT = 0, HINT = 1 };

/* c is a new communicator made from parent (named "parent", MPI_ERRORS_RETURN, attribute
 * key, hint "skein_test_hint"=parent). */
static void check_new(MPI_Comm c, const char *what, int key, int attr, int hint) {
  char name[MPI_MAX_OBJECT_NAME] = "?";
  int len = -1, flag = -1, inter, n, cls;
  MPI_CHECK(MPI_Comm_get_name(c, name, &len));
  CHECK(len == 0 && name[0] == '\0', "%s: name '%s' (len %d), expected none", what, name, len);
  MPI_Errhandler eh;
  MPI_CHECK(MPI_Comm_get_errhandler(c, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "%s: the error handler is not the parent's", what);
  MPI_CHECK(MPI_Comm_test_inter(c, &inter));
  MPI_CHECK(inter ? MPI_Comm_remote_size(c, &n) : MPI_Comm_size(c, &n));
  int rc = MPI_Send(NULL, 0, MPI_INT, n + 3, 0, c); /* returns only if c's handler does */
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RANK, "%s: send to rank %d returned class %d, expected MPI_ERR_RANK", what, n + 3, cls);
  void *val = NULL;
  MPI_CHECK(MPI_Comm_get_attr(c, key, &val, &flag));
  CHECK(flag == attr, "%s: attribute %s", what, flag ? "present" : "missing");
  MPI_Info info;
  char v[32] = "";
  MPI_CHECK(MPI_Comm_get_info(c, &info));
  MPI_CHECK(MPI_Info_get(info, "skein_test_hint", (int)sizeof v - 1, v, &flag));
  CHECK(flag == hint && (!flag || !strcmp(v, "parent")), "%s: hint %s ('%s')", what, flag ? "present" : "missing", v);
  MPI_CHECK(MPI_Info_free(&info));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, len;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char name[MPI_MAX_OBJECT_NAME];
  MPI_CHECK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
  CHECK(!strcmp(name, "MPI_COMM_SELF") && len == 13, "self name '%s'", name);
  MPI_CHECK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "world name '%s'", name);
  MPI_Errhandler eh;
  MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
  CHECK(eh == MPI_ERRORS_ARE_FATAL, "world's error handler is not MPI_ERRORS_ARE_FATAL");

  int key;
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
  MPI_Comm parent;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
  MPI_CHECK(MPI_Comm_set_name(parent, "parent"));
  MPI_CHECK(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_attr(parent, key, &rank));
  MPI_Info hints;
  MPI_CHECK(MPI_Info_create(&hints));
  MPI_CHECK(MPI_Info_set(hints, "skein_test_hint", "parent"));
  MPI_CHECK(MPI_Comm_set_info(parent, hints));

  MPI_Comm c[16];
  int k = 0;
  MPI_CHECK(MPI_Comm_dup(parent, &c[k]));
  check_new(c[k++], "Comm_dup", key, ATTR, HINT);
  MPI_CHECK(MPI_Comm_dup_with_info(parent, hints, &c[k]));
  check_new(c[k++], "Comm_dup_with_info", key, ATTR, HINT);
  MPI_Request req;
  MPI_CHECK(MPI_Comm_idup(parent, &c[k], &req));
  MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  check_new(c[k++], "Comm_idup", key, ATTR, HINT);
  MPI_CHECK(MPI_Comm_split(parent, rank % 2, -rank, &c[k]));
  check_new(c[k++], "Comm_split", key, NO_ATTR, NO_HINT);
  MPI_CHECK(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &c[k]));
  check_new(c[k++], "Comm_split_type", key, NO_ATTR, NO_HINT);
  MPI_Group wg;
  MPI_CHECK(MPI_Comm_group(parent, &wg));
  MPI_CHECK(MPI_Comm_create(parent, wg, &c[k]));
  check_new(c[k++], "Comm_create", key, NO_ATTR, NO_HINT);
  MPI_CHECK(MPI_Comm_create_group(parent, wg, 7, &c[k]));
  check_new(c[k++], "Comm_create_group", key, NO_ATTR, NO_HINT);
  MPI_CHECK(MPI_Group_free(&wg));
  int dims[1] = {size}, periods[1] = {1}, keep[1] = {1};
  MPI_CHECK(MPI_Cart_create(parent, 1, dims, periods, 0, &c[k]));
  MPI_Comm cart = c[k];
  check_new(c[k++], "Cart_create", key, NO_ATTR, NO_HINT);
  MPI_CHECK(MPI_Cart_sub(cart, keep, &c[k]));
  check_new(c[k++], "Cart_sub", key, NO_ATTR, NO_HINT);
  int index[1] = {0}, edges[1] = {0};
  MPI_CHECK(MPI_Graph_create(parent, 1, index, edges, 0, &c[k])); /* rank 0 alone, others get NULL */
  if (rank == 0) check_new(c[k++], "Graph_create", key, NO_ATTR, NO_HINT);
  else CHECK(c[k++] == MPI_COMM_NULL, "Graph_create gave rank %d a communicator", rank);
  int me = rank;
  MPI_CHECK(MPI_Dist_graph_create_adjacent(parent, 1, &me, MPI_UNWEIGHTED, 1, &me, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                           0, &c[k]));
  check_new(c[k++], "Dist_graph_create_adjacent", key, NO_ATTR, NO_HINT);
  if (size >= 2) { /* the two halves of parent, joined and merged */
    MPI_Comm half;
    MPI_CHECK(MPI_Comm_split(parent, rank < size / 2, rank, &half));
    MPI_CHECK(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Intercomm_create(half, 0, parent, rank < size / 2 ? size / 2 : 0, 5, &c[k]));
    MPI_Comm inter = c[k];
    check_new(c[k++], "Intercomm_create", key, NO_ATTR, NO_HINT);
    MPI_CHECK(MPI_Comm_set_name(inter, "inter"));
    MPI_CHECK(MPI_Intercomm_merge(inter, rank < size / 2, &c[k]));
    check_new(c[k++], "Intercomm_merge", key, NO_ATTR, NO_HINT);
    MPI_CHECK(MPI_Comm_free(&half));
  }

  /* Freed communicators leave nothing to the ones that take their slots. */
  for (int i = k - 1; i >= 0; i--) {
    if (c[i] == MPI_COMM_NULL) continue; /* Graph_create's, outside rank 0 */
    MPI_CHECK(MPI_Comm_set_name(c[i], "freed"));
    MPI_CHECK(MPI_Comm_set_errhandler(c[i], MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_free(&c[i]));
    CHECK(c[i] == MPI_COMM_NULL, "Comm_free left the handle");
  }
  for (int i = 0; i < k; i++) {
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c[i]));
    int flag = -1;
    void *val;
    MPI_CHECK(MPI_Comm_get_name(c[i], name, &len));
    CHECK(len == 0, "dup %d of MPI_COMM_WORLD is named '%s'", i, name);
    MPI_CHECK(MPI_Comm_get_errhandler(c[i], &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "dup %d of MPI_COMM_WORLD does not have its error handler", i);
    MPI_CHECK(MPI_Comm_get_attr(c[i], key, &val, &flag));
    CHECK(!flag, "dup %d of MPI_COMM_WORLD has the freed communicator's attribute", i);
    MPI_Info info;
    char v[32];
    MPI_CHECK(MPI_Comm_get_info(c[i], &info));
    MPI_CHECK(MPI_Info_get(info, "skein_test_hint", (int)sizeof v - 1, v, &flag));
    CHECK(!flag, "dup %d of MPI_COMM_WORLD has the freed communicator's hint", i);
    MPI_CHECK(MPI_Info_free(&info));
  }
  for (int i = 0; i < k; i++) MPI_CHECK(MPI_Comm_free(&c[i]));
  /* and the parent kept its own */
  MPI_CHECK(MPI_Comm_get_name(parent, name, &len));
  CHECK(!strcmp(name, "parent"), "parent renamed '%s'", name);
  MPI_CHECK(MPI_Info_free(&hints));
  MPI_CHECK(MPI_Comm_free(&parent));
  MPI_CHECK(MPI_Comm_free_keyval(&key));
  MPI_Finalize();
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
