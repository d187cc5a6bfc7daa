/* Support of the generated Fortran glue (fortran_glue.c, from gen_fortran.py): how
 * Fortran's sentinels and strings become C's. The sentinels are COMMON blocks that mpif.h
 * and the mpi module declare and libskein defines (fortran_special.c); a Fortran program
 * passes their address, which the glue compares. Their names start with skn_, so
 * mpifort -fprivatize leaves them shared by all ranks. */
#ifndef SKEIN_FORTRAN_GLUE_H
#define SKEIN_FORTRAN_GLUE_H
#include <stddef.h>

#include "mpi.h"

#define SKN_FEXPORT __attribute__((visibility("default")))
/* Fortran INTEGERs in MPI_STATUS_SIZE (mpif.h) */
#define SKN_F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
_Static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "MPI_Status is not a whole number of INTEGERs");

/* COMMON /skn_mpi_.../ of mpif.h (gfortran appends an underscore) */
extern SKN_FEXPORT MPI_Fint skn_mpi_bottom_, skn_mpi_in_place_;
extern SKN_FEXPORT MPI_Fint skn_mpi_status_ignore_[], skn_mpi_statuses_ignore_[], skn_mpi_errcodes_ignore_[];
extern SKN_FEXPORT MPI_Fint skn_mpi_unweighted_[], skn_mpi_weights_empty_[];
extern SKN_FEXPORT char skn_mpi_argv_null_[], skn_mpi_argvs_null_[];

/* Sentinels are rare: the tests are branches (one compare with the GOT entry each), and
 * each argument is compared only with the sentinels it may be (gen_fortran.py: MPI_IN_PLACE
 * where MPI-3.1 allows it, MPI_STATUSES_IGNORE for arrays of statuses).
 * MPI_BOTTOM is tested on two buffers in the collectives; GCC then loads its address into a
 * register once and compares twice, one instruction more than a compare with the GOT entry
 * each (mpi_allreduce_: 17 instead of 16; with the caller's 4 for the 7th argument, over
 * issue 15's 20). So in the glue of a call with two or more buffers (gen_fortran.py) the
 * test is, on x86-64, that compare in an asm goto, which GCC cannot merge. Not everywhere:
 * GCC does not duplicate an asm goto, and duplicating the MPI_BOTTOM test is how it keeps
 * MPI_Recv_f08 with MPI_STATUS_IGNORE at 5 instructions of tests instead of 6. */
static inline void *skn_fbottom(void *b) { return __builtin_expect(b == (void *)&skn_mpi_bottom_, 0) ? MPI_BOTTOM : b; }
#if defined(__x86_64__) && defined(__GNUC__)
static inline void *skn_fbottom2(void *b) {
  __asm__ goto("cmpq skn_mpi_bottom_@GOTPCREL(%%rip), %0\n\tje %l[bottom]" : : "r"(b) : "cc" : bottom);
  return b;
bottom:
  __attribute__((cold));
  return MPI_BOTTOM;
}
#else
#define skn_fbottom2 skn_fbottom
#endif
static inline void *skn_fbuf2(void *b) {
  if (__builtin_expect(b == (void *)&skn_mpi_in_place_, 0)) return MPI_IN_PLACE;
  return skn_fbottom2(b);
}
static inline void *skn_fbuf(void *b) {
  if (__builtin_expect(b == (void *)&skn_mpi_in_place_, 0)) return MPI_IN_PLACE;
  return skn_fbottom(b);
}
/* (MPI_STATUS_IGNORE is common in hot loops: no hint, the branch goes either way) */
static inline MPI_Status *skn_fstatus(MPI_Status *s) {
  return (void *)s == (void *)skn_mpi_status_ignore_ ? MPI_STATUS_IGNORE : s;
}
static inline MPI_Status *skn_fstatuses(MPI_Status *s) {
  return __builtin_expect((void *)s == (void *)skn_mpi_statuses_ignore_, 0) ? MPI_STATUSES_IGNORE : s;
}
static inline int *skn_ferrcodes(int *e) { return (void *)e == (void *)skn_mpi_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : e; }
static inline int *skn_fweights(int *w) {
  if ((void *)w == (void *)skn_mpi_unweighted_) return MPI_UNWEIGHTED;
  if ((void *)w == (void *)skn_mpi_weights_empty_) return MPI_WEIGHTS_EMPTY;
  return w;
}
/* An attribute value or extra state: Fortran passes an INTEGER(KIND=MPI_ADDRESS_KIND) by
 * reference, C takes the value as a pointer. */
static inline void *skn_fattr(void *p) { return (void *)*(MPI_Aint *)p; }

/* Request indices (MPI_WAITANY ...; functions.txt's findex): C's are 0-based, Fortran's
 * 1-based; MPI_UNDEFINED (negative) stays, and so does what C did not write (an argument
 * error): the glue hands C a temporary holding SKN_FINDEX_UNSET. An array of indices is
 * valid when the call succeeded or reported MPI_ERR_IN_STATUS, and then holds n of them
 * (MPI_UNDEFINED: none). */
#define SKN_FINDEX_UNSET (-2147483647 - 1)
static inline void skn_findex_out(int c, MPI_Fint *f) {
  if (c != SKN_FINDEX_UNSET) *f = c >= 0 ? c + 1 : c;
}
static inline void skn_findices_out(int rc, int n, MPI_Fint *idx) {
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return;
  for (int i = 0; i < n; i++)
    if (idx[i] >= 0) idx[i]++;
}
/* MPI-1's default INTEGER displacements and extents (functions.txt's fint): an array
 * widened for C (free it; NULL when n <= 0), a result narrowed for Fortran (MPI_ERR_ARG if
 * it does not fit, as MPICH's MPI_ADDRESS reports). */
MPI_Aint *skn_faints(const MPI_Fint *a, int n) __attribute__((visibility("hidden")));
static inline int skn_fint_out(MPI_Fint *dst, MPI_Aint v) {
  *dst = (MPI_Fint)v;
  return (MPI_Aint)*dst == v ? MPI_SUCCESS : MPI_ERR_ARG;
}

/* CHARACTER arguments: a C copy without the trailing blanks (free it), a C buffer for an
 * output of len characters into which C writes up to max, and its copy back, blank-padded
 * (frees the buffer). */
char *skn_fstr_in(const char *s, size_t len) __attribute__((visibility("hidden")));
/* (leading blanks dropped too: info keys and values, functions.txt's ftrim) */
char *skn_fstr_in_trim(const char *s, size_t len) __attribute__((visibility("hidden")));
char *skn_fstr_buf(size_t len, long max) __attribute__((visibility("hidden")));
void skn_fstr_out(char *dst, size_t len, char *buf) __attribute__((visibility("hidden")));
#endif
