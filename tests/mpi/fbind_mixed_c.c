/* fbind_mixed_c.c - the C half of fbind_mixed: handles cross between Fortran and C with
 * MPI_Comm_f2c / MPI_Comm_c2f (and the same for datatypes and requests). */
#include <mpi.h>

/* Fortran passes its communicator; C answers with a new one (a split by parity) */
MPI_Fint cmix_split(MPI_Fint *fcomm, MPI_Fint *fsize);
MPI_Fint cmix_split(MPI_Fint *fcomm, MPI_Fint *fsize) {
  MPI_Comm c = MPI_Comm_f2c(*fcomm), out;
  int rank, size;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  *fsize = size;
  MPI_Comm_split(c, rank % 2, rank, &out);
  return MPI_Comm_c2f(out);
}

/* a request started in Fortran, completed in C */
int cmix_wait(MPI_Fint *freq, MPI_Fint *ftype);
int cmix_wait(MPI_Fint *freq, MPI_Fint *ftype) {
  MPI_Request r = MPI_Request_f2c(*freq);
  MPI_Status st;
  int n = -1;
  MPI_Wait(&r, &st);
  MPI_Get_count(&st, MPI_Type_f2c(*ftype), &n);
  *freq = MPI_Request_c2f(r);
  return n;
}

/* a status received in Fortran, read in C (MPI_Status_f2c) and given back changed
 * (MPI_Status_c2f); Fortran's MPI_STATUS_IGNORE must be C's MPI_F_STATUS_IGNORE. Returns
 * count * 1000 + source, or a negative step that failed. */
int cmix_status(MPI_Fint *fstatus, MPI_Fint *fout, MPI_Fint *fignore);
int cmix_status(MPI_Fint *fstatus, MPI_Fint *fout, MPI_Fint *fignore) {
  MPI_Status st;
  int n = -1;
  if (fignore != MPI_F_STATUS_IGNORE) return -2;
  if (MPI_Status_f2c(fstatus, &st) != MPI_SUCCESS) return -3;
  if (MPI_Get_count(&st, MPI_INT, &n) != MPI_SUCCESS) return -4;
  st.MPI_TAG += 100;
  if (MPI_Status_c2f(&st, fout) != MPI_SUCCESS) return -5;
  return n * 1000 + st.MPI_SOURCE;
}
