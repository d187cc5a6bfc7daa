/* Handle conversion between C and Fortran (MPI-3.1 17.2.4): handles are ints in both, so
 * these are identities. mpi.h also makes them macros; these are the functions behind them
 * (for a program that takes their address or #undefs them) and the PMPI_ forms. */
#include "api.h"

#define CONVERT(K, C_t)                                                  \
  MPI_Fint PMPI_##K##_c2f(C_t h) { return (MPI_Fint)h; }                \
  C_t PMPI_##K##_f2c(MPI_Fint h) { return (C_t)h; }                     \
  SKN_WEAK_ALIAS(K##_c2f);                                               \
  SKN_WEAK_ALIAS(K##_f2c);
CONVERT(Comm, MPI_Comm)
CONVERT(Type, MPI_Datatype)
CONVERT(Group, MPI_Group)
CONVERT(Request, MPI_Request)
CONVERT(Info, MPI_Info)
CONVERT(Win, MPI_Win)
CONVERT(File, MPI_File)
CONVERT(Message, MPI_Message)
CONVERT(Op, MPI_Op)
CONVERT(Errhandler, MPI_Errhandler)
