/* An stb-style single-header library: declarations for everyone, and under
 * MYLIB_IMPLEMENTATION (defined by exactly one source) the definitions, including mutable
 * globals. The privatizer must make them per rank without any edit to this header. */
#ifndef MYLIB_H
#define MYLIB_H
extern int mylib_compression_level;
void mylib_set_level(int level);
int mylib_compress(int x);
int mylib_calls(void);
#endif

#ifdef MYLIB_IMPLEMENTATION
#ifndef MYLIB_IMPLEMENTED
#define MYLIB_IMPLEMENTED
int mylib_compression_level = 8;   /* external, initialized */
static int mylib_call_count;       /* internal, zero */
char mylib_last_error[64];         /* external array */
static const char *mylib_name = "mylib";

void mylib_set_level(int level) { mylib_compression_level = level; }
int mylib_compress(int x) {
  static int history;              /* static local of a header function */
  mylib_call_count++;
  history += x;
  mylib_last_error[0] = (char)('a' + mylib_compression_level % 26);
  return x * mylib_compression_level + history * 0 + (mylib_name[0] == 'm');
}
int mylib_calls(void) { return mylib_call_count; }
#endif
#endif
