/* fbind_f08_link_c.c - profiling interposers of mpi_f08's link names (MPI-3.1 17.1.5),
 * written in C for fbind_f08_link.f90: MPI_Send_f08 and MPI_Comm_set_name_f08 count the
 * calls of each world rank (ranks are threads of one process) and forward to PMPI_X_f08.
 * The signatures are those of Skein's BIND(C) interfaces (docs/user-guide.md, "Fortran"):
 * INTENT(IN) scalars and handles by value, CHARACTER(*) as a descriptor, ierror NULL when
 * the caller omits it. */
#include <ISO_Fortran_binding.h>
#include <mpi.h>
#include <string.h>

void PMPI_Send_f08(const void *buf, MPI_Fint count, MPI_Fint datatype, MPI_Fint dest, MPI_Fint tag, MPI_Fint comm,
                   MPI_Fint *ierror);
void PMPI_Comm_set_name_f08(MPI_Fint comm, CFI_cdesc_t *name, MPI_Fint *ierror);
void MPI_Send_f08(const void *buf, MPI_Fint count, MPI_Fint datatype, MPI_Fint dest, MPI_Fint tag, MPI_Fint comm,
                  MPI_Fint *ierror);
void MPI_Comm_set_name_f08(MPI_Fint comm, CFI_cdesc_t *name, MPI_Fint *ierror);
int flink_sends(void);
int flink_names(void);
int flink_last_count(void);

static int sends[4096], names[4096], last_count[4096];

static int me(void) {
  int r = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r % 4096;
}

void MPI_Send_f08(const void *buf, MPI_Fint count, MPI_Fint datatype, MPI_Fint dest, MPI_Fint tag, MPI_Fint comm,
                  MPI_Fint *ierror) {
  sends[me()]++;
  last_count[me()] = count;
  PMPI_Send_f08(buf, count, datatype, dest, tag, comm, ierror);
}

/* counts only names that arrive as a Fortran descriptor of the expected length */
void MPI_Comm_set_name_f08(MPI_Fint comm, CFI_cdesc_t *name, MPI_Fint *ierror) {
  if (name->elem_len == 9 && memcmp(name->base_addr, "link-test", 9) == 0) names[me()]++;
  PMPI_Comm_set_name_f08(comm, name, ierror);
}

int flink_sends(void) { return sends[me()]; }
int flink_names(void) { return names[me()]; }
int flink_last_count(void) { return last_count[me()]; }
