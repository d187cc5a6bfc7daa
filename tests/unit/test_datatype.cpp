// The copy engine between typed layouts (predefined types with gaps).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

extern "C" {
#include "core/core.h"
}

namespace {

struct ShortInt { short v; int i; };
struct DoubleInt { double v; int i; };

TEST(Datatype, PairTypesHaveTheirCLayout) {
  const skn_dtype &si = skn_dt_predefined[38];
  EXPECT_EQ(si.size, sizeof(short) + sizeof(int));
  EXPECT_EQ(si.extent, (ptrdiff_t)sizeof(ShortInt));
  const skn_dtype &di = skn_dt_predefined[35];
  EXPECT_EQ(di.size, sizeof(double) + sizeof(int));
  EXPECT_EQ(di.extent, (ptrdiff_t)sizeof(DoubleInt));
}

TEST(Datatype, PackAndUnpackSkipPadding) {
  const skn_dtype *si = &skn_dt_predefined[38];
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
  const skn_dtype *i32 = &skn_dt_predefined[8];
  int src[4] = {1, 2, 3, 4}, dst[4] = {0, 0, 0, 0};
  EXPECT_EQ(skn_dt_copy(dst, 2, i32, src, 4, i32), 2 * sizeof(int));
  EXPECT_EQ(dst[1], 2);
  EXPECT_EQ(dst[2], 0);
}

TEST(Datatype, TypedToTypedCopyAcrossDifferentLayouts) {
  // Same type signature (short, int) x 2: typed pairs to a packed byte view and back.
  const skn_dtype *si = &skn_dt_predefined[38];
  ShortInt a[2] = {{5, 50}, {6, 60}}, b[2] = {};
  EXPECT_EQ(skn_dt_copy(b, 2, si, a, 2, si), 2 * si->size);
  EXPECT_EQ(b[1].v, 6);
  EXPECT_EQ(b[1].i, 60);
}

}  // namespace
