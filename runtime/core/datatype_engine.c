/* Datatypes: the predefined table, derived types (construction, flattening, lifetime),
 * the copy engine between typed layouts, type signatures and external32.
 *
 * Every layout is a sequence of contiguous blocks per element plus an extent. A derived
 * type is flattened once, at commit, into merged blocks in type map order; copying walks
 * the source and destination block lists side by side, so no layout is ever packed
 * through a temporary buffer, and packing is the same walk against a contiguous side.
 *
 * A type signature is kept per element as runs of basic-type classes (sig[0..nsig)
 * repeated sig_reps times), which is what Get_elements, the sender/receiver signature
 * check and external32 conversion need. */
#include <float.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "core.h"

/* ================================================================ predefined types */

typedef struct { float v; int i; } float_int;
typedef struct { double v; int i; } double_int;
typedef struct { long v; int i; } long_int;
typedef struct { short v; int i; } short_int;
typedef struct { long double v; int i; } long_double_int;
typedef _Complex float __attribute__((mode(TC))) skn_complex128;

static const skn_block one_block[] = {{0, 0}}; /* len unused: contig types */
static const skn_block b_double_int[] = {{0, offsetof(double_int, i) + sizeof(int)}};
static const skn_block b_long_int[] = {{0, offsetof(long_int, i) + sizeof(int)}};
static const skn_block b_short_int[] = {{0, sizeof(short)}, {offsetof(short_int, i), sizeof(int)}};
static const skn_block b_long_double_int[] = {{0, offsetof(long_double_int, i) + sizeof(int)}};

static const uint32_t code_size[SKN_SIG_NCODES] = {
    [SKN_SIG_BYTE] = 1, [SKN_SIG_I1] = 1, [SKN_SIG_I2] = 2, [SKN_SIG_I4] = 4, [SKN_SIG_I8] = 8,
    [SKN_SIG_F4] = 4, [SKN_SIG_F8] = 8, [SKN_SIG_LD] = sizeof(long double),
    [SKN_SIG_C8] = 8, [SKN_SIG_C16] = 16, [SKN_SIG_LDC] = 2 * sizeof(long double),
    [SKN_SIG_I16] = 16, [SKN_SIG_F16] = 16, [SKN_SIG_C32] = 32,
};

/* One element of each class. */
static const skn_sigrun sig_one[SKN_SIG_NCODES] = {
    [SKN_SIG_BYTE] = {1, SKN_SIG_BYTE, 1, SKN_X_NATIVE}, [SKN_SIG_I1] = {1, SKN_SIG_I1, 1, SKN_X_NATIVE},
    [SKN_SIG_I2] = {1, SKN_SIG_I2, 2, SKN_X_NATIVE},     [SKN_SIG_I4] = {1, SKN_SIG_I4, 4, SKN_X_NATIVE},
    [SKN_SIG_I8] = {1, SKN_SIG_I8, 8, SKN_X_NATIVE},     [SKN_SIG_F4] = {1, SKN_SIG_F4, 4, SKN_X_NATIVE},
    [SKN_SIG_F8] = {1, SKN_SIG_F8, 8, SKN_X_NATIVE},     [SKN_SIG_LD] = {1, SKN_SIG_LD, sizeof(long double), SKN_X_NATIVE},
    [SKN_SIG_C8] = {1, SKN_SIG_C8, 8, SKN_X_NATIVE},     [SKN_SIG_C16] = {1, SKN_SIG_C16, 16, SKN_X_NATIVE},
    [SKN_SIG_LDC] = {1, SKN_SIG_LDC, 2 * sizeof(long double), SKN_X_NATIVE},
    [SKN_SIG_I16] = {1, SKN_SIG_I16, 16, SKN_X_NATIVE}, [SKN_SIG_F16] = {1, SKN_SIG_F16, 16, SKN_X_NATIVE},
    [SKN_SIG_C32] = {1, SKN_SIG_C32, 32, SKN_X_NATIVE},
};
static const skn_sigrun sig_float_int[] = {{1, SKN_SIG_F4, 4, SKN_X_NATIVE}, {1, SKN_SIG_I4, 4, SKN_X_NATIVE}};
static const skn_sigrun sig_double_int[] = {{1, SKN_SIG_F8, 8, SKN_X_NATIVE}, {1, SKN_SIG_I4, 4, SKN_X_NATIVE}};
static const skn_sigrun sig_long_int[] = {{1, SKN_SIG_I8, 8, SKN_X_S4}, {1, SKN_SIG_I4, 4, SKN_X_NATIVE}};
static const skn_sigrun sig_long = {1, SKN_SIG_I8, 8, SKN_X_S4};
static const skn_sigrun sig_ulong = {1, SKN_SIG_I8, 8, SKN_X_U4};
static const skn_sigrun sig_wchar = {1, SKN_SIG_I4, 4, SKN_X_U2};
static const skn_sigrun sig_short_int[] = {{1, SKN_SIG_I2, 2, SKN_X_NATIVE}, {1, SKN_SIG_I4, 4, SKN_X_NATIVE}};
static const skn_sigrun sig_long_double_int[] = {{1, SKN_SIG_LD, sizeof(long double), SKN_X_NATIVE}, {1, SKN_SIG_I4, 4, SKN_X_NATIVE}};
static const skn_sigrun sig_2i4[] = {{2, SKN_SIG_I4, 4, SKN_X_NATIVE}};
static const skn_sigrun sig_2f4[] = {{2, SKN_SIG_F4, 4, SKN_X_NATIVE}};
static const skn_sigrun sig_2f8[] = {{2, SKN_SIG_F8, 8, SKN_X_NATIVE}};

/* the class of an integer type of `sz` bytes */
#define ICODE(sz) ((sz) == 1 ? SKN_SIG_I1 : (sz) == 2 ? SKN_SIG_I2 : (sz) == 4 ? SKN_SIG_I4 : SKN_SIG_I8)
#define FCODE(sz) ((sz) == 4 ? SKN_SIG_F4 : SKN_SIG_F8)

#define BASIC_S(nm, T, SIG, fl)                                                                      \
  {.size = sizeof(T), .lb = 0, .extent = sizeof(T), .true_lb = 0, .true_extent = sizeof(T),         \
   .contig = true, .nblocks = 1, .blocks = one_block, .basic_size = sizeof(T), .name = nm, .nsig = 1, \
   .sig = SIG, .sig_reps = 1, .nelems = 1, .flags = fl, .align = _Alignof(T),                        \
   .combiner = MPI_COMBINER_NAMED}
#define BASIC_C(nm, T, code, fl) BASIC_S(nm, T, &sig_one[code], fl)
#define BASIC(nm, T, code) BASIC_C(nm, T, code, 0)
#define INT(nm, T) BASIC(nm, T, ICODE(sizeof(T)))
#define PAIR_T(nm, S, B, NB, SZ, CONTIG, SIG, NSIG, BASIC_SIZE, TRUE_EXTENT)                         \
  {.size = SZ, .lb = 0, .extent = sizeof(S), .true_lb = 0, .true_extent = TRUE_EXTENT, .contig = CONTIG, \
   .nblocks = NB, .blocks = B, .basic_size = BASIC_SIZE, .name = nm, .nsig = NSIG, .sig = SIG,       \
   .sig_reps = 1, .nelems = 2, .flags = 0, .align = _Alignof(S), .combiner = MPI_COMBINER_NAMED}
/* value/index pairs: the true extent ends with the index (padding after it is not data) */
#define PAIR_CONTIG(nm, S, SIG) PAIR_T(nm, S, one_block, 1, sizeof(S), true, SIG, 2, 0, sizeof(S))
#define PAIR(nm, S, B, SZ, SIG) \
  PAIR_T(nm, S, B, (int)(sizeof B / sizeof B[0]), SZ, false, SIG, 2, 0, offsetof(S, i) + sizeof(int))
#define TWO(nm, T, SIG) PAIR_T(nm, T[2], one_block, 1, 2 * sizeof(T), true, SIG, 1, sizeof(T), 2 * sizeof(T))

