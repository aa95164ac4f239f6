#include "event_log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace gpucap::recorder {
namespace {

format::SmallMessage Range(uint32_t tid, uint64_t id) {
  format::RangeEvent e;
  e.os_tid = tid;
  e.id = id;
  return e;
}

TEST(EventLog, EveryEventArrivesInItsThreadsOrder) {
  std::mutex mu;
  std::vector<format::SmallMessage> got;
  std::atomic<int> batches{0};
  EventLog log(
      [&](std::vector<format::SmallMessage> batch) {
        std::lock_guard<std::mutex> lock(mu);
        ++batches;
        for (auto& m : batch) got.push_back(std::move(m));
        return true;
      },
      8);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t i = 0; i < 101; ++i) log.Add(Range(t, i));
    });
  }
  // Collect while producers run, from another thread.
  for (int i = 0; i < 20; ++i) log.Collect();
  for (auto& th : threads) th.join();
  log.Collect();
  ASSERT_EQ(got.size(), 6u * 101);
  std::map<uint32_t, int64_t> last;
  for (auto& m : got) {
    auto& e = std::get<format::RangeEvent>(m);
    auto it = last.find(e.os_tid);
    int64_t prev = it == last.end() ? -1 : it->second;
    EXPECT_EQ(static_cast<int64_t>(e.id), prev + 1) << "thread " << e.os_tid;
    last[e.os_tid] = static_cast<int64_t>(e.id);
  }
  EXPECT_GT(batches.load(), 6) << "full buffers are handed over by their threads";
  EXPECT_EQ(log.dropped(), 0u);
}

TEST(EventLog, RejectedBatchesAreCounted) {
  EventLog log([](std::vector<format::SmallMessage>) { return false; }, 4);
  std::thread t([&] {
    for (uint64_t i = 0; i < 10; ++i) log.Add(Range(1, i));
  });
  t.join();
  log.Collect();
  EXPECT_EQ(log.dropped(), 10u);
}

TEST(EventLog, ALogInTheMemoryOfAnOldOneStartsFresh) {
  // A thread remembers its buffer per log; a new log at a destroyed log's
  // address must not inherit that buffer.
  for (int round = 0; round < 20; ++round) {
    std::vector<format::SmallMessage> got;
    auto log = std::make_unique<EventLog>(
        [&](std::vector<format::SmallMessage> batch) {
          for (auto& m : batch) got.push_back(std::move(m));
          return true;
        },
        64);
    log->Add(Range(5, static_cast<uint64_t>(round)));
    log->Collect();
    ASSERT_EQ(got.size(), 1u) << "round " << round;
  }
}

}  // namespace
}  // namespace gpucap::recorder
