#include "range_log.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpucap::recorder {
namespace {

// What a log submitted, kept in submission order.
struct Sink {
  std::mutex mu;
  std::vector<format::SmallMessage> got;
  int batches = 0;
  RangeLog::Submit submit() {
    return [this](std::vector<format::SmallMessage> batch) {
      std::lock_guard<std::mutex> lock(mu);
      ++batches;
      for (auto& m : batch) got.push_back(std::move(m));
      return true;
    };
  }
};

RangeFields Push(uint64_t id, uint32_t tid = 0) {
  RangeFields f;
  f.kind = format::RangeKind::kPush;
  f.timestamp_ns = 1000 + id;
  f.id = id;
  f.os_tid = tid;
  return f;
}

std::string NameOf(size_t n, char c) { return std::string(n, c); }

TEST(RangeLog, EveryFieldComesBackAsTheRangeEventItWas) {
  Sink sink;
  RangeLog log(sink.submit(), RangeLog::Limits{}, nullptr);
  RangeLog::Writer* w = log.Mine();
  RangeFields f;
  f.kind = format::RangeKind::kStart;
  f.source = format::RangeSource::kApi;
  f.timestamp_ns = 123456789012345ull;
  f.os_tid = 77;
  f.id = 0xfedcba9876543210ull;
  f.domain = 5;
  f.category = 9;
  f.color = 0xff00ff00u;
  f.payload_type = 3;
  double d = -2.5;
  std::memcpy(&f.payload, &d, 8);
  std::vector<format::ExtPayload> ext(2);
  ext[0].schema_id = 42;
  ext[0].data = std::string("\0\1\2\3\4", 5);
  ext[1].schema_id = 43;
  ext[1].truncated = true;
  ext[1].data = NameOf(1024, 'p');
  ASSERT_TRUE(log.AddRange(w, f, "a name of 25 characters!!", &ext));
  RangeFields i = Push(1, 78);
  i.payload_type = 2;
  i.payload = static_cast<uint64_t>(int64_t{-7});
  ASSERT_TRUE(log.AddRange(w, i, ""));
  ASSERT_TRUE(log.AddMark(w, format::WindowMarkKind::kOpen, 99, 79, 3, "ProfilerStep#3"));
  log.Collect();

  ASSERT_EQ(sink.got.size(), 3u);
  format::RangeEvent want;
  want.kind = format::RangeKind::kStart;
  want.source = format::RangeSource::kApi;
  want.timestamp_ns = 123456789012345ull;
  want.os_tid = 77;
  want.id = 0xfedcba9876543210ull;
  want.name = "a name of 25 characters!!";
  want.domain = 5;
  want.category = 9;
  want.color = 0xff00ff00u;
  want.payload = -2.5;
  want.ext_payloads = ext;
  EXPECT_EQ(std::get<format::RangeEvent>(sink.got[0]), want);
  const auto& e1 = std::get<format::RangeEvent>(sink.got[1]);
  EXPECT_EQ(e1.name, "");
  EXPECT_EQ(e1.os_tid, 78u);
  EXPECT_EQ(e1.payload, (std::variant<std::monostate, uint64_t, int64_t, double>(int64_t{-7})));
  format::WindowMark mark;
  mark.kind = format::WindowMarkKind::kOpen;
  mark.timestamp_ns = 99;
  mark.os_tid = 79;
  mark.id = 3;
  mark.label = "ProfilerStep#3";
  EXPECT_EQ(std::get<format::WindowMark>(sink.got[2]), mark);
  EXPECT_EQ(log.dropped(), 0u);
}

TEST(RangeLog, ATidOfZeroIsTheAppendingThreads) {
  Sink sink;
  RangeLog log(sink.submit(), RangeLog::Limits{}, nullptr);
  RangeLog::Writer* w = log.Mine();
  log.AddRange(w, Push(1), "x");
  log.Collect();
  ASSERT_EQ(sink.got.size(), 1u);
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  EXPECT_EQ(std::get<format::RangeEvent>(sink.got[0]).os_tid, tid);
  EXPECT_EQ(w->os_tid, tid);
}

TEST(RangeLog, RecordsAcrossManyChunksKeepTheirOrderAndNamesLargerThanAChunkFit) {
  Sink sink;
  std::atomic<int> handed{0};
  RangeLog::Limits limits;
  limits.chunk_bytes = 512;
  limits.batch_events = 7;
  RangeLog log(sink.submit(), limits, [&] { ++handed; });
  RangeLog::Writer* w = log.Mine();
  std::vector<std::string> names;
  for (uint64_t i = 0; i < 300; ++i) {
    // Sizes around and above the chunk's, 0 to 1,100 bytes.
    names.push_back(NameOf((i * 37) % 1101, static_cast<char>('a' + i % 26)));
    ASSERT_TRUE(log.AddRange(w, Push(i), names.back()));
    if (i % 50 == 49) log.Collect(/*full_only=*/true);  // the handed-over chunks only
  }
  log.Collect();
  ASSERT_EQ(sink.got.size(), 300u);
  for (uint64_t i = 0; i < 300; ++i) {
    const auto& e = std::get<format::RangeEvent>(sink.got[i]);
    EXPECT_EQ(e.id, i);
    EXPECT_EQ(e.name, names[i]) << "record " << i;
  }
  EXPECT_GT(handed.load(), 50) << "each full chunk was handed over";
  EXPECT_EQ(log.dropped(), 0u);
}

TEST(RangeLog, PastItsBoundRecordsAreDroppedAndCountedThenAcceptedAgainOnceCollected) {
  Sink sink;
  RangeLog::Limits limits;
  limits.chunk_bytes = 1024;
  limits.max_bytes = 2048;  // two chunks in all
  RangeLog log(sink.submit(), limits, nullptr);
  RangeLog::Writer* w = log.Mine();
  int added = 0, made = 0;
  for (uint64_t i = 0; i < 100; ++i, ++made) added += log.AddRange(w, Push(i), NameOf(100, 'n'));
  EXPECT_LT(added, 100);
  EXPECT_EQ(log.dropped(), static_cast<uint64_t>(made - added));
  EXPECT_LE(log.chunk_bytes_in_use(), 2048u);
  log.Collect();
  EXPECT_EQ(sink.got.size(), static_cast<size_t>(added));
  EXPECT_TRUE(log.AddRange(w, Push(1000), "after the collection"));
  log.Collect();
  EXPECT_EQ(std::get<format::RangeEvent>(sink.got.back()).name, "after the collection");
}

TEST(RangeLog, RejectedBatchesAreCounted) {
  RangeLog log([](std::vector<format::SmallMessage>) { return false; }, RangeLog::Limits{}, nullptr);
  RangeLog::Writer* w = log.Mine();
  for (uint64_t i = 0; i < 10; ++i) log.AddRange(w, Push(i), "r");
  log.Collect();
  EXPECT_EQ(log.dropped(), 10u);
}

TEST(RangeLog, ManyThreadsCollectedWhileTheyRunEachInItsOrderAndExitedThreadsLetGo) {
  Sink sink;
  RangeLog::Limits limits;
  limits.chunk_bytes = 4096;
  RangeLog log(sink.submit(), limits, nullptr);
  std::vector<std::thread> threads;
  for (uint32_t t = 1; t <= 8; ++t) {
    threads.emplace_back([&, t] {
      RangeLog::Writer* w = log.Mine();
      for (uint64_t i = 0; i < 2000; ++i) {
        if (i % 3 == 0) {
          log.AddMark(w, format::WindowMarkKind::kOpen, i, t, i, "m");
        } else {
          log.AddRange(w, Push(i, t), NameOf(i % 90, 'x'));
        }
      }
    });
  }
  // Collections, of handed-over chunks and of everything, while they run.
  for (int i = 0; i < 200; ++i) log.Collect(i % 2 == 0);
  for (auto& th : threads) th.join();
  log.Collect();
  ASSERT_EQ(sink.got.size() + log.dropped(), 8u * 2000);
  EXPECT_EQ(log.dropped(), 0u);
  std::map<uint32_t, int64_t> last;
  for (const auto& m : sink.got) {
    uint32_t tid;
    uint64_t i;
    if (const auto* e = std::get_if<format::RangeEvent>(&m)) {
      tid = e->os_tid, i = e->id;
      EXPECT_EQ(e->name, NameOf(i % 90, 'x'));
    } else {
      const auto& w = std::get<format::WindowMark>(m);
      tid = w.os_tid, i = w.id;
    }
    auto it = last.find(tid);
    int64_t prev = it == last.end() ? -1 : it->second;
    EXPECT_EQ(static_cast<int64_t>(i), prev + 1) << "thread " << tid;
    last[tid] = static_cast<int64_t>(i);
  }
  // The threads exited: their chunks were given back with their last records.
  EXPECT_EQ(log.chunk_bytes_in_use(), 0u);
}

}  // namespace
}  // namespace gpucap::recorder
