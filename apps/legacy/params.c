#include <stdlib.h>
#include "heat.h"

double alpha = 0.2;
int nsteps = 200;

void read_params(int argc, char **argv) {
  if (argc > 1) nsteps = atoi(argv[1]);
  if (argc > 2) alpha = atof(argv[2]);
}
