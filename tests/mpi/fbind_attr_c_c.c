/* fbind_attr_c_c.c - the C side of fbind_attr_c.F90: reads attributes set from Fortran
 * (a pointer to the value, MPI-3.1 17.2.7) and sets one that is a C pointer. Handles are
 * Fortran's, converted with MPI_X_f2c (the functions, not the macros: PMPI_ forms too). */
#include <mpi.h>
#include <stdio.h>

int attr_c_read(MPI_Fint handle, MPI_Fint keyval, long long expected) {
  void *p = NULL;
  int flag = 0;
  MPI_Datatype t = (PMPI_Type_f2c)(handle);
  if ((unsigned)t >> 24 == (unsigned)MPI_INT >> 24) MPI_Type_get_attr(t, keyval, &p, &flag);
  else MPI_Comm_get_attr((PMPI_Comm_f2c)(handle), keyval, &p, &flag);
  if (!flag || !p) return 0;
  MPI_Aint v = *(MPI_Aint *)p; /* crashed when C got the value itself */
  if (v != expected) fprintf(stderr, "attr_c_read: %ld, expected %lld\n", (long)v, expected);
  return v == expected;
}

static const int storage[64]; /* (const: not a global the ranks would share) */
long long attr_c_set(MPI_Fint comm, MPI_Fint keyval) {
  int rank;
  MPI_Comm c = MPI_Comm_f2c(comm);
  MPI_Comm_rank(c, &rank);
  MPI_Comm_set_attr(c, keyval, (void *)&storage[rank % 64]);
  return (long long)(MPI_Aint)&storage[rank % 64];
}
