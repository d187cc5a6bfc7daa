// The page pool (allocator/pool.c) on its own: first fit with alignment, coalescing of
// runs given back, zeroed-ness, the keep policy, in-place extension, separate nodes.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

extern "C" {
#include "pool.h"
}

namespace {

const size_t kPage = 4096;
const size_t kChunk = 1 << 20;

class Pool : public ::testing::Test {
 protected:
  void SetUp() override {
    skn_pool_config c = {kChunk, 64 * kPage, true};
    skn_pool_configure(&c);
  }
  // Each test uses a node of its own, so the pools do not see each other's runs.
  static skn_pool_stats Stats(int node) {
    skn_pool_stats s;
    skn_pool_get_stats(node, &s);
    return s;
  }
};

TEST_F(Pool, FreshChunkIsZeroedAndAligned) {
  const int node = 10;
  bool zero = false;
  void *p = skn_pool_take(node, nullptr, 8 * kPage, 64 * kPage, &zero);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(zero);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (64 * kPage), 0u);
  static_cast<char *>(p)[0] = 1;
  skn_pool_stats s = Stats(node);
  EXPECT_EQ(s.maps, 1u);
  EXPECT_EQ(s.free_bytes, s.map_bytes - 8 * kPage); // the slack stays in the pool
  skn_pool_put(node, p, 8 * kPage);
  EXPECT_EQ(Stats(node).free_bytes, Stats(node).map_bytes);
}

TEST_F(Pool, FreedRunIsReusedWithoutMapping) {
  const int node = 11;
  bool zero = false;
  char *a = static_cast<char *>(skn_pool_take(node, nullptr, 4 * kPage, kPage, &zero));
  ASSERT_NE(a, nullptr);
  memset(a, 7, 4 * kPage);
  skn_pool_put(node, a, 4 * kPage);
  zero = false;
  char *b = static_cast<char *>(skn_pool_take(node, nullptr, 4 * kPage, kPage, &zero));
  EXPECT_EQ(b, a); // first fit: the lowest run
  EXPECT_FALSE(zero); // still resident, not cleared
  EXPECT_EQ(b[0], 7);
  EXPECT_EQ(Stats(node).maps, 1u);
  EXPECT_EQ(Stats(node).reused_bytes, 4 * kPage);
  // asked for zeroed memory, the pool clears a dirty run
  skn_pool_put(node, b, 4 * kPage);
  zero = true;
  char *c = static_cast<char *>(skn_pool_take(node, nullptr, 4 * kPage, kPage, &zero));
  EXPECT_TRUE(zero);
  for (size_t i = 0; i < 4 * kPage; i++) ASSERT_EQ(c[i], 0);
  skn_pool_put(node, c, 4 * kPage);
}

TEST_F(Pool, NeighboursCoalesce) {
  const int node = 12;
  bool zero = false;
  void *r[8];
  for (auto &p : r) {
    p = skn_pool_take(node, nullptr, kPage, kPage, &zero);
    memset(p, 1, kPage);
  }
  size_t before = Stats(node).nruns;
  for (int i = 0; i < 8; i += 2) skn_pool_put(node, r[i], kPage);
  EXPECT_EQ(Stats(node).nruns, before + 4);
  for (int i = 1; i < 8; i += 2) skn_pool_put(node, r[i], kPage);
  // the eight pages form one dirty run; the rest of the chunk is a zeroed run
  EXPECT_EQ(Stats(node).nruns, 2u);
  bool z = false;
  void *big = skn_pool_take(node, nullptr, 8 * kPage, kPage, &z);
  EXPECT_EQ(big, r[0]);
  EXPECT_FALSE(z);
  skn_pool_put(node, big, 8 * kPage);
}

TEST_F(Pool, KeepLimitPurges) {
  const int node = 13;
  bool zero = false;
  const size_t n = 100 * kPage; // above the 64-page keep limit
  char *p = static_cast<char *>(skn_pool_take(node, nullptr, n, kPage, &zero));
  memset(p, 3, n);
  skn_pool_put(node, p, n);
  skn_pool_stats s = Stats(node);
  EXPECT_EQ(s.purges, 1u);
  EXPECT_EQ(s.dirty_bytes, 0u);
  zero = false;
  char *q = static_cast<char *>(skn_pool_take(node, nullptr, n, kPage, &zero));
  EXPECT_EQ(q, p);
  EXPECT_TRUE(zero); // purged pages read as zero
  EXPECT_EQ(q[0], 0);
  skn_pool_put(node, q, n);
}

TEST_F(Pool, InPlaceExtension) {
  const int node = 14;
  bool zero = false;
  char *p = static_cast<char *>(skn_pool_take(node, nullptr, 2 * kPage, kPage, &zero));
  zero = false;
  void *next = skn_pool_take(node, p + 2 * kPage, 3 * kPage, kPage, &zero);
  EXPECT_EQ(next, p + 2 * kPage);
  zero = false;
  EXPECT_EQ(skn_pool_take(node, p + 100 * kChunk, kPage, kPage, &zero), nullptr); // not ours
  skn_pool_put(node, p, 5 * kPage);
}

TEST_F(Pool, NodesAreSeparate) {
  bool zero = false;
  void *a = skn_pool_take(15, nullptr, kPage, kPage, &zero);
  skn_pool_put(15, a, kPage);
  size_t maps16 = Stats(16).maps;
  void *b = skn_pool_take(16, nullptr, kPage, kPage, &zero);
  EXPECT_EQ(Stats(16).maps, maps16 + 1); // node 16 does not take node 15's page
  skn_pool_put(16, b, kPage);
}

TEST_F(Pool, LargerThanChunk) {
  const int node = 17;
  bool zero = false;
  void *p = skn_pool_take(node, nullptr, 3 * kChunk, 2 * kChunk, &zero);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (2 * kChunk), 0u);
  EXPECT_TRUE(zero);
  skn_pool_put(node, p, 3 * kChunk);
}

TEST_F(Pool, BindOnlyRealNodes) {
  EXPECT_TRUE(skn_pool_node_real(0)); // every Linux machine has node 0
  EXPECT_FALSE(skn_pool_node_real(-1));
  void *m = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_EQ(skn_pool_bind(m, kPage, 0), 0);
  EXPECT_EQ(skn_pool_bind(m, kPage, -1), 1);
  if (!skn_pool_node_real(SKN_POOL_MAX_NODE)) EXPECT_EQ(skn_pool_bind(m, kPage, SKN_POOL_MAX_NODE), 1);
  munmap(m, kPage);
}

}  // namespace
