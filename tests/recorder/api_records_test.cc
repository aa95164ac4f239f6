// API records made from callbacks: what a thread appends, how nesting and
// switching mid-call come out, and that the buffers handed over are what
// CUPTI's own record walker (and so the writer's path) reads as RUNTIME and
// DRIVER records.
#include "api_records.h"

#include <cupti.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "buffer_walk.h"
#include "string_interner.h"

namespace gpucap::recorder {
namespace {

constexpr uint32_t kRuntime = CUPTI_CB_DOMAIN_RUNTIME_API;
constexpr uint32_t kDriver = CUPTI_CB_DOMAIN_DRIVER_API;
constexpr uint32_t kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
constexpr uint32_t kMemcpy = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
constexpr uint32_t kCuLaunch = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;

// A pool of `count` buffers; what is handed over is kept for the test.
class Sink {
 public:
  Sink(size_t bytes, size_t count) : bytes_(bytes), free_(count) {}
  ~Sink() {
    for (auto& h : handed) std::free(h.data);
  }
  ApiRecords::Take take() {
    return [this]() -> uint8_t* {
      std::lock_guard<std::mutex> lock(mu_);
      if (free_ == 0) return nullptr;
      --free_;
      return static_cast<uint8_t*>(std::aligned_alloc(8, bytes_));
    };
  }
  ApiRecords::Hand hand() {
    return [this](uint8_t* data, size_t valid) {
      std::lock_guard<std::mutex> lock(mu_);
      handed.push_back({data, valid});
    };
  }
  std::vector<CUpti_ActivityAPI> Records() {
    std::vector<CUpti_ActivityAPI> out;
    for (auto& h : handed) {
      CUpti_Activity* r = nullptr;
      while (cuptiActivityGetNextRecord(h.data, h.valid, &r) == CUPTI_SUCCESS) {
        out.push_back(*reinterpret_cast<CUpti_ActivityAPI*>(r));
      }
    }
    return out;
  }
  struct Handed {
    uint8_t* data;
    size_t valid;
  };
  std::vector<Handed> handed;

 private:
  size_t bytes_;
  size_t free_;
  std::mutex mu_;
};

std::vector<ApiRecords::Id> Ids() { return {{kRuntime, kLaunch}, {kRuntime, kMemcpy}, {kDriver, kCuLaunch}}; }

TEST(ApiRecords, RecordsOnlyItsIds) {
  Sink sink(4096, 4);
  ApiRecords records(Ids(), 4096, 77, sink.take(), sink.hand());
  EXPECT_TRUE(records.Records(kRuntime, kLaunch));
  EXPECT_TRUE(records.Records(kDriver, kCuLaunch));
  EXPECT_FALSE(records.Records(kDriver, kLaunch));  // same number, other domain
  EXPECT_FALSE(records.Records(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
  EXPECT_FALSE(records.Records(CUPTI_CB_DOMAIN_RESOURCE, kLaunch));
}

TEST(ApiRecords, AnExitWritesCuptisLayoutWithTheEntersStart) {
  Sink sink(4096, 4);
  ApiRecords records(Ids(), 4096, 77, sink.take(), sink.hand());
  records.SetOn(true);
  // A driver launch of its own, then a runtime launch with its nested
  // driver launch (no record, as in CUPTI's activity records), then a copy.
  records.OnEnter(kDriver, 9, 900);
  records.OnExit(kDriver, kCuLaunch, 9, 0, 950, 5);
  records.OnEnter(kRuntime, 10, 1000);
  records.OnEnter(kDriver, 11, 1100);
  records.OnExit(kDriver, kCuLaunch, 11, 0, 1200, 5);
  records.OnExit(kRuntime, kLaunch, 10, 0, 1300, 5);
  records.OnEnter(kRuntime, 12, 2000);
  records.OnExit(kRuntime, kMemcpy, 12, 700, 2500, 5);
  records.Collect();
  ASSERT_EQ(sink.handed.size(), 1u);
  EXPECT_EQ(sink.handed[0].valid, 3 * sizeof(CUpti_ActivityAPI));
  std::vector<CUpti_ActivityAPI> r = sink.Records();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].kind, CUPTI_ACTIVITY_KIND_DRIVER);
  EXPECT_EQ(r[0].cbid, kCuLaunch);
  EXPECT_EQ(r[0].start, 900u);
  EXPECT_EQ(r[0].end, 950u);
  EXPECT_EQ(r[0].correlationId, 9u);
  EXPECT_EQ(r[1].kind, CUPTI_ACTIVITY_KIND_RUNTIME);
  EXPECT_EQ(r[1].cbid, kLaunch);
  EXPECT_EQ(r[1].start, 1000u);
  EXPECT_EQ(r[1].end, 1300u);
  EXPECT_EQ(r[1].processId, 77u);
  EXPECT_EQ(r[1].threadId, 5u);
  EXPECT_EQ(r[2].returnValue, 700u);
  EXPECT_EQ(records.records(), 3u);
  EXPECT_EQ(records.unmatched(), 0u);

  // The writer's walk sees RUNTIME and DRIVER records of CUPTI's size, the
  // span and the thread.
  StringInterner interner;
  WalkResult w = WalkBuffer(sink.handed[0].data, sink.handed[0].valid, &interner);
  EXPECT_EQ(w.info.record_count, 3u);
  EXPECT_EQ(w.info.min_start_ns, 900u);
  EXPECT_EQ(w.info.max_end_ns, 2500u);
  EXPECT_EQ(w.threads, std::vector<uint32_t>{5});
}

TEST(ApiRecords, CallsAroundASwitchMakeNoHalfRecord) {
  Sink sink(4096, 4);
  ApiRecords records(Ids(), 4096, 1, sink.take(), sink.hand());
  records.OnEnter(kRuntime, 1, 100);  // off: not noted
  records.SetOn(true);
  records.OnExit(kRuntime, kLaunch, 1, 0, 200, 9);  // its ENTER was before the switch
  records.OnEnter(kRuntime, 2, 300);
  records.SetOn(false);
  records.OnExit(kRuntime, kLaunch, 2, 0, 400, 9);  // ends after the switch-off
  records.SetOn(true);
  records.OnEnter(kRuntime, 3, 500);
  records.OnExit(kRuntime, kLaunch, 3, 0, 600, 9);
  records.Collect();
  std::vector<CUpti_ActivityAPI> r = sink.Records();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].correlationId, 3u);
  EXPECT_EQ(records.unmatched(), 1u);
}

