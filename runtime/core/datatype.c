/* Datatypes: the predefined table and the copy engine between typed layouts.
 * Every layout is a sequence of contiguous blocks; copying walks the source and the
 * destination block lists side by side, so no layout is ever packed through a
 * temporary buffer. */
#include <complex.h>
#include <stdbool.h>
#include <string.h>
#include <wchar.h>

#include "core.h"

typedef struct { float v; int i; } float_int;
typedef struct { double v; int i; } double_int;
typedef struct { long v; int i; } long_int;
typedef struct { short v; int i; } short_int;
typedef struct { long double v; int i; } long_double_int;

static const skn_block one_block[] = {{0, 0}}; /* len unused: contig types */
static const skn_block b_double_int[] = {{0, offsetof(double_int, i) + sizeof(int)}};
static const skn_block b_long_int[] = {{0, offsetof(long_int, i) + sizeof(int)}};
static const skn_block b_short_int[] = {{0, sizeof(short)}, {offsetof(short_int, i), sizeof(int)}};
static const skn_block b_long_double_int[] = {{0, offsetof(long_double_int, i) + sizeof(int)}};

#define BASIC(nm, T) {sizeof(T), 0, sizeof(T), 0, sizeof(T), true, 1, one_block, sizeof(T), nm}
#define PAIR_CONTIG(nm, S) {sizeof(S), 0, sizeof(S), 0, sizeof(S), true, 1, one_block, 0, nm}
#define PAIR(nm, S, B, SZ) \
  {SZ, 0, sizeof(S), 0, sizeof(S), false, (int)(sizeof B / sizeof B[0]), B, 0, nm}

/* Same order as the SKN_DT indexes in mpi.h. */
const skn_dtype skn_dt_predefined[SKN_DT_PREDEFINED_COUNT] = {
    [0] = {0, 0, 0, 0, 0, true, 0, one_block, 0, "MPI_DATATYPE_NULL"},
    [1] = BASIC("MPI_CHAR", char),
    [2] = BASIC("MPI_SIGNED_CHAR", signed char),
    [3] = BASIC("MPI_UNSIGNED_CHAR", unsigned char),
    [4] = BASIC("MPI_BYTE", unsigned char),
    [5] = BASIC("MPI_WCHAR", wchar_t),
    [6] = BASIC("MPI_SHORT", short),
    [7] = BASIC("MPI_UNSIGNED_SHORT", unsigned short),
    [8] = BASIC("MPI_INT", int),
    [9] = BASIC("MPI_UNSIGNED", unsigned),
    [10] = BASIC("MPI_LONG", long),
    [11] = BASIC("MPI_UNSIGNED_LONG", unsigned long),
    [12] = BASIC("MPI_LONG_LONG_INT", long long),
    [13] = BASIC("MPI_UNSIGNED_LONG_LONG", unsigned long long),
    [14] = BASIC("MPI_FLOAT", float),
    [15] = BASIC("MPI_DOUBLE", double),
    [16] = BASIC("MPI_LONG_DOUBLE", long double),
    [17] = BASIC("MPI_C_BOOL", _Bool),
    [18] = BASIC("MPI_INT8_T", int8_t),
    [19] = BASIC("MPI_INT16_T", int16_t),
    [20] = BASIC("MPI_INT32_T", int32_t),
    [21] = BASIC("MPI_INT64_T", int64_t),
    [22] = BASIC("MPI_UINT8_T", uint8_t),
    [23] = BASIC("MPI_UINT16_T", uint16_t),
    [24] = BASIC("MPI_UINT32_T", uint32_t),
    [25] = BASIC("MPI_UINT64_T", uint64_t),
    [26] = BASIC("MPI_AINT", MPI_Aint),
    [27] = BASIC("MPI_OFFSET", MPI_Offset),
    [28] = BASIC("MPI_COUNT", MPI_Count),
    [29] = BASIC("MPI_C_COMPLEX", float _Complex),
    [30] = BASIC("MPI_C_FLOAT_COMPLEX", float _Complex),
    [31] = BASIC("MPI_C_DOUBLE_COMPLEX", double _Complex),
    [32] = BASIC("MPI_C_LONG_DOUBLE_COMPLEX", long double _Complex),
    [33] = BASIC("MPI_PACKED", unsigned char),
    [34] = PAIR_CONTIG("MPI_FLOAT_INT", float_int),
    [35] = PAIR("MPI_DOUBLE_INT", double_int, b_double_int, sizeof(double) + sizeof(int)),
    [36] = PAIR("MPI_LONG_INT", long_int, b_long_int, sizeof(long) + sizeof(int)),
    [37] = {2 * sizeof(int), 0, 2 * sizeof(int), 0, 2 * sizeof(int), true, 1, one_block, sizeof(int), "MPI_2INT"},
    [38] = PAIR("MPI_SHORT_INT", short_int, b_short_int, sizeof(short) + sizeof(int)),
    [39] = PAIR("MPI_LONG_DOUBLE_INT", long_double_int, b_long_double_int, sizeof(long double) + sizeof(int)),
    [40] = BASIC("MPI_CXX_BOOL", _Bool),
    [41] = BASIC("MPI_CXX_FLOAT_COMPLEX", float _Complex),
    [42] = BASIC("MPI_CXX_DOUBLE_COMPLEX", double _Complex),
    [43] = BASIC("MPI_CXX_LONG_DOUBLE_COMPLEX", long double _Complex),
    [44] = BASIC("MPI_CHARACTER", char),
    [45] = BASIC("MPI_INTEGER", int),
    [46] = BASIC("MPI_REAL", float),
    [47] = BASIC("MPI_DOUBLE_PRECISION", double),
    [48] = BASIC("MPI_LOGICAL", int),
    [49] = BASIC("MPI_COMPLEX", float _Complex),
    [50] = BASIC("MPI_DOUBLE_COMPLEX", double _Complex),
    [51] = {2 * sizeof(int), 0, 2 * sizeof(int), 0, 2 * sizeof(int), true, 1, one_block, sizeof(int), "MPI_2INTEGER"},
    [52] = {2 * sizeof(float), 0, 2 * sizeof(float), 0, 2 * sizeof(float), true, 1, one_block, sizeof(float), "MPI_2REAL"},
    [53] = {2 * sizeof(double), 0, 2 * sizeof(double), 0, 2 * sizeof(double), true, 1, one_block, sizeof(double), "MPI_2DOUBLE_PRECISION"},
    [54] = BASIC("MPI_INTEGER1", int8_t),
    [55] = BASIC("MPI_INTEGER2", int16_t),
    [56] = BASIC("MPI_INTEGER4", int32_t),
    [57] = BASIC("MPI_INTEGER8", int64_t),
    [58] = BASIC("MPI_REAL4", float),
    [59] = BASIC("MPI_REAL8", double),
};

