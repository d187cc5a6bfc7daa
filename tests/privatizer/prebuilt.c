/* A "prebuilt" library compiled without the privatizer: report mode lists its mutable
 * globals with nm. */
int lib_calls;
static double lib_cache[16];
double lib_scale = 2.0;
const int lib_table[2] = {1, 2};
double lib_use(int i) { lib_calls++; lib_cache[i & 15] += 1; return lib_cache[i & 15] * lib_scale + lib_table[i & 1]; }