/* Same order as the SKN_DT indexes in mpi.h. */
const skn_dtype skn_dt_predefined[SKN_DT_PREDEFINED_COUNT] = {
    [0] = {.contig = true, .blocks = one_block, .name = "MPI_DATATYPE_NULL", .sig_reps = 1, .align = 1,
           .combiner = MPI_COMBINER_NAMED},
    [1] = INT("MPI_CHAR", char),
    [2] = INT("MPI_SIGNED_CHAR", signed char),
    [3] = INT("MPI_UNSIGNED_CHAR", unsigned char),
    [4] = BASIC_C("MPI_BYTE", unsigned char, SKN_SIG_BYTE, SKN_DT_HAS_BYTE),
    [5] = BASIC_S("MPI_WCHAR", wchar_t, &sig_wchar, 0),
    [6] = INT("MPI_SHORT", short),
    [7] = INT("MPI_UNSIGNED_SHORT", unsigned short),
    [8] = INT("MPI_INT", int),
    [9] = INT("MPI_UNSIGNED", unsigned),
    [10] = BASIC_S("MPI_LONG", long, &sig_long, 0),
    [11] = BASIC_S("MPI_UNSIGNED_LONG", unsigned long, &sig_ulong, 0),
    [12] = INT("MPI_LONG_LONG_INT", long long),
    [13] = INT("MPI_UNSIGNED_LONG_LONG", unsigned long long),
    [14] = BASIC("MPI_FLOAT", float, SKN_SIG_F4),
    [15] = BASIC("MPI_DOUBLE", double, SKN_SIG_F8),
    [16] = BASIC("MPI_LONG_DOUBLE", long double, SKN_SIG_LD),
    [17] = INT("MPI_C_BOOL", _Bool),
    [18] = INT("MPI_INT8_T", int8_t),
    [19] = INT("MPI_INT16_T", int16_t),
    [20] = INT("MPI_INT32_T", int32_t),
    [21] = INT("MPI_INT64_T", int64_t),
    [22] = INT("MPI_UINT8_T", uint8_t),
    [23] = INT("MPI_UINT16_T", uint16_t),
    [24] = INT("MPI_UINT32_T", uint32_t),
    [25] = INT("MPI_UINT64_T", uint64_t),
    [26] = INT("MPI_AINT", MPI_Aint),
    [27] = INT("MPI_OFFSET", MPI_Offset),
    [28] = INT("MPI_COUNT", MPI_Count),
    [29] = BASIC("MPI_C_COMPLEX", float _Complex, SKN_SIG_C8),
    [30] = BASIC("MPI_C_FLOAT_COMPLEX", float _Complex, SKN_SIG_C8),
    [31] = BASIC("MPI_C_DOUBLE_COMPLEX", double _Complex, SKN_SIG_C16),
    [32] = BASIC("MPI_C_LONG_DOUBLE_COMPLEX", long double _Complex, SKN_SIG_LDC),
    [33] = BASIC_C("MPI_PACKED", unsigned char, SKN_SIG_BYTE, SKN_DT_HAS_BYTE),
    [34] = PAIR_CONTIG("MPI_FLOAT_INT", float_int, sig_float_int),
    [35] = PAIR("MPI_DOUBLE_INT", double_int, b_double_int, sizeof(double) + sizeof(int), sig_double_int),
    [36] = PAIR("MPI_LONG_INT", long_int, b_long_int, sizeof(long) + sizeof(int), sig_long_int),
    [37] = TWO("MPI_2INT", int, sig_2i4),
    [38] = PAIR("MPI_SHORT_INT", short_int, b_short_int, sizeof(short) + sizeof(int), sig_short_int),
    [39] = PAIR("MPI_LONG_DOUBLE_INT", long_double_int, b_long_double_int, sizeof(long double) + sizeof(int),
                sig_long_double_int),
    [40] = INT("MPI_CXX_BOOL", _Bool),
    [41] = BASIC("MPI_CXX_FLOAT_COMPLEX", float _Complex, SKN_SIG_C8),
    [42] = BASIC("MPI_CXX_DOUBLE_COMPLEX", double _Complex, SKN_SIG_C16),
    [43] = BASIC("MPI_CXX_LONG_DOUBLE_COMPLEX", long double _Complex, SKN_SIG_LDC),
    [44] = INT("MPI_CHARACTER", char),
    [45] = INT("MPI_INTEGER", int),
    [46] = BASIC("MPI_REAL", float, SKN_SIG_F4),
    [47] = BASIC("MPI_DOUBLE_PRECISION", double, SKN_SIG_F8),
    [48] = INT("MPI_LOGICAL", int),
    [49] = BASIC("MPI_COMPLEX", float _Complex, SKN_SIG_C8),
    [50] = BASIC("MPI_DOUBLE_COMPLEX", double _Complex, SKN_SIG_C16),
    [51] = TWO("MPI_2INTEGER", int, sig_2i4),
    [52] = TWO("MPI_2REAL", float, sig_2f4),
    [53] = TWO("MPI_2DOUBLE_PRECISION", double, sig_2f8),
    [54] = INT("MPI_INTEGER1", int8_t),
    [55] = INT("MPI_INTEGER2", int16_t),
    [56] = INT("MPI_INTEGER4", int32_t),
    [57] = INT("MPI_INTEGER8", int64_t),
    [58] = BASIC("MPI_REAL4", float, SKN_SIG_F4),
    [59] = BASIC("MPI_REAL8", double, SKN_SIG_F8),
    /* optional types (MPI-3.1 3.2.2, 17.2.5): gfortran's REAL(16) is IEEE binary128, as __float128 */
    [60] = BASIC("MPI_REAL16", __float128, SKN_SIG_F16),
    [61] = BASIC("MPI_COMPLEX32", skn_complex128, SKN_SIG_C32),
    [62] = BASIC("MPI_INTEGER16", __int128, SKN_SIG_I16),
    [63] = BASIC("MPI_COMPLEX8", float _Complex, SKN_SIG_C8),
    [64] = BASIC("MPI_COMPLEX16", double _Complex, SKN_SIG_C16),
};

_Static_assert(sizeof(float _Complex) == 8 && sizeof(double _Complex) == 16, "complex sizes");
_Static_assert(sizeof(wchar_t) == 4 && sizeof(long) == 8 && sizeof(MPI_Aint) == 8, "LP64 sizes (external32)");

/* ================================================================ copy engine */

/* A position in a typed layout. Addresses are computed as integers so that a NULL base
 * (MPI_BOTTOM) with absolute offsets is well defined. */
typedef struct cursor {
  uintptr_t base;
  const skn_block *blk;
  int nb;
  ptrdiff_t extent;
  size_t elem;
  int b;
  size_t in; /* bytes already done in block b */
  skn_block one;
} cursor;

/* Positions c at byte `skip` of the typed stream (c must not be copied afterwards). */
static void cursor_init(cursor *c, const void *buf, const skn_dtype *t, size_t skip) {
  c->base = (uintptr_t)buf;
  if (t->contig) {
    c->one.off = 0;
    c->one.len = t->size;
    c->blk = &c->one;
    c->nb = 1;
    c->extent = (ptrdiff_t)t->size;
  } else {
    c->blk = t->blocks;
    c->nb = t->nblocks;
    c->extent = t->extent;
  }
  c->elem = t->size ? skip / t->size : 0;
  size_t rem = t->size ? skip % t->size : 0;
  c->b = 0;
  while (c->b < c->nb && rem >= c->blk[c->b].len) rem -= c->blk[c->b++].len;
  if (c->b == c->nb) c->b = 0; /* only when rem == 0 and the type is empty */
  c->in = rem;
}

static inline size_t cursor_piece(const cursor *c, uintptr_t *p) {
  const skn_block *k = &c->blk[c->b];
  *p = c->base + (uintptr_t)((ptrdiff_t)c->elem * c->extent + k->off + (ptrdiff_t)c->in);
  return k->len - c->in;
}

static inline void cursor_advance(cursor *c, size_t n) {
  c->in += n;
  if (c->in < c->blk[c->b].len) return;
  c->in = 0;
  if (++c->b == c->nb) {
    c->b = 0;
    c->elem++;
  }
}

/* memcpy with the small sizes of basic types inline */
static inline void move(uintptr_t d, uintptr_t s, size_t n) {
  switch (n) {
  case 4: __builtin_memcpy((void *)d, (const void *)s, 4); return;
  case 8: __builtin_memcpy((void *)d, (const void *)s, 8); return;
  case 16: __builtin_memcpy((void *)d, (const void *)s, 16); return;
  default: memcpy((void *)d, (const void *)s, n);
  }
}

/* typed -> contiguous */
static void pack_from(uintptr_t out, cursor *s, size_t bytes) {
  while (bytes) {
    uintptr_t p;
    size_t n = cursor_piece(s, &p);
    if (n > bytes) n = bytes;
    move(out, p, n);
    out += n;
    bytes -= n;
    cursor_advance(s, n);
  }
}

/* contiguous -> typed */
static void unpack_into(cursor *d, uintptr_t in, size_t bytes) {
  while (bytes) {
    uintptr_t p;
    size_t n = cursor_piece(d, &p);
    if (n > bytes) n = bytes;
    move(p, in, n);
    in += n;
    bytes -= n;
    cursor_advance(d, n);
  }
}

