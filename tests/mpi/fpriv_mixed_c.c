/* fpriv_mixed_c.c - the C part of fpriv_mixed: globals of its own (privatized by
 * mpicc -fprivatize) and the Fortran COMMON /fcshared/ (BIND(C)), per rank on both sides. */
struct fcshared {
  double fb;
  int fa;
};
extern struct fcshared fcshared;
static int c_calls;
int c_value = 5;

int cmix_touch(int r);
int cmix_touch(int r) {
  c_calls++;
  c_value = 100 + r;
  fcshared.fb = 0.5 * r;
  return fcshared.fa; /* written by the Fortran side */
}
int cmix_calls(void);
int cmix_calls(void) { return c_calls * 1000 + c_value; }
