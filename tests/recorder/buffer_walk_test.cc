// The record-path walk over a CUPTI buffer built in memory: CUPTI's own
// record walker needs no GPU.
#include "buffer_walk.h"

#include <cupti.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace gpucap::recorder {
namespace {

class BufferBuilder {
 public:
  template <typename T>
  T* Add(CUpti_ActivityKind kind) {
    size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    auto* r = reinterpret_cast<T*>(bytes_.data() + at);
    std::memset(r, 0, sizeof(T));
    r->kind = kind;
    return r;
  }
  // Pointers into bytes_ are only valid until the next Add.
  uint8_t* data() { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<uint8_t, std::allocator<uint8_t>> bytes_;
};

const char* kKernelA = "_Z7kernelAPf";
const char* kKernelB = "_Z7kernelBPfi";

void AddKernel(BufferBuilder* b, const char* name, uint64_t start, uint64_t end) {
  auto* k = b->Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k->name = name;
  k->start = start;
  k->end = end;
}

void AddApi(BufferBuilder* b, uint32_t tid, uint64_t start, uint64_t end) {
  auto* a = b->Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  a->threadId = tid;
  a->start = start;
  a->end = end;
}

TEST(BufferWalk, CountsSpansNamesAndThreads) {
  BufferBuilder b;
  AddApi(&b, 100, 900, 950);
  AddKernel(&b, kKernelA, 1000, 1500);
  AddApi(&b, 101, 1100, 1150);
  AddKernel(&b, kKernelB, 0, 0);  // CUPTI gives 0 when it could not time it
  AddKernel(&b, kKernelA, 2000, 2600);
  auto* m = b.Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m->start = 3000;
  m->end = 3300;
  b.Add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  AddApi(&b, 100, 3500, 3600);

  StringInterner interner;
  WalkResult w = WalkBuffer(b.data(), b.size(), &interner);
  EXPECT_EQ(w.info.raw_size, b.size());
  EXPECT_EQ(w.info.record_count, 8u);
  EXPECT_EQ(w.info.min_start_ns, 900u);
  EXPECT_EQ(w.info.max_start_ns, 3500u);
  EXPECT_EQ(w.info.max_end_ns, 3600u);
  auto count = [&](uint32_t kind) -> uint64_t {
    for (auto& kc : w.info.kind_counts) {
      if (kc.kind == kind) return kc.count;
    }
    return 0;
  };
  EXPECT_EQ(count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 3u);
  EXPECT_EQ(count(CUPTI_ACTIVITY_KIND_RUNTIME), 3u);
  EXPECT_EQ(count(CUPTI_ACTIVITY_KIND_MEMCPY), 1u);
  EXPECT_EQ(count(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), 1u);
  // Strides are the record sizes CUPTI laid out.
  for (auto& ks : w.info.record_sizes) {
    if (ks.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      EXPECT_EQ(ks.size, sizeof(CUpti_ActivityKernel10));
    } else if (ks.kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      EXPECT_EQ(ks.size, sizeof(CUpti_ActivityAPI));
    } else if (ks.kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      EXPECT_EQ(ks.size, sizeof(CUpti_ActivityMemcpy6));
    }
  }
  EXPECT_EQ(w.info.record_sizes.size(), 4u);
  // Each name pointer is defined once, with its text.
  ASSERT_EQ(w.strings.size(), 2u);
  auto def0 = std::get<format::StringDef>(w.strings[0]);
  auto def1 = std::get<format::StringDef>(w.strings[1]);
  EXPECT_EQ(def0.pointer, reinterpret_cast<uint64_t>(kKernelA));
  EXPECT_EQ(def0.text, kKernelA);
  EXPECT_EQ(def1.text, kKernelB);
  EXPECT_EQ(w.threads, (std::vector<uint32_t>{100, 101}));

  // A second buffer with the same names defines nothing new...
  WalkResult again = WalkBuffer(b.data(), b.size(), &interner);
  EXPECT_TRUE(again.strings.empty());
  // ...unless the definitions never reached the writer.
  interner.Forget(w.strings);
  WalkResult retry = WalkBuffer(b.data(), b.size(), &interner);
  EXPECT_EQ(retry.strings.size(), 2u);
  // A module unload forgets everything.
  interner.Clear();
  EXPECT_EQ(interner.size(), 0u);
}

// After a detach CUPTI numbers calls from the start again: the walk shifts
// the ids of every kind the builder joins by, so that a kernel still meets
// its own launch (correlation_shift.h). 0, "no call", stays 0.
TEST(BufferWalk, ShiftsTheCorrelationIdsOfEveryKindJoinedByThem) {
  BufferBuilder b;
  b.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME)->correlationId = 22;
  b.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)->correlationId = 22;
  b.Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY)->correlationId = 23;
  b.Add<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2)->correlationId = 24;
  b.Add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET)->correlationId = 25;
  b.Add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)->correlationId = 22;
  b.Add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)->correlationId = 26;
  b.Add<CUpti_ActivityCudaEvent2>(CUPTI_ACTIVITY_KIND_CUDA_EVENT)->correlationId = 27;
  b.Add<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE)->correlationId = 28;
  b.Add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD)->correlationId = 0;
  StringInterner interner;
  WalkResult w = WalkBuffer(b.data(), b.size(), &interner, 1000);
  EXPECT_EQ(w.highest_correlation, 1028u);

  std::vector<uint32_t> ids;
  CUpti_Activity* r = nullptr;
  while (cuptiActivityGetNextRecord(b.data(), b.size(), &r) == CUPTI_SUCCESS) {
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_RUNTIME: ids.push_back(reinterpret_cast<CUpti_ActivityAPI*>(r)->correlationId); break;
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        ids.push_back(reinterpret_cast<CUpti_ActivityKernel10*>(r)->correlationId);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: ids.push_back(reinterpret_cast<CUpti_ActivityMemcpy6*>(r)->correlationId); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        ids.push_back(reinterpret_cast<CUpti_ActivityMemcpyPtoP4*>(r)->correlationId);
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET: ids.push_back(reinterpret_cast<CUpti_ActivityMemset4*>(r)->correlationId); break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        ids.push_back(reinterpret_cast<CUpti_ActivityExternalCorrelation*>(r)->correlationId);
        break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        ids.push_back(reinterpret_cast<CUpti_ActivitySynchronization2*>(r)->correlationId);
        break;
      case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        ids.push_back(reinterpret_cast<CUpti_ActivityCudaEvent2*>(r)->correlationId);
        break;
      case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        ids.push_back(reinterpret_cast<CUpti_ActivityGraphTrace2*>(r)->correlationId);
        break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD: ids.push_back(reinterpret_cast<CUpti_ActivityOverhead3*>(r)->correlationId); break;
      default: ids.push_back(~0u);
    }
  }
  EXPECT_EQ(ids, (std::vector<uint32_t>{1022, 1022, 1023, 1024, 1025, 1022, 1026, 1027, 1028, 0}));

  // The first session's shift is 0: CUPTI's ids as they were, the highest still told.
  BufferBuilder c;
  c.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME)->correlationId = 9;
  WalkResult plain = WalkBuffer(c.data(), c.size(), &interner);
  EXPECT_EQ(plain.highest_correlation, 9u);
  EXPECT_EQ(reinterpret_cast<CUpti_ActivityAPI*>(c.data())->correlationId, 9u);
}

TEST(BufferWalk, EmptyBufferHasNoSpan) {
  StringInterner interner;
  std::vector<uint8_t> empty(64, 0);
  WalkResult w = WalkBuffer(empty.data(), 0, &interner);
  EXPECT_EQ(w.info.record_count, 0u);
  EXPECT_EQ(w.info.min_start_ns, 0u);
  EXPECT_TRUE(w.strings.empty());
}

}  // namespace
}  // namespace gpucap::recorder