TEST(ApiRecords, AnExitWhoseInnerCallsLostTheirsClosesThem) {
  Sink sink(4096, 4);
  ApiRecords records(Ids(), 4096, 1, sink.take(), sink.hand());
  records.SetOn(true);
  records.OnEnter(kRuntime, 1, 100);
  records.OnEnter(kRuntime, 2, 110);  // its EXIT never comes
  records.OnExit(kRuntime, kLaunch, 1, 0, 200, 9);
  records.OnEnter(kRuntime, 3, 300);
  records.OnExit(kRuntime, kLaunch, 3, 0, 400, 9);
  records.Collect();
  std::vector<CUpti_ActivityAPI> r = sink.Records();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].start, 100u);
  EXPECT_EQ(r[1].start, 300u);
}

TEST(ApiRecords, AFullBufferGoesOutAndAnEmptyPoolDropsAndCounts) {
  const size_t bytes = 4 * sizeof(CUpti_ActivityAPI);
  Sink sink(bytes, 2);
  ApiRecords records(Ids(), bytes, 1, sink.take(), sink.hand());
  records.SetOn(true);
  for (uint32_t c = 1; c <= 10; ++c) {
    records.OnEnter(kRuntime, c, c * 10);
    records.OnExit(kRuntime, kLaunch, c, 0, c * 10 + 5, 9);
  }
  // Two buffers of four, each handed over full by the thread when the next
  // record did not fit; the ninth record found no third buffer, nor the tenth.
  EXPECT_EQ(sink.handed.size(), 2u);
  records.Collect();  // nothing partly filled is left
  ASSERT_EQ(sink.handed.size(), 2u);
  EXPECT_EQ(records.records(), 8u);
  EXPECT_EQ(records.dropped(), 2u);
  std::vector<CUpti_ActivityAPI> r = sink.Records();
  ASSERT_EQ(r.size(), 8u);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(r[i].correlationId, i + 1);
}

TEST(ApiRecords, EachThreadHasItsBufferAndAnExitedThreadsRecordsAreCollected) {
  Sink sink(4096, 8);
  ApiRecords records(Ids(), 4096, 1, sink.take(), sink.hand());
  records.SetOn(true);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 3; ++t) {
    threads.emplace_back([&records, t] {
      for (uint32_t i = 0; i < 5; ++i) {
        uint32_t c = t * 100 + i;
        records.OnEnter(kRuntime, c, c);
        records.OnExit(kRuntime, kLaunch, c, 0, c + 1, 1000 + t);
      }
    });
  }
  for (auto& t : threads) t.join();
  records.Collect();
  EXPECT_EQ(sink.handed.size(), 3u);
  std::vector<CUpti_ActivityAPI> r = sink.Records();
  ASSERT_EQ(r.size(), 15u);
  for (const auto& a : r) EXPECT_EQ(a.threadId, 1000 + a.correlationId / 100);
  records.Collect();  // the exited threads' buffers are forgotten, nothing handed twice
  EXPECT_EQ(sink.handed.size(), 3u);
}

}  // namespace
}  // namespace gpucap::recorder
