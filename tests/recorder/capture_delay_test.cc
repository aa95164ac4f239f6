// --delay with a capture range, through the real recorder and NVTX's own
// header code (gpucap's hooks as a static injection, as nvtx_test.cc; a
// binary of its own because NVTX initialises its tables once per process):
// ranges inside the delay are neither recorded nor counted, and --sample
// counts from the delay's end. Without a GPU no activity kind is switched,
// but the gate's decisions land in the capture as recording intervals.
#include <cstdint>

struct nvtxExtModuleInfo_t;
extern "C" int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(uint32_t));

#define NVTX_STATIC_INJECTION_IMPL
#include <nvtx3/nvToolsExt.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../support/temp_dir.h"
#include "gpucap/format/capture.h"
#include "gpucap/format/recording_state.h"
#include "nvtx_hooks.h"
#include "process_recorder.h"
#include "recorder.h"

namespace gpucap::recorder {
namespace {
extern "C" int TestInitNvtx(NvtxGetExportTableFunc_t get_export_table) {
  return InstallNvtxHooks(get_export_table) ? 1 : 0;
}
}  // namespace
}  // namespace gpucap::recorder

extern "C" {
const char* __lsan_default_suppressions() { return "leak:DomainCreate\nleak:DomainRegisterString\n"; }
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = gpucap::recorder::TestInitNvtx;
}

namespace gpucap::recorder {
namespace {

void Steps(int from, int to) {
  for (int i = from; i < to; ++i) {
    nvtxRangePushA(("step#" + std::to_string(i)).c_str());
    nvtxRangePop();
  }
}

TEST(CaptureDelay, RangesInsideTheDelayAreNotCountedAndSamplingStartsAfterIt) {
  testing::TempDir dir;
  std::string path = dir.File("delay.gpucap");
  Config config;
  config.output = path;
  config.quiet = true;
  config.toggle_signal = false;
  config.start_delay_s = 0.3;
  config.start_paused = true;  // as ReadCaptureRange sets it
  config.capture.source = CaptureRangeSpec::Source::kNvtx;
  config.capture.pattern = "step#\\d+";
  config.capture.sample_every = 2;
  config.capture.end_after = 0;  // repeat, the default with --sample
  config.window_nvtx = config.capture.pattern;
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  SetProcessRecorder(r);

  Steps(0, 4);  // inside the delay
  // The control thread ends the delay on its first 50 ms pass after 0.3 s.
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  Steps(4, 8);  // 1 in 2 from here: step#5 and step#7
  r->Stop("test");

  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto intervals = format::RecordingIntervals(c->metadata, UINT64_MAX);
  ASSERT_FALSE(intervals.empty());
  EXPECT_EQ(intervals[0].state, format::RecordingState::kPaused);
  EXPECT_NE(intervals[0].why.find("--delay"), std::string::npos) << intervals[0].why;
  std::vector<std::string> sampled;
  for (const auto& i : intervals) {
    if (i.state == format::RecordingState::kSampled) sampled.push_back(i.why);
    EXPECT_NE(i.state, format::RecordingState::kRecording) << i.why;
  }
  ASSERT_EQ(sampled.size(), 2u);
  EXPECT_NE(sampled[0].find("'step#5' (#1)"), std::string::npos) << sampled[0];
  EXPECT_NE(sampled[1].find("'step#7' (#3)"), std::string::npos) << sampled[1];
}

}  // namespace
}  // namespace gpucap::recorder
