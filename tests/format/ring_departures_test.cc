#include "ring_departures.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace gpucap::format {
namespace {

TEST(RingDepartures, ClosesLeaveWithTheFrameThatMadeThemAndOnlyThen) {
  RingDepartures d;
  d.AddFrame(3);
  d.Closed(3, 10);
  d.AddFrame(7);
  d.Closed(7, 11);
  d.Closed(7, 12);
  std::vector<std::pair<uint64_t, uint64_t>> gone;
  auto note = [&](uint64_t order, uint64_t number) { gone.emplace_back(order, number); };
  EXPECT_FALSE(d.Advance(3, note)) << "frame 3 is still held";
  EXPECT_TRUE(gone.empty());
  EXPECT_TRUE(d.Advance(5, note));
  EXPECT_EQ(gone, (std::vector<std::pair<uint64_t, uint64_t>>{{3, 10}}));
  EXPECT_FALSE(d.Advance(6, note)) << "no frame of this type between";
  EXPECT_TRUE(d.Advance(8, note));
  EXPECT_EQ(gone, (std::vector<std::pair<uint64_t, uint64_t>>{{3, 10}, {7, 11}, {7, 12}}));
  EXPECT_EQ(d.oldest_held(), 8u);
}

TEST(RingDepartures, TheOldestHeldNeverGoesBack) {
  RingDepartures d;
  d.AddFrame(4);
  auto none = [](uint64_t, uint64_t) {};
  EXPECT_TRUE(d.Advance(9, none));
  EXPECT_FALSE(d.Advance(2, none));
  EXPECT_EQ(d.oldest_held(), 9u);
  d.AddFrame(12);
  EXPECT_FALSE(d.Advance(1, none));
  EXPECT_EQ(d.oldest_held(), 9u) << "9 stands, not 1";
  EXPECT_TRUE(d.Advance(13, none)) << "12 leaves";
}

}  // namespace
}  // namespace gpucap::format
