#include "bounded_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace gpucap::format {
namespace {

TEST(BoundedQueue, FailsWhenFullAndRecoversWhenDrained) {
  BoundedQueue<int> q(4);
  ASSERT_EQ(q.capacity(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(q.Push(i));
  EXPECT_FALSE(q.Push(99));
  int v;
  ASSERT_TRUE(q.Pop(&v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(q.Push(4));
  for (int want = 1; want <= 4; ++want) {
    ASSERT_TRUE(q.Pop(&v));
    EXPECT_EQ(v, want);
  }
  EXPECT_FALSE(q.Pop(&v));
}

TEST(BoundedQueue, ManyProducersOneConsumerLoseNothingAccepted) {
  BoundedQueue<uint64_t> q(64);
  constexpr int kProducers = 8;
  constexpr uint64_t kEach = 20000;
  std::atomic<uint64_t> accepted_sum{0}, accepted{0}, rejected{0};
  std::atomic<bool> done{false};
  uint64_t popped_sum = 0, popped = 0;
  std::thread consumer([&] {
    uint64_t v;
    while (!done.load() || q.SizeApprox() > 0) {
      while (q.Pop(&v)) {
        popped_sum += v;
        ++popped;
      }
    }
    while (q.Pop(&v)) {
      popped_sum += v;
      ++popped;
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (uint64_t i = 0; i < kEach; ++i) {
        uint64_t v = p * kEach + i + 1;
        if (q.Push(v)) {
          accepted_sum += v;
          ++accepted;
        } else {
          ++rejected;
        }
      }
    });
  }
  for (auto& t : producers) t.join();
  done = true;
  consumer.join();
  EXPECT_EQ(accepted + rejected, kProducers * kEach);
  EXPECT_EQ(popped, accepted.load());
  EXPECT_EQ(popped_sum, accepted_sum.load());
}

}  // namespace
}  // namespace gpucap::format