/* A position in a typed layout. */
typedef struct cursor {
  char *base;
  const skn_dtype *dt;
  size_t elem, count;
  int blk;
  size_t in_blk;
} cursor;

static inline size_t blk_len(const skn_dtype *dt, int b) {
  return dt->contig ? dt->size : dt->blocks[b].len;
}
static inline ptrdiff_t blk_off(const skn_dtype *dt, int b) {
  return dt->contig ? 0 : dt->blocks[b].off;
}

/* Current contiguous piece: its address and how many bytes are left in it. */
static inline size_t cursor_piece(const cursor *c, char **p) {
  *p = c->base + (ptrdiff_t)c->elem * c->dt->extent + blk_off(c->dt, c->blk) + (ptrdiff_t)c->in_blk;
  return blk_len(c->dt, c->blk) - c->in_blk;
}

static inline void cursor_advance(cursor *c, size_t n) {
  c->in_blk += n;
  if (c->in_blk < blk_len(c->dt, c->blk)) return;
  c->in_blk = 0;
  int nb = c->dt->contig ? 1 : c->dt->nblocks;
  if (++c->blk == nb) {
    c->blk = 0;
    c->elem++;
  }
}

static size_t copy_general(cursor *d, cursor *s, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    char *dp, *sp;
    size_t dn = cursor_piece(d, &dp), sn = cursor_piece(s, &sp);
    size_t n = bytes - done;
    if (dn < n) n = dn;
    if (sn < n) n = sn;
    memcpy(dp, sp, n);
    cursor_advance(d, n);
    cursor_advance(s, n);
    done += n;
  }
  return done;
}

size_t skn_dt_copy(void *dst, size_t dcount, const skn_dtype *dt, const void *src, size_t scount,
                   const skn_dtype *st) {
  size_t sbytes = scount * st->size, dbytes = dcount * dt->size;
  size_t bytes = sbytes < dbytes ? sbytes : dbytes;
  if (bytes == 0) return 0;
  if (SKN_LIKELY(dt->contig && st->contig)) {
    memcpy(dst, src, bytes);
    return bytes;
  }
  cursor d = {(char *)dst, dt, 0, dcount, 0, 0};
  cursor s = {(char *)(uintptr_t)src, st, 0, scount, 0, 0};
  return copy_general(&d, &s, bytes);
}

static const skn_dtype packed_bytes = {1, 0, 1, 0, 1, true, 1, one_block, 1, "packed"};

void skn_dt_unpack(void *dst, const skn_dtype *dt, const void *packed, size_t bytes) {
  skn_dt_copy(dst, dt->size ? (bytes + dt->size - 1) / dt->size : 0, dt, packed, bytes, &packed_bytes);
}

void skn_dt_pack(void *packed, const void *src, const skn_dtype *st, size_t bytes) {
  skn_dt_copy(packed, bytes, &packed_bytes, src, st->size ? (bytes + st->size - 1) / st->size : 0, st);
}
