/* User error classes and codes: MPI_Add_error_class / MPI_Add_error_code return new values
 * above MPI_ERR_LASTCODE, MPI_Error_class maps a code to its class, MPI_Add_error_string
 * sets what MPI_Error_string returns (empty before), MPI_LASTUSEDCODE on MPI_COMM_WORLD
 * follows the largest value, a user error handler receives an added code through
 * MPI_Comm_call_errhandler; invalid uses return MPI_ERR_ARG. Message_c2f/f2c and the
 * other handle conversions round-trip; a status goes to its Fortran form and back
 * (MPI_Status_c2f/f2c) and the Fortran ignore sentinels are refused. */
#define TEST_NAME "errcodes"
#include "mpitest.h"
#include <stdatomic.h>

/* The handler stores the code it got where an attribute of the communicator points; the
 * keyval is created first in every rank, so the shared global holds the same value. */
SKEIN_SHARED static _Atomic int g_key = MPI_KEYVAL_INVALID;
static void handler(MPI_Comm *comm, int *code, ...) {
  int *slot = NULL, flag = 0;
  MPI_Comm_get_attr(*comm, g_key, &slot, &flag);
  if (flag) *slot = *code;
}

static int lastused(void) {
  int *v = NULL, flag = 0;
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
  CHECK(flag && v, "MPI_LASTUSEDCODE not set");
  return *v;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* errors of no object (MPI-4.0) */
  int key, seen = -1;
  MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
  g_key = key;

  int last0 = lastused();
  CHECK(last0 >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d < MPI_ERR_LASTCODE %d", last0, MPI_ERR_LASTCODE);
  int c1, c2, e1, e2, e3, cls = -1, len = -1;
  char s[MPI_MAX_ERROR_STRING];
  MPI_CHECK(MPI_Add_error_class(&c1));
  CHECK(c1 > last0, "new class %d not above MPI_LASTUSEDCODE %d", c1, last0);
  CHECK(lastused() >= c1, "MPI_LASTUSEDCODE %d below the new class %d", lastused(), c1);
  MPI_CHECK(MPI_Error_class(c1, &cls));
  CHECK(cls == c1, "Error_class of a new class: %d (expected itself, %d)", cls, c1);
  MPI_CHECK(MPI_Error_string(c1, s, &len));
  CHECK(len == 0 && s[0] == '\0', "string of a class without one: \"%s\" (len %d)", s, len);
  MPI_CHECK(MPI_Add_error_code(c1, &e1));
  MPI_CHECK(MPI_Add_error_code(c1, &e2));
  MPI_CHECK(MPI_Add_error_code(MPI_ERR_TAG, &e3));
  CHECK(e1 != e2 && e1 != c1 && e3 != e2, "codes not distinct: %d %d %d", e1, e2, e3);
  MPI_CHECK(MPI_Add_error_class(&c2));
  int top = c2 > e3 ? c2 : e3;
  CHECK(lastused() >= top, "MPI_LASTUSEDCODE %d below %d", lastused(), top);
  MPI_CHECK(MPI_Error_class(e1, &cls));
  CHECK(cls == c1, "class of code e1: %d (expected %d)", cls, c1);
  MPI_CHECK(MPI_Error_class(e3, &cls));
  CHECK(cls == MPI_ERR_TAG, "class of a code added to MPI_ERR_TAG: %d", cls);
  MPI_CHECK(MPI_Add_error_string(c1, "my class"));
  MPI_CHECK(MPI_Add_error_string(e1, "my first code"));
  MPI_CHECK(MPI_Add_error_string(e1, "my first code, again"));
  MPI_CHECK(MPI_Error_string(e1, s, &len));
  CHECK(!strcmp(s, "my first code, again") && len == (int)strlen(s), "string of e1: \"%s\"", s);
  MPI_CHECK(MPI_Error_string(c1, s, &len));
  CHECK(!strcmp(s, "my class"), "string of c1: \"%s\"", s);
  MPI_CHECK(MPI_Error_string(e2, s, &len));
  CHECK(len == 0, "string of e2 (never set): \"%s\"", s);

  /* errors */
  int rc = MPI_Add_error_code(e1, &e2); /* e1 is a code, not a class */
  MPI_Error_class(rc, &cls);
  CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_ARG, "Add_error_code on a code: class %d", cls);
  rc = MPI_Add_error_string(MPI_ERR_TAG, "mine");
  MPI_Error_class(rc, &cls);
  CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_ARG, "Add_error_string on a predefined code: class %d", cls);
  rc = MPI_Error_class(top + 100, &cls);
  CHECK(rc != MPI_SUCCESS, "Error_class of an unknown code succeeded");

  /* a user handler receives the added code */
  MPI_Errhandler eh;
  MPI_CHECK(MPI_Comm_create_errhandler(handler, &eh));
  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_CHECK(MPI_Comm_set_errhandler(dup, eh));
  MPI_CHECK(MPI_Comm_set_attr(dup, key, &seen));
  MPI_CHECK(MPI_Comm_call_errhandler(dup, e2));
  CHECK(seen == e2, "the handler got code %d, expected the added %d", seen, e2);
  MPI_CHECK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
  rc = MPI_Comm_call_errhandler(dup, e1);
  CHECK(rc == MPI_SUCCESS, "Comm_call_errhandler returned %d", rc);
  MPI_CHECK(MPI_Errhandler_free(&eh));

  /* handle conversions */
  MPI_Message m = MPI_MESSAGE_NULL;
  CHECK(MPI_Message_f2c(MPI_Message_c2f(m)) == MPI_MESSAGE_NULL, "Message_c2f/f2c");
  CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "Op_c2f/f2c");
  CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN, "Errhandler_c2f/f2c");
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(dup)) == dup, "Comm_c2f/f2c");
  CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY, "Group_c2f/f2c");
  CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "Type_c2f/f2c");
  CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL, "Info_c2f/f2c");
  CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL, "Request_c2f/f2c");
  CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "Win_c2f/f2c");
  /* a status through its Fortran form: MPI_SOURCE, MPI_TAG, MPI_ERROR are words 1..3 */
  {
    int size, right, left, token = rank, got = -1; /* Sendrecv's buffers must not overlap */
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    MPI_Status st, back;
    MPI_CHECK(MPI_Sendrecv(&token, 1, MPI_INT, right, 40 + rank, &got, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD,
                           &st));
    CHECK(got == left, "Sendrecv: got %d from %d", got, left);
    MPI_Fint fst[sizeof(MPI_Status) / sizeof(MPI_Fint) + 1];
    fst[sizeof(MPI_Status) / sizeof(MPI_Fint)] = 12345; /* not written */
    MPI_CHECK(MPI_Status_c2f(&st, fst));
    CHECK(fst[0] == left && fst[1] == 40 + left, "Status_c2f: source %d tag %d (expected %d %d)", fst[0], fst[1],
          left, 40 + left);
    CHECK(fst[sizeof(MPI_Status) / sizeof(MPI_Fint)] == 12345, "Status_c2f wrote past the status");
    memset(&back, 0, sizeof back);
    MPI_CHECK(MPI_Status_f2c(fst, &back));
    int count = -1;
    MPI_CHECK(MPI_Get_count(&back, MPI_INT, &count));
    CHECK(back.MPI_SOURCE == left && back.MPI_TAG == 40 + left && count == 1, "Status_f2c round trip (count %d)",
          count);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* errors of no object (MPI-4.0) */
    int cls = -1;
    MPI_Error_class(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back), &cls);
    CHECK(cls == MPI_ERR_ARG, "Status_f2c(MPI_F_STATUS_IGNORE): class %d", cls);
    MPI_Error_class(MPI_Status_c2f(&st, MPI_F_STATUSES_IGNORE), &cls);
    CHECK(cls == MPI_ERR_ARG, "Status_c2f(.., MPI_F_STATUSES_IGNORE): class %d", cls);
    MPI_Error_class(MPI_Status_c2f(MPI_STATUS_IGNORE, fst), &cls);
    CHECK(cls == MPI_ERR_ARG, "Status_c2f(MPI_STATUS_IGNORE, ..): class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL); /* errors of no object (MPI-4.0) */
  }
  MPI_CHECK(MPI_Comm_free(&dup));

  MPI_Finalize();
  if (rank == 0) printf("PASS %s\n", TEST_NAME);
  return 0;
}