static void copy_general(cursor *d, cursor *s, size_t bytes) {
  while (bytes) {
    uintptr_t dp, sp;
    size_t dn = cursor_piece(d, &dp), sn = cursor_piece(s, &sp);
    size_t n = bytes;
    if (dn < n) n = dn;
    if (sn < n) n = sn;
    move(dp, sp, n);
    cursor_advance(d, n);
    cursor_advance(s, n);
    bytes -= n;
  }
}

/* Whole elements, block by block, without a cursor. `to_typed` chooses the direction
 * between the packed stream at `packed` and the typed layout at `typed`. For regular
 * layouts the loop does not read the block list; the common block sizes are constants
 * the compiler can move in one instruction. */
static inline void regular_elems(uintptr_t packed, uintptr_t typed, const skn_dtype *t, size_t nelem, bool to_typed,
                                 size_t len) {
  const int nb = t->nblocks;
  const ptrdiff_t st = t->reg_stride, ext = t->extent;
  uintptr_t e = typed + (uintptr_t)t->blocks[0].off;
  for (size_t k = 0; k < nelem; k++, e += (uintptr_t)ext) {
    uintptr_t p = e;
    for (int b = 0; b < nb; b++, p += (uintptr_t)st, packed += len) {
      if (to_typed) memcpy((void *)p, (const void *)packed, len);
      else memcpy((void *)packed, (const void *)p, len);
    }
  }
}

static void whole_elems(uintptr_t packed, uintptr_t typed, const skn_dtype *t, size_t nelem, bool to_typed) {
  if (t->reg_len) {
    switch (t->reg_len) {
    case 4: regular_elems(packed, typed, t, nelem, to_typed, 4); return;
    case 8: regular_elems(packed, typed, t, nelem, to_typed, 8); return;
    case 16: regular_elems(packed, typed, t, nelem, to_typed, 16); return;
    default: break;
    }
  }
  const skn_block *bl = t->blocks;
  const int nb = t->nblocks;
  for (size_t k = 0; k < nelem; k++, typed += (uintptr_t)t->extent)
    for (int b = 0; b < nb; b++) {
      uintptr_t p = typed + (uintptr_t)bl[b].off;
      if (to_typed) move(p, packed, bl[b].len);
      else move(packed, p, bl[b].len);
      packed += bl[b].len;
    }
}

/* Both layouts regular with blocks of the same length: block to block. */
static inline void regular_pair(uintptr_t d, const skn_dtype *dt, uintptr_t s, const skn_dtype *st, size_t nblk,
                                size_t len) {
  uintptr_t de = d + (uintptr_t)dt->blocks[0].off, se = s + (uintptr_t)st->blocks[0].off, dp = de, sp = se;
  int db = 0, sb = 0;
  const int dnb = dt->nblocks, snb = st->nblocks;
  for (size_t i = 0; i < nblk; i++) {
    memcpy((void *)dp, (const void *)sp, len);
    if (++db == dnb) {
      db = 0;
      dp = de += (uintptr_t)dt->extent;
    } else {
      dp += (uintptr_t)dt->reg_stride;
    }
    if (++sb == snb) {
      sb = 0;
      sp = se += (uintptr_t)st->extent;
    } else {
      sp += (uintptr_t)st->reg_stride;
    }
  }
}

static void copy_regular(uintptr_t d, const skn_dtype *dt, uintptr_t s, const skn_dtype *st, size_t nblk) {
  switch (dt->reg_len) {
  case 4: regular_pair(d, dt, s, st, nblk, 4); break;
  case 8: regular_pair(d, dt, s, st, nblk, 8); break;
  case 16: regular_pair(d, dt, s, st, nblk, 16); break;
  default: regular_pair(d, dt, s, st, nblk, dt->reg_len); break;
  }
}

/* Both sides have the same blocks and extent: whole elements block by block. */
static size_t copy_same_layout(uintptr_t d, uintptr_t s, const skn_dtype *t, size_t bytes) {
  size_t whole = bytes / t->size;
  for (size_t e = 0; e < whole; e++) {
    uintptr_t eo = (uintptr_t)((ptrdiff_t)e * t->extent);
    for (int b = 0; b < t->nblocks; b++)
      move(d + eo + (uintptr_t)t->blocks[b].off, s + eo + (uintptr_t)t->blocks[b].off, t->blocks[b].len);
  }
  return whole * t->size;
}

/* The bytes [skip, skip + bytes) of a typed stream to or from a packed buffer. */
static void stream(uintptr_t packed, uintptr_t typed, const skn_dtype *t, size_t skip, size_t bytes, bool to_typed) {
  if (skip == 0 && bytes >= t->size) {
    size_t whole = bytes / t->size;
    whole_elems(packed, typed, t, whole, to_typed);
    skip = whole * t->size;
    packed += skip;
    bytes -= skip;
    if (!bytes) return;
  }
  cursor c;
  cursor_init(&c, (const void *)typed, t, skip);
  if (to_typed) unpack_into(&c, packed, bytes);
  else pack_from(packed, &c, bytes);
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
  if (dt->contig) {
    stream((uintptr_t)dst, (uintptr_t)src, st, 0, bytes, false);
    return bytes;
  }
  if (st->contig) {
    stream((uintptr_t)src, (uintptr_t)dst, dt, 0, bytes, true);
    return bytes;
  }
  size_t done = 0;
  if (dt->reg_len && dt->reg_len == st->reg_len) {
    size_t nblk = bytes / dt->reg_len;
    copy_regular((uintptr_t)dst, dt, (uintptr_t)src, st, nblk);
    done = nblk * dt->reg_len;
  } else if (dt->blocks == st->blocks && dt->extent == st->extent) {
    done = copy_same_layout((uintptr_t)dst, (uintptr_t)src, dt, bytes);
  }
  if (done == bytes) return bytes;
  cursor d, s;
  cursor_init(&d, dst, dt, done);
  cursor_init(&s, src, st, done);
  copy_general(&d, &s, bytes - done);
  return bytes;
}

void skn_dt_unpack_at(void *dst, const skn_dtype *dt, size_t skip, const void *packed, size_t bytes) {
  if (!bytes) return;
  if (dt->contig) {
    memcpy((char *)dst + skip, packed, bytes);
    return;
  }
  stream((uintptr_t)packed, (uintptr_t)dst, dt, skip, bytes, true);
}

void skn_dt_pack_at(void *packed, const void *src, const skn_dtype *st, size_t skip, size_t bytes) {
  if (!bytes) return;
  if (st->contig) {
    memcpy(packed, (const char *)src + skip, bytes);
    return;
  }
  stream((uintptr_t)packed, (uintptr_t)src, st, skip, bytes, false);
}

void skn_dt_unpack(void *dst, const skn_dtype *dt, const void *packed, size_t bytes) {
  skn_dt_unpack_at(dst, dt, 0, packed, bytes);
}

void skn_dt_pack(void *packed, const void *src, const skn_dtype *st, size_t bytes) {
  skn_dt_pack_at(packed, src, st, 0, bytes);
}

/* ================================================================ derived types */

struct skn_dt_args {
  int ni, na, nd;
  int *ints;
  ptrdiff_t *aints;
  skn_dtype **types;
};

struct skn_dt_flat {
  _Atomic(int) refs;
  int nblocks, nsig;
  size_t sig_reps;
  skn_block *blocks;
  skn_sigrun *sig;
};

/* Signatures longer than this (runs per element) are not kept. */
#define SIG_CAP (1 << 16)

static const char derived_name[] = "derived datatype";

/* One placement of a child type inside a type: n consecutive copies of `c` (at its
 * extent) from byte displacement `disp`. Every constructor is a sequence of runs. */
typedef struct visitor {
  void (*fn)(struct visitor *v, const skn_dtype *c, ptrdiff_t disp, size_t n);
  bool failed; /* overflow or out of memory */
} visitor;

static inline bool mul_ok(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r) { return !__builtin_mul_overflow(a, b, r); }
static inline bool add_ok(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r) { return !__builtin_add_overflow(a, b, r); }

/* Process coordinate and local index list of one darray dimension: *idx gets the global
 * indices this process owns, in increasing order. Returns the count, -1 on error. */
static ptrdiff_t darray_dim(int gsize, int distrib, int darg, int psize, int coord, ptrdiff_t *idx) {
  ptrdiff_t n = 0;
  if (distrib == MPI_DISTRIBUTE_NONE) {
    for (int i = 0; i < gsize; i++) idx[n++] = i;
  } else if (distrib == MPI_DISTRIBUTE_BLOCK) {
    ptrdiff_t b = darg == MPI_DISTRIBUTE_DFLT_DARG ? ((ptrdiff_t)gsize + psize - 1) / psize : darg;
    for (ptrdiff_t i = coord * b; i < (ptrdiff_t)(coord + 1) * b && i < gsize; i++) idx[n++] = i;
  } else { /* cyclic */
    ptrdiff_t b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    for (ptrdiff_t j = coord * b; j < gsize; j += b * psize)
      for (ptrdiff_t i = j; i < j + b && i < gsize; i++) idx[n++] = i;
  }
  return n;
}

