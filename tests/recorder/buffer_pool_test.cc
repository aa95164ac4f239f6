#include "buffer_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace gpucap::recorder {
namespace {

TEST(BufferPool, NeverHandsOutMoreThanItsSize) {
  BufferPool pool(3, 1 << 16);
  std::set<uint8_t*> taken;
  for (int i = 0; i < 3; ++i) {
    uint8_t* b = pool.Take();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u) << "CUPTI needs 8-byte alignment";
    taken.insert(b);
  }
  EXPECT_EQ(taken.size(), 3u);
  EXPECT_EQ(pool.outstanding(), 3u);
  EXPECT_EQ(pool.Take(), nullptr);
  EXPECT_EQ(pool.Take(), nullptr);
  EXPECT_EQ(pool.exhausted(), 2u);
  uint8_t* back = *taken.begin();
  pool.Give(back);
  EXPECT_EQ(pool.outstanding(), 2u);
  EXPECT_EQ(pool.Take(), back) << "a returned buffer is reused, not a new one allocated";
  for (uint8_t* b : taken) pool.Give(b);
  EXPECT_EQ(pool.outstanding(), 0u);
}

}  // namespace
}  // namespace gpucap::recorder
