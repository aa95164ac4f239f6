#include "buffer_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
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

// CUPTI is told the buffers come zeroed (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER)
// and then leaves whatever a buffer held in the records it writes there.
TEST(BufferPool, EveryBufferHandedOutIsZero) {
  constexpr size_t kBytes = 3 << 16;
  BufferPool pool(2, kBytes);
  auto all_zero = [](const uint8_t* b) { return std::all_of(b, b + kBytes, [](uint8_t c) { return c == 0; }); };
  uint8_t* first = pool.Take();
  uint8_t* second = pool.Take();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(all_zero(first));
  EXPECT_TRUE(all_zero(second));
  // Records at the start, and a stray byte past them at the very end.
  std::memset(first, 0xab, 1000);
  first[kBytes - 1] = 0x5a;
  pool.Give(first);
  uint8_t* again = pool.Take();
  ASSERT_EQ(again, first);
  EXPECT_TRUE(all_zero(again)) << "a buffer given back is zero before it is handed out again";
  pool.Give(again);
  pool.Give(second);
}

}  // namespace
}  // namespace gpucap::recorder
