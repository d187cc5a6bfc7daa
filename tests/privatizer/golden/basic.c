/* Golden test: C globals of every kind (see basic.c.expected). */
#include <stddef.h>
#include <string.h>

extern int declared_elsewhere;          /* extern: uses rewritten, no definition here */
int counter;                            /* zero: skn_pbss */
int answer = 42;                        /* initialized: skn_pdata */
static double grid[4][4] = {{1.0}};
static long huge[1 << 20];              /* zero: skn_pbss, costs nothing in the binary */
struct point { int x, y; } origin = {0, 0}, corner = {3, 4};
union u { int i; float f; } pun;
int *cursor = &counter;                 /* initializer takes an address: per-rank hook */
static int *table[] = {&answer, &counter, NULL};
const int limits[2] = {1, 2};           /* const: left alone */
static const char *const names[] = {"a", "b"}; /* const: left alone */
int (*handler)(int) = NULL;             /* function pointer */
#define BUMP(x) ((x)++)
#define COUNTER counter

int step(int n) {
  static int calls;                     /* static local */
  static int last = -1;
  int local = n;                        /* automatic: untouched */
  calls++;
  BUMP(counter);
  COUNTER += n;
  last = n;
  for (int i = 0; i < 4; i++) grid[i][i] += local;
  huge[n] = n + declared_elsewhere;
  corner.x = pun.i;
  if (cursor == &counter) *table[0] += 1;
  return calls + last + limits[1] + (int)strlen(names[0]) + (int)sizeof(grid) + (handler ? handler(n) : 0);
}
