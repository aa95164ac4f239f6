#include "correlation_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpucap::builder {
namespace {

// Dense ids index an array; ids spread thin go to the hash table. Both must
// answer alike: first insert stands, absent keys (inside, below and above the
// range) are missing.
TEST(CorrelationMap, DenseAndHashedAnswerAlike) {
  struct Case {
    std::vector<uint64_t> keys;
    bool dense;
  };
  std::vector<Case> cases = {
      {{100, 101, 103, 104, 110}, true},
      {{5, 1'000'000'000, 7, 3'000'000'000}, false},
  };
  for (const Case& c : cases) {
    uint64_t low = UINT64_MAX, high = 0;
    for (uint64_t k : c.keys) low = std::min(low, k), high = std::max(high, k);
    CorrelationMap map;
    map.Reset(low, high, c.keys.size());
    EXPECT_EQ(map.dense(), c.dense);
    for (size_t i = 0; i < c.keys.size(); ++i) map.Insert(c.keys[i], static_cast<uint32_t>(i));
    map.Insert(c.keys[0], 99);  // a repeated id: the first record stands
    for (size_t i = 0; i < c.keys.size(); ++i) EXPECT_EQ(map.Find(c.keys[i]), i) << c.keys[i];
    for (uint64_t absent : {low - 1, high + 1, low + 2, uint64_t{0}, UINT64_MAX}) {
      bool present = false;
      for (uint64_t k : c.keys) present |= k == absent;
      if (!present) {
        EXPECT_EQ(map.Find(absent), CorrelationMap::kMissing) << absent;
      }
    }
  }
}

TEST(CorrelationMap, ResetForgetsTheLastWindow) {
  CorrelationMap map;
  map.Reset(10, 20, 11);
  map.Insert(15, 1);
  map.Reset(10, 20, 11);
  EXPECT_EQ(map.Find(15), CorrelationMap::kMissing);
  map.Reset(0, 0, 0);
  EXPECT_EQ(map.Find(15), CorrelationMap::kMissing);
}

}  // namespace
}  // namespace gpucap::builder