/* Calls v->fn for each run of t, in type map order. */
static void for_each_run(const skn_dtype *t, visitor *v) {
  const struct skn_dt_args *a = t->args;
  const int *I = a->ints;
  const ptrdiff_t *A = a->aints;
  const skn_dtype *c = a->nd ? a->types[0] : NULL;
  ptrdiff_t ext = c ? c->extent : 0, d;
  switch (t->combiner) {
  case MPI_COMBINER_DUP:
  case MPI_COMBINER_RESIZED:
  case MPI_COMBINER_F90_REAL:
  case MPI_COMBINER_F90_COMPLEX:
  case MPI_COMBINER_F90_INTEGER:
    v->fn(v, c, 0, 1);
    return;
  case MPI_COMBINER_CONTIGUOUS:
    v->fn(v, c, 0, (size_t)I[0]);
    return;
  case MPI_COMBINER_VECTOR:
  case MPI_COMBINER_HVECTOR: {
    ptrdiff_t stride = t->combiner == MPI_COMBINER_VECTOR ? I[2] : A[0];
    if (t->combiner == MPI_COMBINER_VECTOR && !mul_ok(stride, ext, &stride)) break;
    for (int i = 0; i < I[0]; i++) {
      if (!mul_ok(i, stride, &d)) goto overflow;
      v->fn(v, c, d, (size_t)I[1]);
    }
    return;
  }
  case MPI_COMBINER_INDEXED:
    for (int i = 0; i < I[0]; i++) {
      if (!mul_ok(I[1 + I[0] + i], ext, &d)) goto overflow;
      v->fn(v, c, d, (size_t)I[1 + i]);
    }
    return;
  case MPI_COMBINER_HINDEXED:
    for (int i = 0; i < I[0]; i++) v->fn(v, c, A[i], (size_t)I[1 + i]);
    return;
  case MPI_COMBINER_INDEXED_BLOCK:
    for (int i = 0; i < I[0]; i++) {
      if (!mul_ok(I[2 + i], ext, &d)) goto overflow;
      v->fn(v, c, d, (size_t)I[1]);
    }
    return;
  case MPI_COMBINER_HINDEXED_BLOCK:
    for (int i = 0; i < I[0]; i++) v->fn(v, c, A[i], (size_t)I[1]);
    return;
  case MPI_COMBINER_STRUCT:
    for (int i = 0; i < I[0]; i++) v->fn(v, a->types[i], A[i], (size_t)I[1 + i]);
    return;
  case MPI_COMBINER_SUBARRAY:
  case MPI_COMBINER_DARRAY: {
    /* Both are n-dimensional: per dimension a sorted list of indices (in the full
     * array) and an element stride; the fastest dimension becomes runs. */
    bool sub = t->combiner == MPI_COMBINER_SUBARRAY;
    int nd = sub ? I[0] : I[2];
    const int *sizes = sub ? I + 1 : I + 3;
    int order = sub ? I[1 + 3 * nd] : I[3 + 4 * nd];
    ptrdiff_t *stride = calloc((size_t)nd, sizeof *stride);
    ptrdiff_t *cnt = calloc((size_t)nd, sizeof *cnt);
    ptrdiff_t **idx = calloc((size_t)nd, sizeof *idx);
    ptrdiff_t *pos = calloc((size_t)nd, sizeof *pos);
    bool ok = stride && cnt && idx && pos;
    /* dims[k] in loop order: slowest first */
    ptrdiff_t coordsz = 1;
    for (int k = 0; ok && k < nd; k++) {
      idx[k] = malloc((size_t)sizes[k] * sizeof **idx + 1);
      ok = idx[k] != NULL;
    }
    for (int k = nd - 1; ok && k >= 0; k--) { /* process coordinates: row-major */
      if (sub) {
        const int *subsizes = I + 1 + nd, *starts = I + 1 + 2 * nd;
        cnt[k] = subsizes[k];
        for (int i = 0; i < subsizes[k]; i++) idx[k][i] = starts[k] + i;
      } else {
        const int *distribs = I + 3 + nd, *dargs = I + 3 + 2 * nd, *psizes = I + 3 + 3 * nd;
        int coord = (int)((I[1] / coordsz) % psizes[k]);
        coordsz *= psizes[k];
        cnt[k] = darray_dim(sizes[k], distribs[k], dargs[k], psizes[k], coord, idx[k]);
      }
    }
    /* element strides in bytes, in array order */
    ptrdiff_t s = ext;
    for (int j = 0; ok && j < nd; j++) {
      int k = order == MPI_ORDER_C ? nd - 1 - j : j;
      stride[k] = s;
      ok = mul_ok(s, sizes[k], &s);
    }
    if (!ok) {
      v->failed = true;
    } else {
      int fast = order == MPI_ORDER_C ? nd - 1 : 0;
      bool empty = false;
      for (int k = 0; k < nd; k++) empty |= cnt[k] == 0;
      while (!empty) {
        ptrdiff_t base = 0;
        for (int k = 0; k < nd; k++)
          if (k != fast) base += idx[k][pos[k]] * stride[k];
        /* runs of consecutive indices along the fastest dimension */
        for (ptrdiff_t i = 0; i < cnt[fast];) {
          ptrdiff_t j = i + 1;
          while (j < cnt[fast] && idx[fast][j] == idx[fast][j - 1] + 1) j++;
          v->fn(v, c, base + idx[fast][i] * stride[fast], (size_t)(j - i));
          i = j;
        }
        /* next index tuple of the other dimensions, in type map order */
        int k;
        if (order == MPI_ORDER_C) {
          for (k = nd - 2; k >= 0; k--) {
            if (++pos[k] < cnt[k]) break;
            pos[k] = 0;
          }
        } else {
          for (k = 1; k < nd; k++) {
            if (++pos[k] < cnt[k]) break;
            pos[k] = 0;
          }
          if (k == nd) k = -1;
        }
        if (k < 0) break;
      }
    }
    for (int k = 0; idx && k < nd; k++) free(idx[k]);
    free(stride);
    free(cnt);
    free(idx);
    free(pos);
    return;
  }
  default:
    break;
  }
overflow:
  v->failed = true;
}

/* ---------------------------------------------------------------- scalars */

typedef struct scal_visitor {
  visitor v;
  bool any, anydata;
  ptrdiff_t lb, ub, tlb, tub;
  size_t size, nelems;
  uint32_t align, flags;
} scal_visitor;

static void scal_run(visitor *vv, const skn_dtype *c, ptrdiff_t disp, size_t n) {
  scal_visitor *v = (scal_visitor *)vv;
  if (n == 0) return;
  ptrdiff_t span, lo, hi;
  if (n > (size_t)PTRDIFF_MAX || !mul_ok((ptrdiff_t)n - 1, c->extent, &span)) goto overflow;
  ptrdiff_t lo_span = span < 0 ? span : 0, hi_span = span > 0 ? span : 0;
  if (!add_ok(disp, c->lb + lo_span, &lo) || !add_ok(disp, c->lb + c->extent + hi_span, &hi)) goto overflow;
  if (!v->any || lo < v->lb) v->lb = lo;
  if (!v->any || hi > v->ub) v->ub = hi;
  v->any = true;
  if (c->size > 0) {
    if (!add_ok(disp, c->true_lb + lo_span, &lo) || !add_ok(disp, c->true_lb + c->true_extent + hi_span, &hi))
      goto overflow;
    if (!v->anydata || lo < v->tlb) v->tlb = lo;
    if (!v->anydata || hi > v->tub) v->tub = hi;
    v->anydata = true;
  }
  size_t sz, ne;
  if (__builtin_mul_overflow(n, c->size, &sz) || __builtin_add_overflow(v->size, sz, &v->size) ||
      __builtin_mul_overflow(n, c->nelems, &ne) || __builtin_add_overflow(v->nelems, ne, &v->nelems))
    goto overflow;
  if (c->align > v->align) v->align = c->align;
  v->flags |= c->flags & (SKN_DT_STICKY | SKN_DT_HAS_BYTE);
  return;
overflow:
  vv->failed = true;
}

/* Whether count x blocklength copies of c could overflow: checked before enumerating
 * runs, so that absurd arguments fail at once instead of after 2^30 steps. */
static bool too_big(size_t count, size_t bl, const skn_dtype *c) {
  size_t n, bytes, span;
  size_t ext = (size_t)(c->extent < 0 ? -c->extent : c->extent);
  return __builtin_mul_overflow(count, bl, &n) || __builtin_mul_overflow(n, c->size, &bytes) ||
         __builtin_mul_overflow(n, ext, &span) || bytes > (size_t)PTRDIFF_MAX || span > (size_t)PTRDIFF_MAX;
}

