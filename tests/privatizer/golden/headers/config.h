/* included from util.h: no globals, still redirected to its rewritten copy */
#define LIMIT 1000
