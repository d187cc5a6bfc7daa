/* fbind_f08_link_c.c - profiling interposers of mpi_f08's link names (MPI-3.1 17.1.5),
 * written in C for fbind_f08_link.f90: MPI_Send_f08 and MPI_Comm_set_name_f08 count the
 * calls of each world rank (ranks are threads of one process) and forward to PMPI_X_f08;
 * so do MPI_Op_create_f08 and MPI_Comm_create_keyval_f08, which take Fortran procedures
 * (as C function pointers: TYPE(C_FUNPTR), VALUE).
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
void PMPI_Op_create_f08(MPI_User_function *fn, const MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror);
void MPI_Op_create_f08(MPI_User_function *fn, const MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror);
void PMPI_Comm_create_keyval_f08(void *copy, void *del, MPI_Fint *keyval, MPI_Aint extra, MPI_Fint *ierror);
void MPI_Comm_create_keyval_f08(void *copy, void *del, MPI_Fint *keyval, MPI_Aint extra, MPI_Fint *ierror);
int flink_ops(void);
int flink_keyvals(void);
MPI_Aint flink_last_extra(void);
int flink_sends(void);
int flink_names(void);
int flink_last_count(void);

static int sends[4096], names[4096], last_count[4096], ops[4096], keyvals[4096];
static MPI_Aint last_extra[4096];

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

void MPI_Op_create_f08(MPI_User_function *fn, const MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror) {
  ops[me()]++;
  PMPI_Op_create_f08(fn, commute, op, ierror);
}

void MPI_Comm_create_keyval_f08(void *copy, void *del, MPI_Fint *keyval, MPI_Aint extra, MPI_Fint *ierror) {
  keyvals[me()]++;
  last_extra[me()] = extra;
  PMPI_Comm_create_keyval_f08(copy, del, keyval, extra, ierror);
}

int flink_ops(void) { return ops[me()]; }
int flink_keyvals(void) { return keyvals[me()]; }
MPI_Aint flink_last_extra(void) { return last_extra[me()]; }