skn_dtype *skn_dt_create(int combiner, int ni, const int *ints, int na, const ptrdiff_t *aints, int nd,
                         const skn_dtype *const *types, int *err) {
  *err = SKN_ERR_TRUNCATE;
  switch (combiner) {
  case MPI_COMBINER_CONTIGUOUS:
    if (too_big((size_t)ints[0], 1, types[0])) return NULL;
    break;
  case MPI_COMBINER_VECTOR:
  case MPI_COMBINER_HVECTOR:
  case MPI_COMBINER_INDEXED_BLOCK:
  case MPI_COMBINER_HINDEXED_BLOCK:
    if (too_big((size_t)ints[0], (size_t)ints[1], types[0])) return NULL;
    break;
  default:
    break;
  }
  *err = SKN_ERR_NOMEM;
  size_t bytes = sizeof(skn_dtype) + sizeof(struct skn_dt_args) + (size_t)nd * sizeof(skn_dtype *) +
                 (size_t)na * sizeof(ptrdiff_t) + (size_t)ni * sizeof(int);
  skn_dtype *t = calloc(1, bytes);
  if (!t) return NULL;
  struct skn_dt_args *a = (struct skn_dt_args *)(t + 1);
  a->ni = ni;
  a->na = na;
  a->nd = nd;
  a->types = (skn_dtype **)(a + 1);
  a->aints = (ptrdiff_t *)(a->types + nd);
  a->ints = (int *)(a->aints + na);
  if (nd) memcpy(a->types, types, (size_t)nd * sizeof *types);
  if (na) memcpy(a->aints, aints, (size_t)na * sizeof *aints);
  if (ni) memcpy(a->ints, ints, (size_t)ni * sizeof *ints);
  t->args = a;
  t->combiner = combiner;
  t->name = derived_name;
  t->refs = 1;
  t->sig_reps = 1;

  scal_visitor v = {{scal_run, false}, false, false, 0, 0, 0, 0, 0, 0, 1, 0};
  for_each_run(t, &v.v);
  if (v.v.failed) {
    *err = SKN_ERR_TRUNCATE;
    free(t);
    return NULL;
  }
  const skn_dtype *c = nd ? types[0] : NULL;
  t->size = v.size;
  t->nelems = v.nelems;
  t->align = v.align;
  t->flags = SKN_DT_DERIVED | v.flags;
  t->lb = v.any ? v.lb : 0;
  t->extent = v.any ? v.ub - v.lb : 0;
  t->true_lb = v.anydata ? v.tlb : 0;
  t->true_extent = v.anydata ? v.tub - v.tlb : 0;
  switch (combiner) {
  case MPI_COMBINER_DUP:
  case MPI_COMBINER_F90_REAL:
  case MPI_COMBINER_F90_COMPLEX:
  case MPI_COMBINER_F90_INTEGER:
    t->lb = c->lb;
    t->extent = c->extent;
    t->flags = SKN_DT_DERIVED | (c->flags & (SKN_DT_STICKY | SKN_DT_HAS_BYTE));
    break;
  case MPI_COMBINER_RESIZED:
    t->lb = aints[0];
    t->extent = aints[1];
    t->flags |= SKN_DT_STICKY;
    break;
  case MPI_COMBINER_STRUCT:
    /* as C lays out a struct: pad the extent to the strictest basic alignment inside,
     * unless bounds were set explicitly */
    if (!(t->flags & SKN_DT_STICKY) && t->align > 1 && t->extent % (ptrdiff_t)t->align)
      t->extent += (ptrdiff_t)t->align - t->extent % (ptrdiff_t)t->align;
    break;
  case MPI_COMBINER_SUBARRAY:
  case MPI_COMBINER_DARRAY: {
    int ndims = combiner == MPI_COMBINER_SUBARRAY ? ints[0] : ints[2];
    const int *sizes = combiner == MPI_COMBINER_SUBARRAY ? ints + 1 : ints + 3;
    ptrdiff_t e = c->extent;
    for (int k = 0; k < ndims; k++)
      if (!mul_ok(e, sizes[k], &e)) {
        *err = SKN_ERR_TRUNCATE;
        free(t);
        return NULL;
      }
    t->lb = 0;
    t->extent = e;
    t->flags |= SKN_DT_STICKY;
    break;
  }
  default:
    break;
  }
  for (int i = 0; i < nd; i++) skn_dt_retain((skn_dtype *)types[i]);
  *err = SKN_OK;
  return t;
}

const skn_dtype *skn_dt_f90_base(const skn_dtype *t) {
  bool f90 = t->combiner == MPI_COMBINER_F90_REAL || t->combiner == MPI_COMBINER_F90_COMPLEX ||
             t->combiner == MPI_COMBINER_F90_INTEGER;
  return f90 && t->args ? t->args->types[0] : NULL;
}

void skn_dt_contents(const skn_dtype *t, int *ni, const int **ints, int *na, const ptrdiff_t **aints, int *nd,
                     skn_dtype *const **types) {
  const struct skn_dt_args *a = t->args;
  *ni = a ? a->ni : 0;
  *na = a ? a->na : 0;
  *nd = a && !skn_dt_f90_base(t) ? a->nd : 0; /* (p, r) only: the base type is the engine's */
  *ints = a ? a->ints : NULL;
  *aints = a ? a->aints : NULL;
  *types = a ? a->types : NULL;
}

/* ---------------------------------------------------------------- flattening */

typedef struct flat_visitor {
  visitor v;
  skn_block *blk;
  size_t nblk, cap;
  /* signature: expanded runs (several children) */
  skn_sigrun *sig;
  size_t nsig, sigcap;
  bool sig_unknown;
} flat_visitor;

static bool flatten(skn_dtype *t);

static bool push_block(flat_visitor *v, ptrdiff_t off, size_t len) {
  if (len == 0) return true;
  if (v->nblk && v->blk[v->nblk - 1].off + (ptrdiff_t)v->blk[v->nblk - 1].len == off) {
    v->blk[v->nblk - 1].len += len;
    return true;
  }
  if (v->nblk == v->cap) {
    size_t cap = v->cap ? 2 * v->cap : 16;
    if (cap > INT_MAX) return false;
    skn_block *nb = realloc(v->blk, cap * sizeof *nb);
    if (!nb) return false;
    v->blk = nb;
    v->cap = cap;
  }
  v->blk[v->nblk++] = (skn_block){off, len};
  return true;
}

static bool push_sig(flat_visitor *v, const skn_sigrun *run, size_t count) {
  uint32_t code = run->code;
  if (count == 0 || v->sig_unknown) return true;
  if (v->nsig && v->sig[v->nsig - 1].code == code && v->sig[v->nsig - 1].xconv == run->xconv) {
    v->sig[v->nsig - 1].count += count;
    return true;
  }
  if (v->nsig == SIG_CAP) {
    v->sig_unknown = true;
    return true;
  }
  if (v->nsig == v->sigcap) {
    size_t cap = v->sigcap ? 2 * v->sigcap : 8;
    skn_sigrun *ns = realloc(v->sig, cap * sizeof *ns);
    if (!ns) return false;
    v->sig = ns;
    v->sigcap = cap;
  }
  v->sig[v->nsig++] = (skn_sigrun){count, code, (uint16_t)code_size[code], run->xconv};
  return true;
}

static void flat_run(visitor *vv, const skn_dtype *c, ptrdiff_t disp, size_t n) {
  flat_visitor *v = (flat_visitor *)vv;
  if (n == 0 || c->size == 0) return;
  if ((c->flags & SKN_DT_DERIVED) && !(c->flags & SKN_DT_FLAT) && !flatten((skn_dtype *)c)) goto fail;
  skn_block one = {0, c->size};
  const skn_block *cb = c->contig ? &one : c->blocks;
  int nb = c->contig ? 1 : c->nblocks;
  if (nb == 1 && (ptrdiff_t)cb[0].len == c->extent) { /* copies tile: one block */
    size_t len;
    if (__builtin_mul_overflow(n, cb[0].len, &len) || !push_block(v, disp + cb[0].off, len)) goto fail;
  } else {
    for (size_t j = 0; j < n; j++) {
      ptrdiff_t eo = disp + (ptrdiff_t)j * c->extent;
      for (int b = 0; b < nb; b++)
        if (!push_block(v, eo + cb[b].off, cb[b].len)) goto fail;
    }
  }
  /* signature */
  if (c->nsig < 0) {
    v->sig_unknown = true;
  } else if (c->nsig == 1) {
    if (!push_sig(v, &c->sig[0], c->sig[0].count * c->sig_reps * n)) goto fail;
  } else {
    for (size_t r = 0; r < n * c->sig_reps && !v->sig_unknown; r++)
      for (int k = 0; k < c->nsig; k++)
        if (!push_sig(v, &c->sig[k], c->sig[k].count)) goto fail;
  }
  return;
fail:
  vv->failed = true;
}

