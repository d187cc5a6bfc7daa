// Datatypes: the copy engine between typed layouts, derived-type construction (sizes,
// bounds, flattened blocks, signatures) against hand-computed layouts, and a property
// test of random nested types against a naive reference written here from the MPI
// standard's definitions (type maps expanded element by element).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "harness.h"

extern "C" {
#include "core/core.h"
}

namespace {

struct ShortInt { short v; int i; };
struct DoubleInt { double v; int i; };

const skn_dtype *P(int i) { return &skn_dt_predefined[i]; }
const skn_dtype *const CHAR = P(1), *const BYTE = P(4), *const SHORT = P(6), *const INT = P(8), *const DOUBLE = P(15),
                       *const LDOUBLE = P(16), *const CDOUBLE = P(31), *const FLOAT_INT = P(34),
                       *const DOUBLE_INT = P(35), *const TWO_INT = P(37), *const SHORT_INT = P(38);

TEST(Datatype, PairTypesHaveTheirCLayout) {
  const skn_dtype &si = *SHORT_INT;
  EXPECT_EQ(si.size, sizeof(short) + sizeof(int));
  EXPECT_EQ(si.extent, (ptrdiff_t)sizeof(ShortInt));
  const skn_dtype &di = *DOUBLE_INT;
  EXPECT_EQ(di.size, sizeof(double) + sizeof(int));
  EXPECT_EQ(di.extent, (ptrdiff_t)sizeof(DoubleInt));
}

TEST(Datatype, PackAndUnpackSkipPadding) {
  const skn_dtype *si = SHORT_INT;
  ShortInt src[3] = {{1, 10}, {2, 20}, {3, 30}}, dst[3];
  std::memset(dst, 0xab, sizeof dst);
  std::vector<char> packed(3 * si->size);
  skn_dt_pack(packed.data(), src, si, packed.size());
  skn_dt_unpack(dst, si, packed.data(), packed.size());
  for (int k = 0; k < 3; k++) {
    EXPECT_EQ(dst[k].v, src[k].v);
    EXPECT_EQ(dst[k].i, src[k].i);
  }
  unsigned char pad;
  std::memcpy(&pad, reinterpret_cast<char *>(&dst[0]) + sizeof(short), 1);
  EXPECT_EQ(pad, 0xab) << "padding must not be written";
}

TEST(Datatype, CopyStopsAtTheSmallerSide) {
  int src[4] = {1, 2, 3, 4}, dst[4] = {0, 0, 0, 0};
  EXPECT_EQ(skn_dt_copy(dst, 2, INT, src, 4, INT), 2 * sizeof(int));
  EXPECT_EQ(dst[1], 2);
  EXPECT_EQ(dst[2], 0);
}

TEST(Datatype, TypedToTypedCopyAcrossDifferentLayouts) {
  const skn_dtype *si = SHORT_INT;
  ShortInt a[2] = {{5, 50}, {6, 60}}, b[2] = {};
  EXPECT_EQ(skn_dt_copy(b, 2, si, a, 2, si), 2 * si->size);
  EXPECT_EQ(b[1].v, 6);
  EXPECT_EQ(b[1].i, 60);
}

// ------------------------------------------------------------------ constructors

// Owns derived types built in a test and releases them at the end.
struct Types {
  std::vector<skn_dtype *> made;
  ~Types() {
    for (auto it = made.rbegin(); it != made.rend(); ++it) skn_dt_release(nullptr, *it);
  }
  skn_dtype *make(int combiner, std::vector<int> ints, std::vector<ptrdiff_t> aints,
                  std::vector<const skn_dtype *> kids, bool commit = true) {
    int err = -99;
    skn_dtype *t = skn_dt_create(combiner, (int)ints.size(), ints.data(), (int)aints.size(), aints.data(),
                                 (int)kids.size(), kids.data(), &err);
    EXPECT_NE(t, nullptr);
    EXPECT_EQ(err, SKN_OK);
    if (!t) return nullptr;
    made.push_back(t);
    if (commit) EXPECT_EQ(skn_dt_commit(t), SKN_OK);
    return t;
  }
  skn_dtype *contiguous(int n, const skn_dtype *c) { return make(MPI_COMBINER_CONTIGUOUS, {n}, {}, {c}); }
  skn_dtype *vector(int n, int bl, int stride, const skn_dtype *c) {
    return make(MPI_COMBINER_VECTOR, {n, bl, stride}, {}, {c});
  }
  skn_dtype *hvector(int n, int bl, ptrdiff_t stride, const skn_dtype *c) {
    return make(MPI_COMBINER_HVECTOR, {n, bl}, {stride}, {c});
  }
  skn_dtype *indexed(std::vector<int> bl, std::vector<int> disp, const skn_dtype *c) {
    std::vector<int> ints = {(int)bl.size()};
    ints.insert(ints.end(), bl.begin(), bl.end());
    ints.insert(ints.end(), disp.begin(), disp.end());
    return make(MPI_COMBINER_INDEXED, ints, {}, {c});
  }
  skn_dtype *hindexed(std::vector<int> bl, std::vector<ptrdiff_t> disp, const skn_dtype *c) {
    std::vector<int> ints = {(int)bl.size()};
    ints.insert(ints.end(), bl.begin(), bl.end());
    return make(MPI_COMBINER_HINDEXED, ints, disp, {c});
  }
  skn_dtype *indexed_block(int bl, std::vector<int> disp, const skn_dtype *c) {
    std::vector<int> ints = {(int)disp.size(), bl};
    ints.insert(ints.end(), disp.begin(), disp.end());
    return make(MPI_COMBINER_INDEXED_BLOCK, ints, {}, {c});
  }
  skn_dtype *hindexed_block(int bl, std::vector<ptrdiff_t> disp, const skn_dtype *c) {
    return make(MPI_COMBINER_HINDEXED_BLOCK, {(int)disp.size(), bl}, disp, {c});
  }
  skn_dtype *structure(std::vector<int> bl, std::vector<ptrdiff_t> disp, std::vector<const skn_dtype *> kids) {
    std::vector<int> ints = {(int)bl.size()};
    ints.insert(ints.end(), bl.begin(), bl.end());
    return make(MPI_COMBINER_STRUCT, ints, disp, kids);
  }
  skn_dtype *resized(const skn_dtype *c, ptrdiff_t lb, ptrdiff_t extent) {
    return make(MPI_COMBINER_RESIZED, {}, {lb, extent}, {c});
  }
  skn_dtype *subarray(std::vector<int> sizes, std::vector<int> sub, std::vector<int> starts, int order,
                      const skn_dtype *c) {
    std::vector<int> ints = {(int)sizes.size()};
    ints.insert(ints.end(), sizes.begin(), sizes.end());
    ints.insert(ints.end(), sub.begin(), sub.end());
    ints.insert(ints.end(), starts.begin(), starts.end());
    ints.push_back(order);
    return make(MPI_COMBINER_SUBARRAY, ints, {}, {c});
  }
  skn_dtype *darray(int size, int rank, std::vector<int> gsizes, std::vector<int> distribs, std::vector<int> dargs,
                    std::vector<int> psizes, int order, const skn_dtype *c) {
    std::vector<int> ints = {size, rank, (int)gsizes.size()};
    for (auto *v : {&gsizes, &distribs, &dargs, &psizes}) ints.insert(ints.end(), v->begin(), v->end());
    ints.push_back(order);
    return make(MPI_COMBINER_DARRAY, ints, {}, {c});
  }
};

std::vector<std::pair<ptrdiff_t, size_t>> blocks_of(const skn_dtype *t) {
  std::vector<std::pair<ptrdiff_t, size_t>> v;
  if (t->contig) {
    if (t->size) v.push_back({0, t->size});
    return v;
  }
  for (int i = 0; i < t->nblocks; i++) v.push_back({t->blocks[i].off, t->blocks[i].len});
  return v;
}
using Blocks = std::vector<std::pair<ptrdiff_t, size_t>>;

void expect_bounds(const skn_dtype *t, size_t size, ptrdiff_t lb, ptrdiff_t extent, ptrdiff_t tlb, ptrdiff_t text) {
  EXPECT_EQ(t->size, size);
  EXPECT_EQ(t->lb, lb);
  EXPECT_EQ(t->extent, extent);
  EXPECT_EQ(t->true_lb, tlb);
  EXPECT_EQ(t->true_extent, text);
}

TEST(DatatypeCtor, Contiguous) {
  Types T;
  auto *t = T.contiguous(5, INT);
  expect_bounds(t, 20, 0, 20, 0, 20);
  EXPECT_TRUE(t->contig);
  EXPECT_EQ(t->basic_size, 4u);
  EXPECT_EQ(t->nelems, 5u);
  auto *e = T.contiguous(0, INT);
  expect_bounds(e, 0, 0, 0, 0, 0);
  // pairs with a gap: contiguous copies do not merge across the gap
  auto *p = T.contiguous(2, SHORT_INT);
  expect_bounds(p, 12, 0, 16, 0, 16);
  EXPECT_FALSE(p->contig);
  EXPECT_EQ(blocks_of(p), (Blocks{{0, 2}, {4, 6}, {12, 4}}));
  EXPECT_EQ(p->nelems, 4u);
}

TEST(DatatypeCtor, VectorAndHvector) {
  Types T;
  auto *v = T.vector(3, 2, 4, INT);
  expect_bounds(v, 24, 0, 40, 0, 40);
  EXPECT_EQ(blocks_of(v), (Blocks{{0, 8}, {16, 8}, {32, 8}}));
  EXPECT_FALSE(v->contig);
  auto *full = T.vector(3, 2, 2, INT); // stride == blocklength: one block
  EXPECT_TRUE(full->contig);
  EXPECT_EQ(blocks_of(full), (Blocks{{0, 24}}));
  auto *neg = T.vector(3, 1, -2, DOUBLE); // elements at 0, -16, -32
  expect_bounds(neg, 24, -32, 40, -32, 40);
  EXPECT_EQ(blocks_of(neg), (Blocks{{0, 8}, {-16, 8}, {-32, 8}}));
  auto *hv = T.hvector(2, 3, 20, SHORT);
  expect_bounds(hv, 12, 0, 26, 0, 26);
  EXPECT_EQ(blocks_of(hv), (Blocks{{0, 6}, {20, 6}}));
  auto *col = T.vector(4, 1, 10, DOUBLE); // a column of a 4x10 array of doubles
  expect_bounds(col, 32, 0, 248, 0, 248);
}

TEST(DatatypeCtor, IndexedFamily) {
  Types T;
  auto *ix = T.indexed({2, 0, 1}, {5, 1, 0}, INT); // type map order, not address order
  expect_bounds(ix, 12, 0, 28, 0, 28);
  EXPECT_EQ(blocks_of(ix), (Blocks{{20, 8}, {0, 4}}));
  auto *hx = T.hindexed({1, 2}, {-6, 10}, SHORT);
  expect_bounds(hx, 6, -6, 20, -6, 20);
  EXPECT_EQ(blocks_of(hx), (Blocks{{-6, 2}, {10, 4}}));
  auto *ib = T.indexed_block(2, {3, 0}, DOUBLE);
  expect_bounds(ib, 32, 0, 40, 0, 40);
  EXPECT_EQ(blocks_of(ib), (Blocks{{24, 16}, {0, 16}}));
  auto *hb = T.hindexed_block(1, {4, 8, 12}, INT); // adjacent blocks merge
  expect_bounds(hb, 12, 4, 12, 4, 12);
  EXPECT_EQ(blocks_of(hb), (Blocks{{4, 12}}));
  EXPECT_FALSE(hb->contig); // data does not start at 0
}

TEST(DatatypeCtor, StructPadsLikeC) {
  Types T;
  struct S { double d; int i; };
  auto *s = T.structure({1, 1}, {offsetof(S, d), offsetof(S, i)}, {DOUBLE, INT});
  expect_bounds(s, 12, 0, (ptrdiff_t)sizeof(S), 0, 12);
  EXPECT_EQ(blocks_of(s), (Blocks{{0, 12}}));
  EXPECT_EQ(s->basic_size, 0u); // mixed
  EXPECT_EQ(s->nsig, 2);
  struct C3 { char a; short b; char c; };
  auto *c3 = T.structure({1, 1, 1}, {offsetof(C3, a), offsetof(C3, b), offsetof(C3, c)}, {CHAR, SHORT, CHAR});
  expect_bounds(c3, 4, 0, (ptrdiff_t)sizeof(C3), 0, 5);
  EXPECT_EQ(blocks_of(c3), (Blocks{{0, 1}, {2, 3}}));
  // an explicit extent is not padded
  auto *r = T.resized(INT, 0, 6);
  auto *sr = T.structure({1, 1}, {0, 8}, {DOUBLE, r});
  expect_bounds(sr, 12, 0, 14, 0, 12);
  // empty struct
  auto *e = T.structure({}, {}, {});
  expect_bounds(e, 0, 0, 0, 0, 0);
}

TEST(DatatypeCtor, ResizedAndDup) {
  Types T;
  auto *r = T.resized(INT, -4, 12);
  expect_bounds(r, 4, -4, 12, 0, 4);
  auto *two = T.contiguous(2, r); // ints at 0 and 12
  expect_bounds(two, 8, -4, 24, 0, 16);
  EXPECT_EQ(blocks_of(two), (Blocks{{0, 4}, {12, 4}}));
  auto *v = T.vector(3, 1, 5, DOUBLE);
  auto *rv = T.resized(v, 0, 8); // the classic: consecutive columns
  expect_bounds(rv, 24, 0, 8, 0, 88);
  EXPECT_EQ(rv->blocks, v->blocks) << "resized shares its child's flattened blocks";
  auto *d = T.make(MPI_COMBINER_DUP, {}, {}, {rv});
  expect_bounds(d, 24, 0, 8, 0, 88);
  EXPECT_EQ(d->combiner, MPI_COMBINER_DUP);
  EXPECT_EQ(d->blocks, v->blocks);
}

TEST(DatatypeCtor, SubarrayByHand) {
  Types T;
  // 4x5 ints, 2x3 block at (1,1), C order: rows 1 and 2, columns 1..3
  auto *c = T.subarray({4, 5}, {2, 3}, {1, 1}, MPI_ORDER_C, INT);
  expect_bounds(c, 24, 0, 80, 24, 32);
  EXPECT_EQ(blocks_of(c), (Blocks{{24, 12}, {44, 12}}));
  // same numbers, Fortran order: dimension 0 is contiguous (4 per column)
  auto *f = T.subarray({4, 5}, {2, 3}, {1, 1}, MPI_ORDER_FORTRAN, INT);
  expect_bounds(f, 24, 0, 80, 20, 40);
  EXPECT_EQ(blocks_of(f), (Blocks{{20, 8}, {36, 8}, {52, 8}}));
  // 3-D, full rows merge: 2x3x4 doubles, take [1][0..2][0..3]
  auto *d3 = T.subarray({2, 3, 4}, {1, 3, 4}, {1, 0, 0}, MPI_ORDER_C, DOUBLE);
  expect_bounds(d3, 96, 0, 192, 96, 96);
  EXPECT_EQ(blocks_of(d3), (Blocks{{96, 96}}));
}

TEST(DatatypeCtor, DarrayByHand) {
  Types T;
  // 1-D block over 2 processes, rank 1 of 6 ints: 3..5
  auto *b = T.darray(2, 1, {6}, {MPI_DISTRIBUTE_BLOCK}, {MPI_DISTRIBUTE_DFLT_DARG}, {2}, MPI_ORDER_C, INT);
  expect_bounds(b, 12, 0, 24, 12, 12);
  EXPECT_EQ(blocks_of(b), (Blocks{{12, 12}}));
  // uneven blocks: 7 over 3 -> blocks of 3: rank 2 gets only index 6
  auto *u = T.darray(3, 2, {7}, {MPI_DISTRIBUTE_BLOCK}, {MPI_DISTRIBUTE_DFLT_DARG}, {3}, MPI_ORDER_C, INT);
  EXPECT_EQ(blocks_of(u), (Blocks{{24, 4}}));
  // cyclic(1) over 3, rank 1 of 7: indices 1 and 4
  auto *cy = T.darray(3, 1, {7}, {MPI_DISTRIBUTE_CYCLIC}, {MPI_DISTRIBUTE_DFLT_DARG}, {3}, MPI_ORDER_C, INT);
  expect_bounds(cy, 8, 0, 28, 4, 16);
  EXPECT_EQ(blocks_of(cy), (Blocks{{4, 4}, {16, 4}}));
  // cyclic(2) over 2, rank 0 of 7: 0,1,4,5
  auto *c2 = T.darray(2, 0, {7}, {MPI_DISTRIBUTE_CYCLIC}, {2}, {2}, MPI_ORDER_C, INT);
  EXPECT_EQ(blocks_of(c2), (Blocks{{0, 8}, {16, 8}}));
  // 2-D 4x6 block x block on a 2x2 grid; rank 3 = coordinates (1,1): rows 2..3, cols 3..5
  auto *bb = T.darray(4, 3, {4, 6}, {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
                      {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, {2, 2}, MPI_ORDER_C, INT);
  expect_bounds(bb, 24, 0, 96, 60, 36);
  EXPECT_EQ(blocks_of(bb), (Blocks{{60, 12}, {84, 12}}));
  // the same in Fortran order: element (i,j) at i + 4j; rank 1 = coordinates (0,1): rows 0..1, cols 3..5
  auto *bf = T.darray(4, 1, {4, 6}, {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
                      {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, {2, 2}, MPI_ORDER_FORTRAN, INT);
  EXPECT_EQ(blocks_of(bf), (Blocks{{48, 8}, {64, 8}, {80, 8}}));
  // NONE in one dimension: rows cyclic over 2, all columns
  auto *nn = T.darray(2, 1, {3, 2}, {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE},
                      {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, {2, 1}, MPI_ORDER_C, DOUBLE);
  expect_bounds(nn, 16, 0, 48, 16, 16);
  EXPECT_EQ(blocks_of(nn), (Blocks{{16, 16}}));
}

TEST(DatatypeCtor, OverflowIsReported) {
  int err = 0;
  int ints[3] = {1 << 30, 1 << 30, 1 << 30};
  const skn_dtype *kids[1] = {LDOUBLE};
  skn_dtype *t = skn_dt_create(MPI_COMBINER_VECTOR, 3, ints, 0, nullptr, 1, kids, &err);
  if (t) skn_dt_release(nullptr, t);
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(err, SKN_ERR_TRUNCATE);
}

TEST(DatatypeCtor, SignatureAndElements) {
  Types T;
  struct S { double d; int i[2]; };
  auto *s = T.structure({1, 2}, {offsetof(S, d), offsetof(S, i)}, {DOUBLE, INT});
  // one element: double, int, int = 16 bytes
  EXPECT_EQ(skn_dt_elements(s, 0), 0);
  EXPECT_EQ(skn_dt_elements(s, 8), 1);
  EXPECT_EQ(skn_dt_elements(s, 12), 2);
  EXPECT_EQ(skn_dt_elements(s, 14), -1);
  EXPECT_EQ(skn_dt_elements(s, 16), 3);
  EXPECT_EQ(skn_dt_elements(s, 16 * 5 + 8), 16);
  EXPECT_EQ(skn_dt_element_bytes(s, 16), 16 * 5 + 8);
  EXPECT_EQ(skn_dt_element_bytes(s, 2), 12);
  EXPECT_EQ(skn_dt_element_bytes(SHORT_INT, 3), 6 + 2);
  EXPECT_EQ(skn_dt_elements(INT, 12), 3);
  EXPECT_EQ(skn_dt_elements(INT, 13), -1);
  EXPECT_EQ(skn_dt_elements(SHORT_INT, 6 + 2), 3);
  EXPECT_EQ(skn_dt_elements(SHORT_INT, 6 + 4), -1);
  auto *cs = T.contiguous(3, s); // a periodic signature is kept as one period
  EXPECT_EQ(cs->nsig, 2);
  EXPECT_EQ(cs->sig_reps, 3u);
  EXPECT_EQ(skn_dt_elements(cs, 48 + 16 + 12), 9 + 3 + 2);
  auto *v = T.vector(4, 3, 7, INT); // homogeneous: one run
  EXPECT_EQ(v->nsig, 1);
  EXPECT_EQ(v->sig[0].count, 12u);
  EXPECT_EQ(v->basic_size, 4u);

  // signature matching: a prefix of the receive's signature
  auto *ints4 = T.contiguous(4, INT);
  EXPECT_TRUE(skn_dt_sig_match(ints4, v, 48));
  EXPECT_TRUE(skn_dt_sig_match(INT, P(9) /*unsigned*/, 4)) << "signedness is not checked";
  EXPECT_FALSE(skn_dt_sig_match(DOUBLE, INT, 8));
  EXPECT_FALSE(skn_dt_sig_match(s, ints4, 16));
  EXPECT_TRUE(skn_dt_sig_match(s, DOUBLE, 8)) << "a double is a prefix of (double, int, int)";
  EXPECT_TRUE(skn_dt_sig_match(BYTE, s, 16));
  EXPECT_TRUE(skn_dt_sig_match(s, BYTE, 16));
  auto *pairs = T.structure({1, 1, 1, 1}, {0, 8, 16, 24}, {DOUBLE, INT, INT, DOUBLE});
  EXPECT_TRUE(skn_dt_sig_match(cs, pairs, 24)) << "(d,i,i) then d";
  auto *did = T.structure({1, 1, 1}, {0, 8, 16}, {DOUBLE, INT, DOUBLE});
  EXPECT_FALSE(skn_dt_sig_match(pairs, did, 24)) << "(d,i,d) is not a prefix of (d,i,i,d)";
  EXPECT_TRUE(skn_dt_sig_match(pairs, did, 12)) << "but (d,i) is";
}

// ------------------------------------------------------------------ property test

enum { C_BYTE = SKN_SIG_BYTE };

struct Entry {
  ptrdiff_t off;
  size_t len;
  uint32_t code;
};

// A type as the standard defines it: its type map (basic entries in order) and bounds.
struct Ref {
  std::vector<Entry> map;
  ptrdiff_t lb = 0, ub = 0;
  size_t align = 1;
  bool sticky = false;
  const skn_dtype *t = nullptr;
  ptrdiff_t extent() const { return ub - lb; }
};

struct Leaf {
  const skn_dtype *t;
  std::vector<Entry> map;
  size_t align;
};

std::vector<Leaf> leaves() {
  return {
      {CHAR, {{0, 1, SKN_SIG_I1}}, 1},
      {BYTE, {{0, 1, SKN_SIG_BYTE}}, 1},
      {SHORT, {{0, 2, SKN_SIG_I2}}, 2},
      {INT, {{0, 4, SKN_SIG_I4}}, 4},
      {DOUBLE, {{0, 8, SKN_SIG_F8}}, 8},
      {LDOUBLE, {{0, 16, SKN_SIG_LD}}, 16},
      {CDOUBLE, {{0, 16, SKN_SIG_C16}}, 8},
      {SHORT_INT, {{0, 2, SKN_SIG_I2}, {4, 4, SKN_SIG_I4}}, 4},
      {DOUBLE_INT, {{0, 8, SKN_SIG_F8}, {8, 4, SKN_SIG_I4}}, 8},
      {TWO_INT, {{0, 4, SKN_SIG_I4}, {4, 4, SKN_SIG_I4}}, 4},
      {FLOAT_INT, {{0, 4, SKN_SIG_F4}, {4, 4, SKN_SIG_I4}}, 4},
  };
}

struct Gen {
  std::mt19937_64 rng;
  std::vector<std::unique_ptr<Ref>> refs;
  Types T;
  std::vector<Leaf> L = leaves();
  explicit Gen(uint64_t seed) : rng(seed) {}

  int r(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

  // Places one copy of c at byte displacement d in the reference being built.
  static void place(Ref &out, bool &any, const Ref &c, ptrdiff_t d) {
    for (const Entry &e : c.map) out.map.push_back({d + e.off, e.len, e.code});
    if (!any || d + c.lb < out.lb) out.lb = d + c.lb;
    if (!any || d + c.ub > out.ub) out.ub = d + c.ub;
    any = true;
    out.align = std::max(out.align, c.align);
    out.sticky |= c.sticky;
  }

  Ref *leaf() {
    const Leaf &l = L[r(0, (int)L.size() - 1)];
    auto ref = std::make_unique<Ref>();
    ref->map = l.map;
    ref->lb = 0;
    ref->ub = l.t->extent;
    ref->align = l.align;
    ref->t = l.t;
    refs.push_back(std::move(ref));
    return refs.back().get();
  }

  Ref *gen(int depth) {
    if (depth == 0 || r(0, 9) < 2) return leaf();
    for (;;) {
      Ref *res = try_gen(depth);
      if (res) return res;
    }
  }

  Ref *try_gen(int depth) {
    auto ref = std::make_unique<Ref>();
    Ref &o = *ref;
    bool any = false;
    int kind = r(0, 11);
    Ref *c = gen(depth - 1);
    ptrdiff_t ext = c->extent();
    std::vector<int> ints;
    std::vector<ptrdiff_t> aints;
    std::vector<const skn_dtype *> kids = {c->t};
    int combiner = 0;
    switch (kind) {
    case 0: { // contiguous
      int n = r(0, 4);
      combiner = MPI_COMBINER_CONTIGUOUS;
      ints = {n};
      for (int i = 0; i < n; i++) place(o, any, *c, i * ext);
      break;
    }
    case 1: { // vector
      int n = r(0, 4), bl = r(0, 3), stride = r(-4, 6);
      combiner = MPI_COMBINER_VECTOR;
      ints = {n, bl, stride};
      for (int i = 0; i < n; i++)
        for (int j = 0; j < bl; j++) place(o, any, *c, ((ptrdiff_t)i * stride + j) * ext);
      break;
    }
    case 2: { // hvector
      int n = r(0, 4), bl = r(0, 3);
      ptrdiff_t stride = r(-40, 80);
      combiner = MPI_COMBINER_HVECTOR;
      ints = {n, bl};
      aints = {stride};
      for (int i = 0; i < n; i++)
        for (int j = 0; j < bl; j++) place(o, any, *c, i * stride + j * ext);
      break;
    }
    case 3:
    case 4: { // indexed, hindexed
      int n = r(0, 4);
      bool h = kind == 4;
      combiner = h ? MPI_COMBINER_HINDEXED : MPI_COMBINER_INDEXED;
      std::vector<int> bl(n), disp(n);
      for (int i = 0; i < n; i++) {
        bl[i] = r(0, 3);
        disp[i] = h ? r(-50, 100) : r(-4, 8);
      }
      ints = {n};
      ints.insert(ints.end(), bl.begin(), bl.end());
      if (h) aints.assign(disp.begin(), disp.end());
      else ints.insert(ints.end(), disp.begin(), disp.end());
      for (int i = 0; i < n; i++)
        for (int j = 0; j < bl[i]; j++) place(o, any, *c, h ? disp[i] + j * ext : (disp[i] + j) * ext);
      break;
    }
    case 5:
    case 6: { // indexed_block, hindexed_block
      int n = r(0, 4), bl = r(0, 3);
      bool h = kind == 6;
      combiner = h ? MPI_COMBINER_HINDEXED_BLOCK : MPI_COMBINER_INDEXED_BLOCK;
      std::vector<int> disp(n);
      for (int i = 0; i < n; i++) disp[i] = h ? r(-50, 100) : r(-4, 8);
      ints = {n, bl};
      if (h) aints.assign(disp.begin(), disp.end());
      else ints.insert(ints.end(), disp.begin(), disp.end());
      for (int i = 0; i < n; i++)
        for (int j = 0; j < bl; j++) place(o, any, *c, h ? disp[i] + j * ext : (disp[i] + j) * ext);
      break;
    }
    case 7: { // struct of 1..3 types
      int n = r(1, 3);
      combiner = MPI_COMBINER_STRUCT;
      std::vector<Ref *> cs = {c};
      for (int i = 1; i < n; i++) cs.push_back(r(0, 2) ? gen(depth - 1) : c);
      kids.clear();
      ints = {n};
      for (int i = 0; i < n; i++) {
        int bl = r(0, 3);
        ptrdiff_t d = r(0, 100);
        ints.push_back(bl);
        aints.push_back(d);
        kids.push_back(cs[i]->t);
        for (int j = 0; j < bl; j++) place(o, any, *cs[i], d + j * cs[i]->extent());
      }
      if (!o.sticky && o.align > 1 && o.extent() % (ptrdiff_t)o.align)
        o.ub += (ptrdiff_t)o.align - o.extent() % (ptrdiff_t)o.align;
      break;
    }
    case 8: { // resized
      ptrdiff_t lb = r(-16, 16), extent = r(1, 64);
      combiner = MPI_COMBINER_RESIZED;
      aints = {lb, extent};
      place(o, any, *c, 0);
      o.lb = lb;
      o.ub = lb + extent;
      o.sticky = true;
      break;
    }
    case 9: // dup
      combiner = MPI_COMBINER_DUP;
      place(o, any, *c, 0);
      break;
    case 10: { // subarray
      int nd = r(1, 3), order = r(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
      std::vector<int> sz(nd), sub(nd), st(nd);
      for (int k = 0; k < nd; k++) {
        sz[k] = r(1, 4);
        sub[k] = r(1, sz[k]);
        st[k] = r(0, sz[k] - sub[k]);
      }
      combiner = MPI_COMBINER_SUBARRAY;
      ints = {nd};
      for (auto *v : {&sz, &sub, &st}) ints.insert(ints.end(), v->begin(), v->end());
      ints.push_back(order);
      // walk the box in type map order: the last (C) or first (Fortran) index fastest
      std::vector<int> ix(st);
      long total = 1;
      for (int k = 0; k < nd; k++) total *= sub[k];
      for (long n = 0; n < total; n++) {
        ptrdiff_t lin = 0;
        if (order == MPI_ORDER_C)
          for (int k = 0; k < nd; k++) lin = lin * sz[k] + ix[k];
        else
          for (int k = nd - 1; k >= 0; k--) lin = lin * sz[k] + ix[k];
        place(o, any, *c, lin * ext);
        for (int j = 0; j < nd; j++) {
          int k = order == MPI_ORDER_C ? nd - 1 - j : j;
          if (++ix[k] < st[k] + sub[k]) break;
          ix[k] = st[k];
        }
      }
      long all = 1;
      for (int k = 0; k < nd; k++) all *= sz[k];
      o.lb = 0;
      o.ub = all * ext;
      o.sticky = true;
      break;
    }
    default: { // darray
      int nd = r(1, 2), order = r(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
      std::vector<int> g(nd), dist(nd), darg(nd), ps(nd);
      int size = 1;
      for (int k = 0; k < nd; k++) {
        g[k] = r(1, 6);
        ps[k] = r(1, 3);
        int d = r(0, 2);
        dist[k] = d == 0 ? MPI_DISTRIBUTE_BLOCK : d == 1 ? MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_NONE;
        if (dist[k] == MPI_DISTRIBUTE_NONE) ps[k] = 1;
        int minb = (g[k] + ps[k] - 1) / ps[k];
        darg[k] = r(0, 1) ? MPI_DISTRIBUTE_DFLT_DARG
                          : dist[k] == MPI_DISTRIBUTE_BLOCK ? minb + r(0, 1) : r(1, 3);
        size *= ps[k];
      }
      int rank = r(0, size - 1);
      combiner = MPI_COMBINER_DARRAY;
      ints = {size, rank, nd};
      for (auto *v : {&g, &dist, &darg, &ps}) ints.insert(ints.end(), v->begin(), v->end());
      ints.push_back(order);
      // owned indices per dimension, by asking each global index who owns it
      std::vector<std::vector<int>> own(nd);
      int rest = rank;
      std::vector<int> coord(nd);
      for (int k = nd - 1; k >= 0; k--) {
        coord[k] = rest % ps[k];
        rest /= ps[k];
      }
      for (int k = 0; k < nd; k++)
        for (int x = 0; x < g[k]; x++) {
          int owner;
          if (dist[k] == MPI_DISTRIBUTE_NONE) owner = 0;
          else if (dist[k] == MPI_DISTRIBUTE_BLOCK)
            owner = x / (darg[k] == MPI_DISTRIBUTE_DFLT_DARG ? (g[k] + ps[k] - 1) / ps[k] : darg[k]);
          else owner = (x / (darg[k] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg[k])) % ps[k];
          if (owner == coord[k]) own[k].push_back(x);
        }
      std::vector<size_t> ix(nd, 0);
      bool empty = false;
      for (int k = 0; k < nd; k++) empty |= own[k].empty();
      while (!empty) {
        ptrdiff_t lin = 0;
        if (order == MPI_ORDER_C)
          for (int k = 0; k < nd; k++) lin = lin * g[k] + own[k][ix[k]];
        else
          for (int k = nd - 1; k >= 0; k--) lin = lin * g[k] + own[k][ix[k]];
        place(o, any, *c, lin * ext);
        int j = 0;
        for (; j < nd; j++) {
          int k = order == MPI_ORDER_C ? nd - 1 - j : j;
          if (++ix[k] < own[k].size()) break;
          ix[k] = 0;
        }
        if (j == nd) break;
      }
      long all = 1;
      for (int k = 0; k < nd; k++) all *= g[k];
      o.lb = 0;
      o.ub = all * ext;
      o.sticky = true;
      break;
    }
    }
    if (o.map.size() > 3000) return nullptr; // keep the test fast
    o.t = T.make(combiner, ints, aints, kids, /*commit=*/r(0, 3) == 0);
    refs.push_back(std::move(ref));
    return refs.back().get();
  }
};

// The byte stream of `count` elements of r at base (reference: entry by entry).
std::vector<std::pair<ptrdiff_t, size_t>> stream_of(const Ref &r, size_t count) {
  std::vector<std::pair<ptrdiff_t, size_t>> s;
  for (size_t e = 0; e < count; e++)
    for (const Entry &x : r.map) s.push_back({(ptrdiff_t)e * r.extent() + x.off, x.len});
  return s;
}

// A buffer covering every byte `count` elements of r touch, with margins.
struct Buf {
  std::vector<unsigned char> mem;
  ptrdiff_t origin; // index in mem of the layout's address 0
  Buf(const Ref &r, size_t count, unsigned char fill) {
    ptrdiff_t lo = 0, hi = 1;
    for (auto &p : stream_of(r, count)) {
      lo = std::min(lo, p.first);
      hi = std::max(hi, p.first + (ptrdiff_t)p.second);
    }
    mem.assign((size_t)(hi - lo) + 64, fill);
    origin = -lo + 32;
  }
  unsigned char *at0() { return mem.data() + origin; }
};

size_t map_size(const Ref &r) {
  size_t n = 0;
  for (auto &e : r.map) n += e.len;
  return n;
}

TEST(DatatypeProperty, RandomNestedTypesAgainstNaiveReference) {
  // SKN_DT_SEED / SKN_DT_ITERS widen the search when hunting a bug.
  const char *seed_env = getenv("SKN_DT_SEED"), *iters_env = getenv("SKN_DT_ITERS");
  const int iters = iters_env ? atoi(iters_env) : 400;
  Gen g(seed_env ? strtoull(seed_env, nullptr, 10) : 12345);
  int checked = 0;
  for (int iter = 0; iter < iters; iter++) {
    Ref *a = g.gen(3), *b = g.gen(3);
    for (Ref *x : {a, b})
      if (!(x->t->flags & SKN_DT_COMMITTED) && (x->t->flags & SKN_DT_DERIVED))
        ASSERT_EQ(skn_dt_commit((skn_dtype *)x->t), SKN_OK);
    SCOPED_TRACE("iteration " + std::to_string(iter));
    // scalars
    for (Ref *x : {a, b}) {
      const skn_dtype *t = x->t;
      ASSERT_EQ(t->size, map_size(*x));
      ASSERT_EQ(t->lb, x->lb);
      ASSERT_EQ(t->extent, x->extent());
      ASSERT_EQ(t->nelems, x->map.size());
      if (!x->map.empty()) {
        ptrdiff_t lo = x->map[0].off, hi = lo;
        for (auto &e : x->map) {
          lo = std::min(lo, e.off);
          hi = std::max(hi, e.off + (ptrdiff_t)e.len);
        }
        ASSERT_EQ(t->true_lb, lo);
        ASSERT_EQ(t->true_extent, hi - lo);
      }
      // signature: expanded runs == the reference's classes
      if (t->nsig >= 0) {
        std::vector<uint32_t> sig;
        for (size_t rep = 0; rep < t->sig_reps; rep++)
          for (int k = 0; k < t->nsig; k++) sig.insert(sig.end(), t->sig[k].count, t->sig[k].code);
        std::vector<uint32_t> want;
        for (auto &e : x->map) want.push_back(e.code);
        if (t->size) ASSERT_EQ(sig, want);
      }
      // Get_elements on every partial length of two elements
      size_t sz = t->size;
      std::vector<size_t> ends; // cumulative entry ends over two elements
      size_t acc = 0;
      for (int rep = 0; rep < 2; rep++)
        for (auto &e : x->map) ends.push_back(acc += e.len);
      for (size_t bytes = 0; bytes <= 2 * sz; bytes++) {
        long long want = 0;
        size_t pos = 0;
        for (size_t k = 0; k < ends.size(); k++) {
          if (ends[k] <= bytes) {
            want = (long long)k + 1;
            pos = ends[k];
          }
        }
        if (pos != bytes) want = -1;
        if (bytes == 0) want = 0;
        ASSERT_EQ(skn_dt_elements(t, (long long)bytes), want) << "bytes=" << bytes;
        if (want > 0) ASSERT_EQ(skn_dt_element_bytes(t, want), (long long)bytes) << "elements=" << want;
      }
    }
    // typed copy a -> b, compared with the naive byte-stream reference
    size_t ca = (size_t)g.r(0, 3), cb = (size_t)g.r(0, 3);
    Buf src(*a, ca, 0), dst(*b, cb, 0xEE), want(*b, cb, 0xEE);
    for (auto &m : src.mem) m = (unsigned char)g.r(0, 255);
    std::vector<unsigned char> stream;
    for (auto &p : stream_of(*a, ca))
      for (size_t k = 0; k < p.second; k++) stream.push_back(src.at0()[p.first + (ptrdiff_t)k]);
    size_t bytes = std::min(stream.size(), cb * map_size(*b)), pos = 0;
    for (auto &p : stream_of(*b, cb))
      for (size_t k = 0; k < p.second && pos < bytes; k++) want.at0()[p.first + (ptrdiff_t)k] = stream[pos++];
    ASSERT_EQ(skn_dt_copy(dst.at0(), cb, b->t, src.at0(), ca, a->t), bytes);
    ASSERT_EQ(dst.mem, want.mem) << "typed copy differs from the reference";
    // a -> a: the same layout on both sides
    {
      Buf d(*a, ca, 0xEE), w(*a, ca, 0xEE);
      size_t q = 0;
      for (auto &p : stream_of(*a, ca))
        for (size_t k = 0; k < p.second; k++) w.at0()[p.first + (ptrdiff_t)k] = stream[q++];
      ASSERT_EQ(skn_dt_copy(d.at0(), ca, a->t, src.at0(), ca, a->t), stream.size());
      ASSERT_EQ(d.mem, w.mem) << "same-layout copy differs from the reference";
    }
    // pack a, compare the packed bytes, unpack into b
    std::vector<unsigned char> packed(stream.size() + 1, 0x55);
    skn_dt_pack(packed.data(), src.at0(), a->t, stream.size());
    ASSERT_TRUE(std::equal(stream.begin(), stream.end(), packed.begin())) << "pack differs from the reference";
    ASSERT_EQ(packed.back(), 0x55);
    Buf dst2(*b, cb, 0xEE);
    skn_dt_unpack(dst2.at0(), b->t, packed.data(), bytes);
    ASSERT_EQ(dst2.mem, want.mem) << "pack-then-unpack differs from the reference";
    // a slice from the middle of the stream
    if (stream.size() > 2) {
      size_t skip = (size_t)g.r(0, (int)stream.size() - 1), n = (size_t)g.r(1, (int)(stream.size() - skip));
      std::vector<unsigned char> part(n);
      skn_dt_pack_at(part.data(), src.at0(), a->t, skip, n);
      ASSERT_TRUE(std::equal(part.begin(), part.end(), stream.begin() + (ptrdiff_t)skip)) << "skip=" << skip;
      Buf d3(*a, ca, 0xEE), w3(*a, ca, 0xEE);
      skn_dt_unpack_at(d3.at0(), a->t, skip, part.data(), n);
      size_t q = 0;
      for (auto &p : stream_of(*a, ca))
        for (size_t k = 0; k < p.second; k++, q++)
          if (q >= skip && q < skip + n) w3.at0()[p.first + (ptrdiff_t)k] = part[q - skip];
      ASSERT_EQ(d3.mem, w3.mem) << "unpack_at skip=" << skip;
    }
    checked++;
  }
  EXPECT_EQ(checked, iters);
}

// ------------------------------------------------------------------ external32

TEST(Datatype, External32IsBigEndianWithStandardSizes) {
  Types T;
  struct S { int i; double d; long double ld; short s[2]; };
  auto *s = T.structure({1, 1, 1, 2}, {offsetof(S, i), offsetof(S, d), offsetof(S, ld), offsetof(S, s)},
                        {INT, DOUBLE, LDOUBLE, SHORT});
  S v[2];
  std::memset(v, 0, sizeof v);
  v[0] = {0x01020304, 1.0, -2.5L, {0x0a0b, -2}};
  v[1] = {-1, -0.0, 3.0e-4000L, {1, 2}};
  std::vector<unsigned char> out(2 * s->size);
  ASSERT_EQ(skn_dt_pack_external(out.data(), v, 2, s), SKN_OK);
  const unsigned char want0[] = {1, 2, 3, 4, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(0, std::memcmp(out.data(), want0, sizeof want0));
  // -2.5 in binary128: sign 1, exponent 0x4000, fraction .01 -> c000 4000 0000 ...
  const unsigned char want_ld[16] = {0xc0, 0x00, 0x40, 0};
  EXPECT_EQ(0, std::memcmp(out.data() + 12, want_ld, 16));
  const unsigned char want_s[] = {0x0a, 0x0b, 0xff, 0xfe};
  EXPECT_EQ(0, std::memcmp(out.data() + 28, want_s, 4));
  S back[2];
  std::memset(back, 0, sizeof back);
  ASSERT_EQ(skn_dt_unpack_external(back, 2, s, out.data()), SKN_OK);
  for (int k = 0; k < 2; k++) {
    EXPECT_EQ(back[k].i, v[k].i);
    EXPECT_EQ(back[k].d, v[k].d);
    EXPECT_EQ(back[k].ld, v[k].ld);
    EXPECT_EQ(back[k].s[0], v[k].s[0]);
    EXPECT_EQ(back[k].s[1], v[k].s[1]);
  }
  // many elements go through the bounce buffer in pieces
  std::vector<double> big(3000), big2(3000);
  for (size_t k = 0; k < big.size(); k++) big[k] = (double)k * 1.5 - 7;
  auto *every = T.vector(1000, 1, 3, DOUBLE);
  std::vector<unsigned char> eb(1000 * 8);
  ASSERT_EQ(skn_dt_pack_external(eb.data(), big.data(), 1, every), SKN_OK);
  EXPECT_EQ(eb[0], 0xc0); // -7.0
  ASSERT_EQ(skn_dt_unpack_external(big2.data(), 1, every, eb.data()), SKN_OK);
  for (size_t k = 0; k < big.size(); k++) EXPECT_EQ(big2[k], k % 3 ? 0.0 : big[k]) << k;
}

// ------------------------------------------------------------------ no allocation in the copy path

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SKN_NO_MALLOC_COUNT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SKN_NO_MALLOC_COUNT 1
#endif
#endif

std::atomic<long> g_allocs{0};
std::atomic<bool> g_counting{false};

}  // namespace

#ifndef SKN_NO_MALLOC_COUNT
// Counting wrappers around glibc's allocator (this test binary only).
extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void *malloc(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs++;
  return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs++;
  return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs++;
  return __libc_realloc(p, n);
}
void *aligned_alloc(size_t al, size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs++;
  return __libc_memalign(al, n);
}
}
#endif

namespace {

TEST(DatatypeNoAlloc, TypedSendReceiveCopiesWithoutBuffers) {
#ifdef SKN_NO_MALLOC_COUNT
  GTEST_SKIP() << "allocation counting is off under sanitizers";
#else
  Types T;
  const int N = 512, M = 300; // a 512 x 300 array of doubles; columns are vectors
  auto *col = T.vector(N, 1, M, DOUBLE);
  auto *col_r = T.resized(col, 0, sizeof(double)); // consecutive columns
  // self check of the counter
  g_counting = true;
  void *p = malloc(16);
  g_counting = false;
  free(p);
  ASSERT_EQ(g_allocs.exchange(0), 1) << "malloc is not interposed";

  std::vector<double> a((size_t)N * M), b((size_t)N * M, 0.0), c(4 * (size_t)N, 0.0);
  for (size_t k = 0; k < a.size(); k++) a[k] = (double)k;
  g_counting = true;
  size_t n1 = skn_dt_copy(b.data(), 4, col_r, a.data(), 4, col_r); // 4 columns -> 4 columns
  size_t n2 = skn_dt_copy(c.data(), 4 * N, DOUBLE, a.data() + 7, 4, col_r); // 4 columns -> contiguous
  g_counting = false;
  EXPECT_EQ(g_allocs.load(), 0) << "the copy engine allocated";
  EXPECT_EQ(n1, 4u * N * 8);
  EXPECT_EQ(n2, 4u * N * 8);
  EXPECT_EQ(b[(size_t)5 * M + 3], a[(size_t)5 * M + 3]);
  EXPECT_EQ(b[4], 0.0);
  EXPECT_EQ(c[(size_t)2 * N + 9], a[(size_t)9 * M + 7 + 2]);

  // Through the point-to-point engine, receive posted first and by rendezvous (larger
  // than the eager limit): one copy from the send buffer to the receive buffer.
  for (int workers : {1, 2}) {
    g_allocs = 0;
    std::atomic<int> bad{0};
    skntest::run_ranks(2, workers, [&](skn_rank *me) {
      std::vector<double> mine((size_t)N * M), got(4 * (size_t)N);
      for (size_t k = 0; k < mine.size(); k++) mine[k] = (double)k + 0.5;
      for (int round = 0; round < 3; round++) { // round 0 warms up the request pools
        if (round == 1 && me->world_rank == 0) g_counting = true;
        if (me->world_rank == 1) {
          skn_req *r = skn_req_alloc(me);
          r->kind = SKN_REQ_RECV;
          r->buf = got.data();
          r->count = 4 * (size_t)N;
          r->dt = DOUBLE;
          r->ctx = 0;
          r->src = 0;
          r->tag = round;
          skn_p2p_recv(me, r);
          skn_req_wait(r);
          if (r->bytes != 4u * N * 8 || got[(size_t)3 * N + 1] != mine[(size_t)1 * M + 3]) bad++;
          skn_req_release(r);
        } else {
          if (round == 2) for (int y = 0; y < 20; y++) skn_sched_yield(); // receiver posts first
          skn_msg m{};
          m.buf = mine.data();
          m.count = 4;
          m.dt = col_r;
          m.src = 0;
          m.tag = round;
          m.comm = MPI_COMM_WORLD;
          m.peer = skn_job_g.ranks[1];
          skn_p2p_send(me, &m, nullptr);
        }
      }
      if (me->world_rank == 0) g_counting = false;
    }, /*eager_limit=*/4096);
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(g_allocs.load(), 0) << "a derived-type transfer allocated (workers=" << workers << ")";
  }
#endif
}

// ------------------------------------------------------------------ lifetime

TEST(DatatypeLifetime, FreeWhileAReceiveIsPendingDefersTheLayout) {
  skntest::run_ranks(1, 1, [&](skn_rank *me) {
    int err;
    int ints[3] = {4, 1, 2};
    const skn_dtype *kids[1] = {INT};
    skn_dtype *t = skn_dt_create(MPI_COMBINER_VECTOR, 3, ints, 0, nullptr, 1, kids, &err);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(skn_dt_commit(t), SKN_OK);
    ASSERT_EQ(skn_dt_table_add(me, t), 1);
    int buf[8] = {0};
    skn_req *r = skn_req_alloc(me);
    r->kind = SKN_REQ_RECV;
    r->buf = buf;
    r->count = 1;
    r->dt = t;
    r->src = 0;
    r->tag = 1;
    skn_p2p_recv(me, r);
    EXPECT_TRUE(skn_dt_in_use(me, t));
    skn_dt_table_remove(me, 1);
    skn_dt_release(me, t); // MPI_Type_free while the receive is pending
    skn_dtype *sentinel = me->types[0];
    EXPECT_EQ(sentinel->next, t) << "the type must wait on the deferred list";
    EXPECT_EQ(t->blocks[1].off, 8) << "its layout is still intact";
    int data[4] = {10, 11, 12, 13};
    skn_msg m{};
    m.buf = data;
    m.count = 4;
    m.dt = INT;
    m.tag = 1;
    m.peer = me;
    skn_p2p_send(me, &m, nullptr);
    skn_req_wait(r);
    EXPECT_EQ(buf[0], 10);
    EXPECT_EQ(buf[6], 13);
    EXPECT_EQ(buf[1], 0);
    skn_dt_collect(me);
    EXPECT_EQ(sentinel->next, t) << "the request still holds it";
    skn_req_release(r);
    skn_dt_collect(me);
    EXPECT_EQ(sentinel->next, nullptr) << "freed once no request uses it";
    EXPECT_EQ(skn_dt_table_add(me, nullptr), 1) << "slot reused";
    skn_dt_table_remove(me, 1);
  });
}

TEST(DatatypeLifetime, ChildrenLiveAsLongAsTheirParents) {
  int err;
  int n = 3;
  const skn_dtype *k1[1] = {DOUBLE};
  skn_dtype *c = skn_dt_create(MPI_COMBINER_CONTIGUOUS, 1, &n, 0, nullptr, 1, k1, &err);
  const skn_dtype *k2[1] = {c};
  int vi[3] = {2, 1, 2};
  skn_dtype *v = skn_dt_create(MPI_COMBINER_VECTOR, 3, vi, 0, nullptr, 1, k2, &err);
  EXPECT_EQ(c->refs, 2);
  skn_dt_release(nullptr, c); // the user frees the child first
  ASSERT_EQ(skn_dt_commit(v), SKN_OK); // flattening still reads it
  EXPECT_EQ(v->size, 48u);
  EXPECT_EQ(v->extent, 72);
  skn_dt_release(nullptr, v);
}

}  // namespace
