/* Legacy-style program state: globals declared here, defined in main.c and solver.c. */
#ifndef STATE_H
#define STATE_H
#include <skein_privatize.h>

#define N 256
struct params { int rank, size, nsteps; double scale; };
union bits { double d; unsigned long long u; };

extern struct params params;       /* main.c */
extern int ticks;                  /* main.c */
extern double grid[N];             /* solver.c, in libsolver.a */
extern int solver_iters;           /* solver.c */
extern union bits last_bits;       /* solver.c */
extern int *cursor;                /* main.c: points into grid-like storage */
extern SKEIN_SHARED int shared_hits; /* main.c: one copy for all ranks */
int common_steps;                  /* defined here, in every file (a -fcommon legacy habit) */

#define NSTEPS (params.nsteps)
#define TICK() (ticks++)
#define MYRANK params.rank

void solver_step(int step);
double solver_sum(void);
int solver_calls(void);
#endif