/* counts the copies of the single child of a non-struct type */
typedef struct count_visitor {
  visitor v;
  size_t n;
} count_visitor;
static void count_run(visitor *vv, const skn_dtype *c, ptrdiff_t disp, size_t n) {
  ((count_visitor *)vv)->n += n;
}

static void flat_release(struct skn_dt_flat *f) {
  if (f && atomic_fetch_sub(&f->refs, 1) == 1) {
    free(f->blocks);
    free(f->sig);
    free(f);
  }
}

static void apply_flat(skn_dtype *t, struct skn_dt_flat *f) {
  t->flat = f;
  t->nblocks = f->nblocks;
  t->blocks = f->blocks;
  t->nsig = f->nsig;
  t->sig = f->sig;
  t->sig_reps = f->sig_reps;
  t->contig = t->size == 0 ? t->extent == 0
                           : (f->nblocks == 1 && f->blocks[0].off == 0 && (ptrdiff_t)t->size == t->extent);
  t->basic_size = t->nsig == 1 ? t->sig[0].size : 0;
  t->reg_len = 0;
  t->reg_stride = 0;
  if (f->nblocks >= 1 && !t->contig) {
    bool regular = true;
    ptrdiff_t stride = f->nblocks > 1 ? f->blocks[1].off - f->blocks[0].off : 0;
    for (int i = 1; i < f->nblocks && regular; i++)
      regular = f->blocks[i].len == f->blocks[0].len && f->blocks[i].off - f->blocks[i - 1].off == stride;
    if (regular) {
      t->reg_len = f->blocks[0].len;
      t->reg_stride = stride;
    }
  }
  t->flags |= SKN_DT_FLAT;
}

static bool flatten(skn_dtype *t) {
  if (t->flags & SKN_DT_FLAT) return true;
  const struct skn_dt_args *a = t->args;
  skn_dtype *c0 = a->nd ? a->types[0] : NULL;
  if ((t->combiner == MPI_COMBINER_DUP || t->combiner == MPI_COMBINER_RESIZED) && (c0->flags & SKN_DT_DERIVED)) {
    if (!flatten(c0)) return false; /* same blocks and signature: share them */
    atomic_fetch_add(&c0->flat->refs, 1);
    apply_flat(t, c0->flat);
    return true;
  }
  struct skn_dt_flat *f = calloc(1, sizeof *f);
  if (!f) return false;
  atomic_init(&f->refs, 1);
  flat_visitor v = {{flat_run, false}, NULL, 0, 0, NULL, 0, 0, false};
  bool single = t->combiner != MPI_COMBINER_STRUCT;
  for (int i = 1; i < a->nd; i++) single &= a->types[i] == c0;
  if (single) { /* the signature is the child's, repeated: no expansion */
    if ((c0->flags & SKN_DT_DERIVED) && !flatten(c0)) goto fail;
    v.sig_unknown = true; /* flat_run leaves it alone */
  }
  for_each_run(t, &v.v);
  if (v.v.failed) goto fail;
  f->nblocks = (int)v.nblk;
  f->blocks = v.nblk ? realloc(v.blk, v.nblk * sizeof *v.blk) : (free(v.blk), NULL);
  if (v.nblk && !f->blocks) f->blocks = v.blk;
  f->sig_reps = 1;
  if (single && c0 && c0->nsig != 0) {
    count_visitor cv = {{count_run, false}, 0};
    for_each_run(t, &cv.v);
    free(v.sig);
    v.sig = NULL;
    if (c0->nsig < 0 || cv.n == 0) {
      f->nsig = c0->nsig < 0 ? -1 : 0;
    } else {
      f->nsig = c0->nsig;
      f->sig = malloc((size_t)c0->nsig * sizeof *f->sig);
      if (!f->sig) goto fail;
      memcpy(f->sig, c0->sig, (size_t)c0->nsig * sizeof *f->sig);
      f->sig_reps = c0->sig_reps * cv.n;
      if (f->nsig == 1) {
        f->sig[0].count *= f->sig_reps;
        f->sig_reps = 1;
      }
    }
  } else if (single || v.sig_unknown) {
    free(v.sig);
    f->nsig = single ? 0 : -1;
  } else {
    f->nsig = (int)v.nsig;
    f->sig = v.nsig ? realloc(v.sig, v.nsig * sizeof *v.sig) : (free(v.sig), NULL);
    if (v.nsig && !f->sig) f->sig = v.sig;
  }
  apply_flat(t, f);
  return true;
fail:
  free(v.blk);
  free(v.sig);
  free(f);
  return false;
}

int skn_dt_commit(skn_dtype *t) {
  if (!(t->flags & SKN_DT_DERIVED)) return SKN_OK;
  if (!flatten(t)) return SKN_ERR_NOMEM;
  t->flags |= SKN_DT_COMMITTED;
  return SKN_OK;
}

/* ---------------------------------------------------------------- lifetime, table */

/* me->types[0]: the rank's bookkeeping. `sentinel.next` heads the deferred-free list;
 * tables replaced by a larger one are kept (chained through their slot 0) because
 * another thread of the rank may still be reading one. */
typedef struct dt_table_meta {
  skn_dtype sentinel;
  skn_dtype **retired;
  int hint; /* no free slot below it */
} dt_table_meta;

static dt_table_meta *table_meta(skn_rank *me) {
  if (!me->types) {
    dt_table_meta *m = calloc(1, sizeof *m);
    skn_dtype **tab = calloc(16, sizeof *tab);
    if (!m || !tab) {
      free(m);
      free(tab);
      return NULL;
    }
    tab[0] = &m->sentinel;
    m->hint = 1;
    me->types_cap = 16;
    me->ntypes = 1;
    me->types = tab;
  }
  return (dt_table_meta *)me->types[0];
}

int skn_dt_table_add(skn_rank *me, skn_dtype *t) {
  dt_table_meta *m = table_meta(me);
  if (!m) return -1;
  int slot = m->hint;
  while (slot < me->ntypes && me->types[slot]) slot++;
  if (slot == me->ntypes) {
    if (me->ntypes == me->types_cap) {
      if (me->types_cap >= (1 << 23)) return -1; /* handle index space */
      int cap = 2 * me->types_cap;
      skn_dtype **tab = calloc((size_t)cap, sizeof *tab);
      if (!tab) return -1;
      memcpy(tab, me->types, (size_t)me->ntypes * sizeof *tab);
      skn_dtype **old = me->types;
      old[0] = (skn_dtype *)(void *)m->retired;
      m->retired = old;
      __atomic_store_n(&me->types, tab, __ATOMIC_RELEASE);
      me->types_cap = cap;
    }
    me->types[slot] = t;
    __atomic_store_n(&me->ntypes, slot + 1, __ATOMIC_RELEASE);
  } else {
    me->types[slot] = t;
  }
  m->hint = slot + 1;
  return slot;
}

void skn_dt_table_remove(skn_rank *me, int slot) {
  if (slot < 1 || slot >= me->ntypes) return;
  me->types[slot] = NULL;
  dt_table_meta *m = (dt_table_meta *)me->types[0];
  if (slot < m->hint) m->hint = slot;
}

skn_dtype *skn_dt_table_get(skn_rank *me, int slot) {
  return (slot >= 1 && slot < me->ntypes) ? me->types[slot] : NULL;
}

bool skn_dt_in_use(skn_rank *me, const skn_dtype *t) {
  if (!me) return false;
  for (int idx = 1; idx <= me->req_count; idx++) {
    skn_req **chunk = skn_chunk_at(&me->req_chunks, idx / SKN_REQ_CHUNK);
    skn_req *r = chunk ? chunk[idx % SKN_REQ_CHUNK] : NULL;
    if (r && r->dt == t && atomic_load_explicit(&r->refs, memory_order_acquire) > 0) return true;
  }
  return false;
}

static void destroy(skn_rank *me, skn_dtype *t) {
  const struct skn_dt_args *a = t->args;
  for (int i = 0; i < a->nd; i++) skn_dt_release(me, a->types[i]);
  flat_release(t->flat);
  free(t);
}

void skn_dt_release(skn_rank *me, skn_dtype *t) {
  if (!(t->flags & SKN_DT_DERIVED) || --t->refs > 0) return;
  if (skn_dt_in_use(me, t)) {
    dt_table_meta *m = table_meta(me);
    if (m) {
      t->next = m->sentinel.next;
      m->sentinel.next = t;
    } /* else: cannot track it; leaking is safer than freeing */
    return;
  }
  destroy(me, t);
}

