// Shared setup for builder tests: a temporary synthetic capture with the
// default session, one H200 and a clock sample, written as the test goes.
#ifndef GPUCAP_TESTS_BUILDER_SCENE_H_
#define GPUCAP_TESTS_BUILDER_SCENE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "../support/temp_dir.h"
#include "synthetic_capture.h"

namespace gpucap::testing {

// CUPTI time of the scene's origin; realtime runs kClockOffset ahead.
inline constexpr uint64_t kT0 = 1'790'857'026'000'000'000ull;
inline constexpr int64_t kClockOffset = 500;
inline constexpr uint32_t kPid = 4242;

class Scene {
 public:
  explicit Scene(const std::string& name = "capture.gpucap",
                 format::SessionInfo session = builder::testing::DefaultSession()) {
    path_ = dir_.File(name);
    auto c = builder::testing::SyntheticCapture::Create(path_, session, {builder::testing::H200(0)});
    EXPECT_TRUE(c.ok()) << c.status().message();
    capture_ = std::move(c).value();
    format::ClockSample s;
    s.kind = format::ClockKind::kStart;
    s.cupti_ns = kT0;
    s.realtime_ns = static_cast<int64_t>(kT0) + kClockOffset;
    s.monotonic_ns = 1000;
    Ok(capture_->Message(s));
  }

  builder::testing::SyntheticCapture& c() { return *capture_; }
  static void Ok(const Status& s) { ASSERT_TRUE(s.ok()) << s.message(); }

  // Closes the capture (once) and returns its path.
  const std::string& Path() {
    if (capture_) {
      Ok(capture_->Close());
      capture_.reset();
    }
    return path_;
  }
  std::string File(const std::string& name) const { return dir_.File(name); }

  // A cudaLaunchKernel at [api_start, api_start + 2us) on `tid` and its
  // kernel at [start, end) on `stream`.
  void Launch(uint32_t correlation, uint32_t tid, uint64_t api_start, uint64_t start, uint64_t end,
              uint64_t name_pointer = 0x1000, uint32_t stream = 7) {
    builder::testing::ApiRecord a;
    a.start = api_start;
    a.end = api_start + 2000;
    a.tid = tid;
    a.correlation = correlation;
    capture_->Api(a);
    builder::testing::KernelRecord k;
    k.start = start;
    k.end = end;
    k.correlation = correlation;
    k.stream = stream;
    k.name_pointer = name_pointer;
    capture_->Kernel(k);
  }

  // A cudaGraphLaunch at [at, at + 1us) on `tid`: the call a graph's
  // replayed nodes are launched by.
  void GraphLaunch(uint32_t correlation, uint32_t tid, uint64_t at) {
    builder::testing::ApiRecord a;
    a.cbid = 311;  // cudaGraphLaunch
    a.start = at;
    a.end = at + 1000;
    a.tid = tid;
    a.correlation = correlation;
    capture_->Api(a);
  }

 private:
  TempDir dir_;
  std::string path_;
  std::unique_ptr<builder::testing::SyntheticCapture> capture_;
};

// A capture of one large window: 3 steps (ranges on thread 100) of 10k
// launches, 60,003 slices (30k launches, 30k kernels, 3 step ranges, which
// get no GPU-side spans), 15 chunks: enough for the join to describe and render it in
// pieces, and with slices that hold others where a piece might be cut.
inline std::string LargeWindowCapture(Scene* s) {
  Scene::Ok(s->c().String(0x1000, "_Z6kernelv"));
  uint32_t correlation = 1;
  for (int step = 0; step < 3; ++step) {
    uint64_t t0 = kT0 + 10'000 + step * 100'000'000ull;
    Scene::Ok(s->c().Push(100, t0, "ProfilerStep#" + std::to_string(step)));
    for (int k = 0; k < 10'000; ++k) {
      uint64_t t = t0 + 100 + k * 4'000;
      s->Launch(correlation++, 100, t, t + 1'000'000, t + 1'003'000);
      if (s->c().pending_records() >= 2000) Scene::Ok(s->c().EndChunk());
    }
    Scene::Ok(s->c().Pop(100, t0 + 90'000'000));
  }
  return s->Path();
}

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_BUILDER_SCENE_H_
