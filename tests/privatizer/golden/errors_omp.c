/* OpenMP cases (checked with -fopenmp): a privatized global in a clause is an error; a
 * threadprivate global is per rank and per thread. */
double total;
int counter;
#pragma omp threadprivate(counter)

void sum(const double *v, int n) {
  #pragma omp parallel for reduction(+:total)  /* expected-error {{in an OpenMP clause}} */
  for (int i = 0; i < n; i++) total += v[i];
  #pragma omp parallel
  counter++;
}