void skn_dt_collect(skn_rank *me) {
  if (!me || !me->types) return;
  dt_table_meta *m = (dt_table_meta *)me->types[0];
  skn_dtype *list = m->sentinel.next;
  m->sentinel.next = NULL;
  while (list) {
    skn_dtype *t = list;
    list = t->next;
    if (skn_dt_in_use(me, t)) {
      t->next = m->sentinel.next;
      m->sentinel.next = t;
    } else {
      destroy(me, t);
    }
  }
}

/* ================================================================ signatures */

/* A position in the signature stream of a type: run k of repetition rep of element
 * `elem`, `left` basic elements left in that run. */
typedef struct sigcur {
  const skn_dtype *t;
  int k;
  size_t left;
} sigcur;

static inline void sig_start(sigcur *c, const skn_dtype *t) {
  c->t = t;
  c->k = 0;
  c->left = t->nsig > 0 ? t->sig[0].count : 0;
}
static inline void sig_next(sigcur *c) {
  if (++c->k == c->t->nsig) c->k = 0;
  c->left = c->t->sig[c->k].count;
}

long long skn_dt_elements(const skn_dtype *t, long long bytes) {
  if (bytes <= 0 || t->size == 0) return 0;
  long long size = (long long)t->size;
  long long total = bytes / size * (long long)t->nelems, rem = bytes % size;
  if (rem == 0) return total;
  if (t->nsig <= 0) return -1;
  long long pbytes = 0, pelems = 0;
  for (int k = 0; k < t->nsig; k++) {
    pbytes += (long long)(t->sig[k].count * t->sig[k].size);
    pelems += (long long)t->sig[k].count;
  }
  total += rem / pbytes * pelems;
  rem %= pbytes;
  for (int k = 0; k < t->nsig && rem > 0; k++) {
    long long sz = t->sig[k].size, run = (long long)t->sig[k].count * sz;
    if (rem >= run) {
      total += (long long)t->sig[k].count;
      rem -= run;
    } else {
      if (rem % sz) return -1;
      total += rem / sz;
      rem = 0;
    }
  }
  return total;
}

long long skn_dt_element_bytes(const skn_dtype *t, long long elements) {
  if (elements <= 0) return 0;
  if (t->nelems == 0) return -1;
  long long ne = (long long)t->nelems;
  long long bytes = elements / ne * (long long)t->size, rem = elements % ne;
  if (rem == 0) return bytes;
  if (t->nsig <= 0) return -1;
  long long pbytes = 0, pelems = 0;
  for (int k = 0; k < t->nsig; k++) {
    pbytes += (long long)(t->sig[k].count * t->sig[k].size);
    pelems += (long long)t->sig[k].count;
  }
  bytes += rem / pelems * pbytes;
  rem %= pelems;
  for (int k = 0; k < t->nsig && rem > 0; k++) {
    long long n = (long long)t->sig[k].count < rem ? (long long)t->sig[k].count : rem;
    bytes += n * (long long)t->sig[k].size;
    rem -= n;
  }
  return bytes;
}

/* Checks at most this many run boundaries: the check must stay cheap next to the copy. */
#define SIG_CHECK_STEPS 4096

bool skn_dt_sig_match_slow(const skn_dtype *recv, const skn_dtype *send, size_t bytes) {
  if (bytes == 0 || recv == send) return true;
  if ((recv->flags | send->flags) & SKN_DT_HAS_BYTE) return true; /* MPI_BYTE, MPI_PACKED */
  if (recv->nsig < 0 || send->nsig < 0) return true;              /* too long to keep */
  if (recv->nsig == 0 || send->nsig == 0) return recv->nsig == send->nsig || recv->size == 0;
  if (recv->nsig == 1 && send->nsig == 1) return recv->sig[0].code == send->sig[0].code;
  if (recv->nsig == send->nsig && !memcmp(recv->sig, send->sig, (size_t)recv->nsig * sizeof *recv->sig))
    return true; /* same period */
  sigcur r, s;
  sig_start(&r, recv);
  sig_start(&s, send);
  for (int step = 0; step < SIG_CHECK_STEPS && bytes > 0; step++) {
    if (r.t->sig[r.k].code != s.t->sig[s.k].code) return false;
    size_t sz = s.t->sig[s.k].size, n = r.left < s.left ? r.left : s.left;
    if (n * sz >= bytes) return true;
    bytes -= n * sz;
    r.left -= n;
    s.left -= n;
    if (!r.left) sig_next(&r);
    if (!s.left) sig_next(&s);
  }
  return true;
}

/* Signature summaries for data headers between processes (device.h). The merged runs
 * (class, count) of a prefix of a stream of t are hashed; two streams agree on a prefix
 * of `covered` bytes exactly when their merged runs there are the same, so the receiver
 * hashes the same prefix of its own type and compares. At most SIG_CHECK_STEPS runs, as
 * the in-process check. */
static inline uint64_t sig_mix(uint64_t h, uint32_t code, uint64_t count) {
  h = (h ^ code) * 0x100000001b3ull;
  h = (h ^ count) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}
#define SIG_SEED 0xcbf29ce484222325ull

/* Hash of the merged runs of the first `limit` bytes of a stream of t (nsig > 0, size >
 * 0); *covered: the bytes hashed (less than limit when the run cap was reached). */
static uint64_t sig_prefix_hash(const skn_dtype *t, uint64_t limit, uint64_t *covered) {
  sigcur c;
  sig_start(&c, t);
  uint64_t h = SIG_SEED, done = 0, hashed = 0, cnt = 0;
  uint32_t code = 0;
  int runs = 0;
  while (done < limit) {
    uint32_t k = c.t->sig[c.k].code, sz = c.t->sig[c.k].size;
    if (k != code && cnt) {
      h = sig_mix(h, code, cnt);
      hashed = done;
      cnt = 0;
      if (++runs == SIG_CHECK_STEPS) break;
    }
    code = k;
    uint64_t need = (limit - done + sz - 1) / sz, n = c.left < need ? c.left : need;
    cnt += n;
    done += n * sz;
    c.left -= n;
    if (!c.left) sig_next(&c);
  }
  if (cnt) {
    h = sig_mix(h, code, cnt);
    hashed = done < limit ? done : limit;
  }
  *covered = hashed;
  return h | 1;
}

void skn_dt_sigsum(const skn_dtype *t, size_t count, skn_sigsum *out) {
  uint64_t bytes = (uint64_t)count * t->size;
  *out = (skn_sigsum){0};
  if (bytes == 0 || (t->flags & SKN_DT_HAS_BYTE) || t->nsig <= 0) return; /* matches anything */
  out->first = t->sig[0].code;
  if (t->nsig == 1) { /* one class: one run */
    out->hash = sig_mix(SIG_SEED, t->sig[0].code, bytes / t->sig[0].size) | 1;
    out->covered = bytes;
    return;
  }
  out->hash = sig_prefix_hash(t, bytes, &out->covered);
}

bool skn_dt_sig_match_sum(const skn_dtype *recv, size_t rcount, const skn_sigsum *s) {
  uint64_t cap = (uint64_t)rcount * recv->size;
  if (s->hash == 0 || cap == 0 || (recv->flags & SKN_DT_HAS_BYTE) || recv->nsig < 0) return true;
  if (recv->nsig == 0) return false;
  if (cap < s->covered) return recv->sig[0].code == s->first; /* truncated: what can be compared */
  if (recv->nsig == 1) return (sig_mix(SIG_SEED, recv->sig[0].code, s->covered / recv->sig[0].size) | 1) == s->hash;
  uint64_t covered;
  return sig_prefix_hash(recv, s->covered, &covered) == s->hash && covered == s->covered;
}

/* ================================================================ external32 */

/* x87 80-bit extended in a 16-byte slot <-> IEEE binary128, big-endian */
_Static_assert(LDBL_MANT_DIG == 64 && sizeof(long double) == 16, "x87 long double");

static inline void put_be64(unsigned char *p, uint64_t v) {
  v = __builtin_bswap64(v);
  memcpy(p, &v, 8);
}
static inline uint64_t get_be64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

static void ld_to_external(unsigned char *p) {
  uint64_t mant;
  uint16_t se;
  memcpy(&mant, p, 8);
  memcpy(&se, p + 8, 2);
  uint64_t frac = mant & 0x7fffffffffffffffull; /* the integer bit is implicit in binary128 */
  uint64_t exp = se & 0x7fff;
  if (exp == 0 && (mant >> 63)) exp = 1; /* pseudo-denormal */
  uint64_t hi = ((uint64_t)(se & 0x8000) << 48) | (exp << 48) | (frac >> 15);
  uint64_t lo = frac << 49;
  put_be64(p, hi);
  put_be64(p + 8, lo);
}

