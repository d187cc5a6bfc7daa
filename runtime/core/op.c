/* Reduction operations on predefined types: inout[i] = in[i] op inout[i].
 * Which (op, type) pairs are defined follows MPI-3.1 section 5.9.2. */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <wchar.h>

#include "core.h"

typedef struct { float v; int i; } float_int;
typedef struct { double v; int i; } double_int;
typedef struct { long v; int i; } long_int;
typedef struct { int v; int i; } int_int;
typedef struct { short v; int i; } short_int;
typedef struct { long double v; int i; } long_double_int;
typedef _Complex float __attribute__((mode(TC))) complex128;

enum { K_INT, K_FLOAT, K_COMPLEX, K_BOOL, K_BYTE, K_PAIR, K_NONE };

/* The class of each predefined type, by its index in skn_dt_predefined. */
static int type_class(int t) {
  switch (t) {
    case 1: case 2: case 3: case 5: case 6: case 7: case 8: case 9: case 10: case 11: case 12: case 13:
    case 18: case 19: case 20: case 21: case 22: case 23: case 24: case 25: case 26: case 27: case 28:
    case 45: case 54: case 55: case 56: case 57: case 62:
      return K_INT;
    case 14: case 15: case 16: case 46: case 47: case 58: case 59: case 60:
      return K_FLOAT;
    case 29: case 30: case 31: case 32: case 41: case 42: case 43: case 49: case 50: case 61: case 63: case 64:
      return K_COMPLEX;
    case 17: case 40: case 48:
      return K_BOOL;
    case 4:
      return K_BYTE;
    case 34: case 35: case 36: case 37: case 38: case 39: case 51: case 52: case 53:
      return K_PAIR;
    default:
      return K_NONE;
  }
}

bool skn_op_defined(int op, int t) {
  int k = type_class(t);
  switch (op) {
    case 1: case 2: return k == K_INT || k == K_FLOAT;                  /* MAX, MIN */
    case 3: case 4: return k == K_INT || k == K_FLOAT || k == K_COMPLEX; /* SUM, PROD */
    case 5: case 7: case 9: return k == K_INT || k == K_BOOL;            /* LAND, LOR, LXOR */
    case 6: case 8: case 10: return k == K_INT || k == K_BYTE;           /* BAND, BOR, BXOR */
    case 11: case 12: return k == K_PAIR;                                /* MINLOC, MAXLOC */
    case 13: case 14: return true;                                       /* REPLACE, NO_OP */
    default: return false;
  }
}

#define LOOP(T, EXPR)                                  \
  do {                                                 \
    const T *a = (const T *)in;                        \
    T *b = (T *)inout;                                 \
    for (size_t i = 0; i < n; i++) b[i] = (T)(EXPR);   \
  } while (0)

#define ARITH(T)                                                     \
  switch (op) {                                                      \
    case 1: LOOP(T, a[i] > b[i] ? a[i] : b[i]); return;              \
    case 2: LOOP(T, a[i] < b[i] ? a[i] : b[i]); return;              \
    case 3: LOOP(T, a[i] + b[i]); return;                            \
    case 4: LOOP(T, a[i] * b[i]); return;                            \
    case 5: LOOP(T, (a[i] != 0) && (b[i] != 0)); return;             \
    case 7: LOOP(T, (a[i] != 0) || (b[i] != 0)); return;             \
    case 9: LOOP(T, (a[i] != 0) != (b[i] != 0)); return;             \
  }
#define BITS(T)                                                      \
  switch (op) {                                                      \
    case 6: LOOP(T, a[i] & b[i]); return;                            \
    case 8: LOOP(T, a[i] | b[i]); return;                            \
    case 10: LOOP(T, a[i] ^ b[i]); return;                           \
  }
/* Integer SUM and PROD wrap around (two's complement) instead of being undefined on
 * overflow, as users of MPI_SUM on counters expect; the builtins store the wrapped result. */
#define WRAP(T, OVF)                                                 \
  do {                                                               \
    const T *a = (const T *)in;                                      \
    T *b = (T *)inout;                                               \
    for (size_t i = 0; i < n; i++) (void)OVF(a[i], b[i], &b[i]);     \
  } while (0)
#define WRAPPING(T)                                                  \
  switch (op) {                                                      \
    case 3: WRAP(T, __builtin_add_overflow); return;                 \
    case 4: WRAP(T, __builtin_mul_overflow); return;                 \
  }
#define INT(T) WRAPPING(T) ARITH(T) BITS(T) return
#define LOGIC(T)                                                     \
  switch (op) {                                                      \
    case 5: LOOP(T, a[i] && b[i]); return;                           \
    case 7: LOOP(T, a[i] || b[i]); return;                           \
    case 9: LOOP(T, a[i] != b[i]); return;                           \
  }                                                                  \
  return
#define FLT(T) ARITH(T) return
#define CPX(T)                                                       \
  switch (op) {                                                      \
    case 3: LOOP(T, a[i] + b[i]); return;                            \
    case 4: LOOP(T, a[i] * b[i]); return;                            \
  }                                                                  \
  return
/* MINLOC/MAXLOC: on equal values the smaller index wins. */
#define PAIR(T)                                                                      \
  do {                                                                               \
    const T *a = (const T *)in;                                                      \
    T *b = (T *)inout;                                                               \
    for (size_t i = 0; i < n; i++) {                                                 \
      bool take = op == 11 ? (a[i].v < b[i].v) : (a[i].v > b[i].v);                  \
      if (take || (a[i].v == b[i].v && a[i].i < b[i].i)) b[i] = a[i];                \
    }                                                                                \
    return;                                                                          \
  } while (0)

typedef struct { int v; int i; } int2;
typedef struct { float v; float i; } real2;
typedef struct { double v; double i; } double2;

void skn_op_apply(int op, int t, const void *in, void *inout, size_t n) {
  if (op == 13) { /* REPLACE */
    __builtin_memcpy(inout, in, n * skn_dt_predefined[t].size);
    return;
  }
  if (op == 14) return; /* NO_OP */
  switch (t) {
    case 1: INT(char);
    case 2: INT(signed char);
    case 3: case 4: case 22: INT(unsigned char);
    case 5: INT(wchar_t);
    case 6: case 19: case 55: INT(short);
    case 7: case 23: INT(unsigned short);
    case 8: case 20: case 45: case 56: INT(int);
    case 9: case 24: INT(unsigned);
    case 10: case 26: INT(long);
    case 11: INT(unsigned long);
    case 12: case 21: case 27: case 28: case 57: INT(long long);
    case 13: case 25: INT(unsigned long long);
    case 18: case 54: INT(int8_t);
    case 14: case 46: case 58: FLT(float);
    case 15: case 47: case 59: FLT(double);
    case 16: FLT(long double);
    case 60: FLT(__float128);
    case 61: CPX(complex128);
    case 62: INT(__int128);
    case 17: case 40: LOGIC(_Bool);
    case 48: INT(int); /* Fortran LOGICAL as int */
    case 29: case 30: case 41: case 49: case 63: CPX(float _Complex);
    case 31: case 42: case 50: case 64: CPX(double _Complex);
    case 32: case 43: CPX(long double _Complex);
    case 34: PAIR(float_int);
    case 35: PAIR(double_int);
    case 36: PAIR(long_int);
    case 37: case 51: PAIR(int2);
    case 38: PAIR(short_int);
    case 39: PAIR(long_double_int);
    case 52: PAIR(real2);
    case 53: PAIR(double2);
    default: return;
  }
}
