/* handles_c2f.c - issue 33's C-visible parts of the Fortran support: MPI_Message_c2f/f2c
 * (and every other handle kind's) exist as functions with PMPI_ forms, not only as macros;
 * MPI_COMPLEX8/16 are named predefined types; MPI_Type_get_name knows MPI_LB and MPI_UB;
 * window and file error handlers get the user-added code given to
 * MPI_Win/File_call_errhandler (MPI_ERR_UNKNOWN before). */
#define TEST_NAME "handles_c2f"
#include <complex.h>
#include <stdio.h>
#include <string.h>

#include "mpitest.h"

static int last_code; /* per rank: built with -fprivatize */
static void win_eh(MPI_Win *w, int *code, ...) { last_code = *code; (void)w; }
static void file_eh(MPI_File *f, int *code, ...) { last_code = *code; (void)f; }

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));

  /* the functions behind the macros ((f) does not expand a function-like macro) */
  MPI_Message m = MPI_MESSAGE_NO_PROC;
  MPI_Fint fm = (MPI_Message_c2f)(m);
  CHECK((MPI_Message_f2c)(fm) == m && PMPI_Message_f2c(PMPI_Message_c2f(m)) == m, "message c2f/f2c");
  CHECK(MPI_Message_c2f(MPI_MESSAGE_NULL) == PMPI_Message_c2f(MPI_MESSAGE_NULL), "macro and function agree");
  MPI_Fint (*c2f)(MPI_Comm) = MPI_Comm_c2f;
  CHECK(PMPI_Comm_f2c(c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "comm c2f by address");
  CHECK(PMPI_Type_f2c(PMPI_Type_c2f(MPI_INT)) == MPI_INT && PMPI_Op_f2c(PMPI_Op_c2f(MPI_SUM)) == MPI_SUM &&
            PMPI_Errhandler_f2c(PMPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN &&
            PMPI_Group_f2c(PMPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY &&
            PMPI_Info_f2c(PMPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL &&
            PMPI_Request_f2c(PMPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL &&
            PMPI_Win_f2c(PMPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL &&
            PMPI_File_f2c(PMPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL,
        "PMPI_X_c2f/f2c of every kind");

  char name[MPI_MAX_OBJECT_NAME];
  int len, size;
  MPI_CHECK(MPI_Type_get_name(MPI_COMPLEX8, name, &len));
  CHECK(strcmp(name, "MPI_COMPLEX8") == 0, "name of MPI_COMPLEX8: %s", name);
  MPI_CHECK(MPI_Type_size(MPI_COMPLEX16, &size));
  CHECK(size == 16 && MPI_COMPLEX16 != MPI_DOUBLE_COMPLEX, "MPI_COMPLEX16");
  MPI_CHECK(MPI_Type_get_name(MPI_LB, name, &len));
  CHECK(strcmp(name, "MPI_LB") == 0 && len == 6, "name of MPI_LB: %s", name);
  MPI_CHECK(MPI_Type_get_name(MPI_UB, name, &len));
  CHECK(strcmp(name, "MPI_UB") == 0, "name of MPI_UB: %s", name);
  double _Complex z = rank + 1.0 * _Complex_I, s;
  MPI_CHECK(MPI_Allreduce(&z, &s, 1, MPI_COMPLEX16, MPI_SUM, MPI_COMM_WORLD));
  int n;
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &n));
  CHECK(__imag__ s == n, "allreduce over MPI_COMPLEX16");

  int cls, code;
  MPI_CHECK(MPI_Add_error_class(&cls));
  MPI_CHECK(MPI_Add_error_code(cls, &code));
  int buf[4];
  MPI_Win win;
  MPI_Errhandler eh;
  MPI_CHECK(MPI_Win_create(buf, sizeof buf, sizeof buf[0], MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  MPI_CHECK(MPI_Win_create_errhandler(win_eh, &eh));
  MPI_CHECK(MPI_Win_set_errhandler(win, eh));
  MPI_CHECK(MPI_Win_call_errhandler(win, code));
  CHECK(last_code == code, "window handler got %d, expected the user code %d", last_code, code);
  MPI_CHECK(MPI_Win_free(&win));
  MPI_CHECK(MPI_Errhandler_free(&eh));
  char fname[64];
  snprintf(fname, sizeof fname, "/tmp/skein_handles_c2f_%d", rank);
  MPI_File fh;
  MPI_CHECK(MPI_File_open(MPI_COMM_SELF, fname, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                          MPI_INFO_NULL, &fh));
  MPI_CHECK(MPI_File_create_errhandler(file_eh, &eh));
  MPI_CHECK(MPI_File_set_errhandler(fh, eh));
  MPI_CHECK(MPI_File_call_errhandler(fh, cls));
  CHECK(last_code == cls, "file handler got %d, expected the user class %d", last_code, cls);
  MPI_CHECK(MPI_File_close(&fh));
  MPI_CHECK(MPI_Errhandler_free(&eh));
  return mt_finish();
}