static void ld_from_external(unsigned char *p) {
  uint64_t hi = get_be64(p), lo = get_be64(p + 8);
  uint16_t se = (uint16_t)(hi >> 48);
  uint64_t frac = ((hi & 0xffffffffffffull) << 15) | (lo >> 49);
  uint64_t mant = frac | ((se & 0x7fff) ? 1ull << 63 : 0);
  memset(p, 0, 16);
  memcpy(p, &mant, 8);
  memcpy(p + 8, &se, 2);
}

static void swap_units(unsigned char *p, size_t n, unsigned unit) {
  switch (unit) {
  case 2:
    for (size_t i = 0; i < n; i++, p += 2) {
      uint16_t v;
      memcpy(&v, p, 2);
      v = __builtin_bswap16(v);
      memcpy(p, &v, 2);
    }
    break;
  case 4:
    for (size_t i = 0; i < n; i++, p += 4) {
      uint32_t v;
      memcpy(&v, p, 4);
      v = __builtin_bswap32(v);
      memcpy(p, &v, 4);
    }
    break;
  case 8:
    for (size_t i = 0; i < n; i++, p += 8) {
      uint64_t v;
      memcpy(&v, p, 8);
      v = __builtin_bswap64(v);
      memcpy(p, &v, 8);
    }
    break;
  case 16:
    for (size_t i = 0; i < n; i++, p += 16) {
      uint64_t lo, hi;
      memcpy(&lo, p, 8);
      memcpy(&hi, p + 8, 8);
      lo = __builtin_bswap64(lo);
      hi = __builtin_bswap64(hi);
      memcpy(p, &hi, 8);
      memcpy(p + 8, &lo, 8);
    }
    break;
  default:
    break;
  }
}

/* Converts n elements of class `code` at p between native and external32, in place. */
static void convert(unsigned char *p, uint32_t code, size_t n, bool to_external) {
  switch (code) {
  case SKN_SIG_I2: swap_units(p, n, 2); break;
  case SKN_SIG_I4:
  case SKN_SIG_F4: swap_units(p, n, 4); break;
  case SKN_SIG_I8:
  case SKN_SIG_F8: swap_units(p, n, 8); break;
  case SKN_SIG_C8: swap_units(p, 2 * n, 4); break; /* real and imaginary parts */
  case SKN_SIG_C16: swap_units(p, 2 * n, 8); break;
  case SKN_SIG_I16:
  case SKN_SIG_F16: swap_units(p, n, 16); break;
  case SKN_SIG_C32: swap_units(p, 2 * n, 16); break;
  case SKN_SIG_LD:
  case SKN_SIG_LDC:
    for (size_t i = 0; i < (code == SKN_SIG_LDC ? 2 * n : n); i++, p += 16)
      to_external ? ld_to_external(p) : ld_from_external(p);
    break;
  default: break; /* bytes, 1-byte integers */
  }
}

static size_t external_elem(const skn_sigrun *run) {
  switch (run->xconv) {
  case SKN_X_S4:
  case SKN_X_U4: return 4;
  case SKN_X_U2: return 2;
  default: return run->size;
  }
}

static bool narrows(const skn_dtype *t) {
  for (int k = 0; k < t->nsig; k++)
    if (t->sig[k].xconv != SKN_X_NATIVE) return true;
  return false;
}

size_t skn_dt_external_size(const skn_dtype *t, size_t count) {
  if (t->nsig <= 0 || !narrows(t)) return count * t->size;
  size_t period = 0;
  for (int k = 0; k < t->nsig; k++) period += t->sig[k].count * external_elem(&t->sig[k]);
  return count * t->sig_reps * period;
}

/* n elements of one run: native (nat) <-> external32 (ext), either direction. */
static void convert_run(unsigned char *ext, unsigned char *nat, const skn_sigrun *run, size_t n, bool to_external) {
  if (run->xconv == SKN_X_NATIVE) {
    if (to_external) {
      memcpy(ext, nat, n * run->size);
      convert(ext, run->code, n, true);
    } else {
      memcpy(nat, ext, n * run->size);
      convert(nat, run->code, n, false);
    }
    return;
  }
  for (size_t i = 0; i < n; i++) {
    if (run->xconv == SKN_X_U2) { /* wchar_t */
      uint32_t v;
      uint16_t e;
      if (to_external) {
        memcpy(&v, nat + 4 * i, 4);
        e = __builtin_bswap16((uint16_t)v);
        memcpy(ext + 2 * i, &e, 2);
      } else {
        memcpy(&e, ext + 2 * i, 2);
        v = __builtin_bswap16(e);
        memcpy(nat + 4 * i, &v, 4);
      }
      continue;
    }
    uint64_t v; /* long, unsigned long */
    uint32_t e;
    if (to_external) {
      memcpy(&v, nat + 8 * i, 8);
      e = __builtin_bswap32((uint32_t)v);
      memcpy(ext + 4 * i, &e, 4);
    } else {
      memcpy(&e, ext + 4 * i, 4);
      e = __builtin_bswap32(e);
      v = run->xconv == SKN_X_S4 ? (uint64_t)(int64_t)(int32_t)e : e;
      memcpy(nat + 8 * i, &v, 8);
    }
  }
}

/* A position in the signature stream of count elements: run k, `left` elements of it. */
typedef struct extcur {
  const skn_dtype *t;
  size_t periods; /* whole signature periods still to start after this one */
  int k;
  size_t left;
} extcur;

static void extcur_start(extcur *c, const skn_dtype *t, size_t count) {
  size_t periods = count * t->sig_reps;
  c->t = t;
  c->k = 0;
  if (t->nsig == 1) { /* one run: the whole stream at once */
    c->left = t->sig[0].count * periods;
    c->periods = 0;
  } else {
    c->left = t->sig[0].count;
    c->periods = periods - 1;
  }
}

/* Takes up to `room` native bytes of whole elements of the current run; 0 at the end. */
static size_t extcur_take(extcur *c, size_t room, const skn_sigrun **run) {
  while (c->left == 0) {
    if (c->k + 1 == c->t->nsig) {
      if (c->periods == 0) return 0; /* the end (stays the end) */
      c->periods--;
      c->k = 0;
    } else {
      c->k++;
    }
    c->left = c->t->sig[c->k].count;
  }
  *run = &c->t->sig[c->k];
  size_t n = room / (*run)->size;
  if (n > c->left) n = c->left;
  c->left -= n;
  return n;
}

/* Moves count elements between the user's layout and external32 through a bounce buffer
 * of whole basic elements (external32 may be narrower than native, so neither side can
 * be converted in place). */
static void external_walk(unsigned char *ext, void *user, size_t count, const skn_dtype *t, bool to_external) {
  unsigned char bounce[4096] __attribute__((aligned(16)));
  size_t done = 0; /* native stream bytes handled */
  extcur c;
  extcur_start(&c, t, count);
  for (;;) {
    /* a chunk: whole elements, run by run, that fill the bounce buffer */
    extcur start = c;
    size_t fill = 0, n;
    const skn_sigrun *run;
    while ((n = extcur_take(&c, sizeof bounce - fill, &run)) != 0) fill += n * run->size;
    if (fill == 0) return;
    if (to_external) skn_dt_pack_at(bounce, user, t, done, fill);
    size_t pos = 0;
    while (pos < fill && (n = extcur_take(&start, fill - pos, &run)) != 0) {
      convert_run(ext, bounce + pos, run, n, to_external);
      ext += n * external_elem(run);
      pos += n * run->size;
    }
    if (!to_external) skn_dt_unpack_at(user, t, done, bounce, fill);
    done += fill;
  }
}

int skn_dt_pack_external(void *out, const void *src, size_t count, const skn_dtype *t) {
  size_t bytes = count * t->size;
  if (bytes == 0) return SKN_OK;
  if (t->nsig < 0) return SKN_ERR_NOT_FOUND;
  if (!narrows(t)) { /* pack, then swap in place */
    skn_dt_pack(out, src, t, bytes);
    unsigned char *p = out;
    size_t periods = count * t->sig_reps;
    if (t->nsig == 1) {
      convert(p, t->sig[0].code, t->sig[0].count * periods, true);
      return SKN_OK;
    }
    for (size_t r = 0; r < periods; r++)
      for (int k = 0; k < t->nsig; k++) {
        convert(p, t->sig[k].code, t->sig[k].count, true);
        p += t->sig[k].count * t->sig[k].size;
      }
    return SKN_OK;
  }
  external_walk(out, (void *)(uintptr_t)src, count, t, true);
  return SKN_OK;
}

int skn_dt_unpack_external(void *dst, size_t count, const skn_dtype *t, const void *in) {
  if (count * t->size == 0) return SKN_OK;
  if (t->nsig < 0) return SKN_ERR_NOT_FOUND;
  external_walk((unsigned char *)(uintptr_t)in, dst, count, t, false);
  return SKN_OK;
}
