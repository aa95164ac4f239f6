#include "config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "api_selection.h"
#include "gpucap/format/activity_kind.h"

namespace gpucap::recorder {
namespace {

using format::ActivityKind;

TEST(OutputPath, ExpandsPidRankHostTime) {
  EXPECT_EQ(ExpandOutputPath("run-%p-r%r-%h-%t.gpucap", 4242, "node7", 3, 1790000000),
            "run-4242-r3-node7-1790000000.gpucap");
  EXPECT_EQ(ExpandOutputPath("%r.gpucap", 77, "h", -1, 0), "pid77.gpucap")
      << "a launcher without a rank must not take rank 0's name";
  EXPECT_EQ(ExpandOutputPath("100%%-%x-%", 1, "h", 0, 0), "100%-%x-%");
}

TEST(Kinds, ParsesNamesAndReportsUnknownOnes) {
  std::string bad;
  auto kinds = ParseKinds("kernel,memcpy,bogus,,runtime,nope", &bad);
  EXPECT_EQ(kinds, (std::vector<uint32_t>{static_cast<uint32_t>(ActivityKind::kConcurrentKernel),
                                          static_cast<uint32_t>(ActivityKind::kMemcpy),
                                          static_cast<uint32_t>(ActivityKind::kRuntime)}));
  EXPECT_EQ(bad, "bogus,nope");
  bad.clear();
  auto extended = ParseKinds("default,synchronization,cuda_event", &bad);
  EXPECT_TRUE(bad.empty());
  EXPECT_EQ(extended.size(), DefaultKinds().size() + 2);
}

TEST(Kinds, DefaultsLeaveOutWhatIsNotCheap) {
  auto d = DefaultKinds();
  auto has = [&](ActivityKind k) { return std::count(d.begin(), d.end(), static_cast<uint32_t>(k)) == 1; };
  EXPECT_TRUE(has(ActivityKind::kConcurrentKernel));
  EXPECT_TRUE(has(ActivityKind::kMemcpy));
  EXPECT_TRUE(has(ActivityKind::kMemcpy2));
  EXPECT_TRUE(has(ActivityKind::kMemset));
  EXPECT_TRUE(has(ActivityKind::kRuntime));
  EXPECT_TRUE(has(ActivityKind::kDriver));
  EXPECT_TRUE(has(ActivityKind::kExternalCorrelation));
  EXPECT_FALSE(has(ActivityKind::kSynchronization));
  EXPECT_FALSE(has(ActivityKind::kCudaEvent));
}

// The whole resource domain cost every launch about 1 us (bench/README.md):
// by default only the callbacks the recorder handles are enabled, a pause
// keeps CUPTI attached (the detach is opt-in until measured on a GPU:
// config.h), and a paused recorder holds no resource callbacks.
TEST(Config, ResourceCallbacksAndPauseDefaultsAndTheirSwitches) {
  for (const char* v : {"GPUCAP_RESOURCE", "GPUCAP_PAUSE_DETACH", "GPUCAP_PAUSED_GRAPHS", "GPUCAP_ATTACH_AHEAD"}) {
    unsetenv(v);
  }
  Config d = Config::FromEnvironment();
  EXPECT_FALSE(d.resource_domain);
  EXPECT_FALSE(d.pause_detach);
  EXPECT_EQ(d.detach_wait_us, 2000u);
  EXPECT_TRUE(d.detach_late_off) << "a pause that detaches leaves the kinds to the detach";
  EXPECT_FALSE(d.paused_subscribe);
  EXPECT_TRUE(d.attach_ahead) << "a sampled range finds CUPTI attached by the control thread";
  setenv("GPUCAP_DETACH_LATE_OFF", "0", 1);
  setenv("GPUCAP_ATTACH_AHEAD", "0", 1);
  EXPECT_FALSE(Config::FromEnvironment().detach_late_off);
  EXPECT_FALSE(Config::FromEnvironment().attach_ahead);
  unsetenv("GPUCAP_DETACH_LATE_OFF");
  unsetenv("GPUCAP_ATTACH_AHEAD");
  setenv("GPUCAP_RESOURCE", "domain", 1);
  setenv("GPUCAP_PAUSE_DETACH", "1", 1);
  setenv("GPUCAP_PAUSED_GRAPHS", "1", 1);
  Config c = Config::FromEnvironment();
  EXPECT_TRUE(c.resource_domain);
  EXPECT_TRUE(c.pause_detach);
  EXPECT_TRUE(c.paused_subscribe);
  setenv("GPUCAP_RESOURCE", "select", 1);
  EXPECT_FALSE(Config::FromEnvironment().resource_domain);
  for (const char* v : {"GPUCAP_RESOURCE", "GPUCAP_PAUSE_DETACH", "GPUCAP_PAUSED_GRAPHS", "GPUCAP_ATTACH_AHEAD"}) {
    unsetenv(v);
  }
}

// Where pauses detach, CUPTI's switches and flushes wait for the entry gate
// and the buffers CUPTI held at a finalize come back, unless told otherwise
// (the switches that tell them apart on a GPU); CUPTI's per-thread buffers
// are its own default.
TEST(Config, TheDetachsGatesAndBuffersAndTheirSwitches) {
  const char* vars[] = {"GPUCAP_FLUSH_GATED", "GPUCAP_SWITCHES_GATED", "GPUCAP_RECLAIM_AT_DETACH",
                        "GPUCAP_PER_THREAD_BUFFERS"};
  for (const char* v : vars) unsetenv(v);
  Config d = Config::FromEnvironment();
  EXPECT_TRUE(d.flush_gated);
  EXPECT_TRUE(d.switches_gated);
  EXPECT_TRUE(d.reclaim_at_detach);
  EXPECT_TRUE(d.per_thread_buffers);
  for (const char* v : vars) setenv(v, "0", 1);
  Config off = Config::FromEnvironment();
  EXPECT_FALSE(off.flush_gated);
  EXPECT_FALSE(off.switches_gated);
  EXPECT_FALSE(off.reclaim_at_detach);
  EXPECT_FALSE(off.per_thread_buffers);
  for (const char* v : vars) unsetenv(v);
}

// CUPTI's device buffers: its own sizes and count unless asked (a knob
// for measuring a --sample cycle's price); 0 allocated ahead is a choice.
TEST(Config, TheDeviceBuffersAreCuptisUnlessAsked) {
  unsetenv("GPUCAP_DEVICE_BUFFER_KB");
  unsetenv("GPUCAP_DEVICE_BUFFERS_AHEAD");
  Config d = Config::FromEnvironment();
  EXPECT_EQ(d.device_buffer_bytes, 0u);
  EXPECT_EQ(d.device_buffers_ahead, -1);
  setenv("GPUCAP_DEVICE_BUFFER_KB", "1024", 1);
  setenv("GPUCAP_DEVICE_BUFFERS_AHEAD", "0", 1);
  Config asked = Config::FromEnvironment();
  EXPECT_EQ(asked.device_buffer_bytes, 1024u << 10);
  EXPECT_EQ(asked.device_buffers_ahead, 0);
  unsetenv("GPUCAP_DEVICE_BUFFER_KB");
  unsetenv("GPUCAP_DEVICE_BUFFERS_AHEAD");
}

// The detach's two measures against its stall are on unless turned off:
// CUPTI registered again outside the gate (GPUCAP_ATTACH_PREPARE) and the
// GPU waited for, within 100 ms, before a detach (GPUCAP_DETACH_QUIET_MS).
TEST(Config, TheDetachsRegistrationAheadAndQuietWaitAreOnUnlessTurnedOff) {
  const char* vars[] = {"GPUCAP_ATTACH_PREPARE", "GPUCAP_DETACH_QUIET_MS"};
  for (const char* v : vars) unsetenv(v);
  Config by_default = Config::FromEnvironment();
  EXPECT_TRUE(by_default.attach_prepare);
  EXPECT_EQ(by_default.detach_quiet_ms, 100u);
  setenv("GPUCAP_ATTACH_PREPARE", "0", 1);
  setenv("GPUCAP_DETACH_QUIET_MS", "0", 1);
  Config off = Config::FromEnvironment();
  EXPECT_FALSE(off.attach_prepare);
  EXPECT_EQ(off.detach_quiet_ms, 0u);
  setenv("GPUCAP_DETACH_QUIET_MS", "20", 1);
  EXPECT_EQ(Config::FromEnvironment().detach_quiet_ms, 20u);
  for (const char* v : vars) unsetenv(v);
}

TEST(Config, TheFlightRecordersRingIsOffUnlessBoundedAndSecondsAloneGetTheDefaultBound) {
  const char* vars[] = {"GPUCAP_RING_MB", "GPUCAP_RING_S", "GPUCAP_RING_DUMP_AT_EXIT"};
  for (const char* v : vars) unsetenv(v);
  Config off = Config::FromEnvironment();
  EXPECT_FALSE(off.ring());
  EXPECT_FALSE(off.ring_dump_at_exit);
  setenv("GPUCAP_RING_MB", "1.5", 1);
  setenv("GPUCAP_RING_DUMP_AT_EXIT", "1", 1);
  Config mb = Config::FromEnvironment();
  EXPECT_TRUE(mb.ring());
  EXPECT_EQ(mb.ring_bytes, 3u << 19);
  EXPECT_EQ(mb.ring_seconds, 0);
  EXPECT_TRUE(mb.ring_dump_at_exit);
  unsetenv("GPUCAP_RING_MB");
  setenv("GPUCAP_RING_S", "30", 1);
  Config seconds = Config::FromEnvironment();
  EXPECT_TRUE(seconds.ring());
  EXPECT_EQ(seconds.ring_bytes, 256ull << 20);
  EXPECT_EQ(seconds.ring_seconds, 30);
  for (const char* v : vars) unsetenv(v);
}

// A pause detaches only when told to (GPUCAP_PAUSE_DETACH=1), whether a
// capture range, a signal or an unparsable range (which records as if none
// were given) led to it; the entry gate decides at run time whether it can.
TEST(Config, APauseDetachesOnlyWhenToldToWithOrWithoutACaptureRange) {
  unsetenv("GPUCAP_PAUSE_DETACH");
  setenv("GPUCAP_CAPTURE_RANGE", "nvtx:step#\\d+", 1);
  EXPECT_FALSE(Config::FromEnvironment().pause_detach);
  setenv("GPUCAP_PAUSE_DETACH", "1", 1);
  EXPECT_TRUE(Config::FromEnvironment().pause_detach);
  setenv("GPUCAP_PAUSE_DETACH", "0", 1);
  EXPECT_FALSE(Config::FromEnvironment().pause_detach);
  unsetenv("GPUCAP_PAUSE_DETACH");
  setenv("GPUCAP_CAPTURE_RANGE", "bogus", 1);
  EXPECT_FALSE(Config::FromEnvironment().pause_detach);
  unsetenv("GPUCAP_CAPTURE_RANGE");
  EXPECT_FALSE(Config::FromEnvironment().pause_detach);
  setenv("GPUCAP_PAUSE_DETACH", "1", 1);
  EXPECT_TRUE(Config::FromEnvironment().pause_detach);
  unsetenv("GPUCAP_PAUSE_DETACH");
}

TEST(Config, CudaGraphTraceGraphAddsGraphTraceToTheKinds) {
  constexpr uint32_t kGraphTrace = static_cast<uint32_t>(gpucap::format::ActivityKind::kGraphTrace);
  auto count = [&](const Config& c) { return std::count(c.kinds.begin(), c.kinds.end(), kGraphTrace); };
  // A recording from the start (GraphTraceIsKeptOnlyForARecordingFromTheStart).
  for (const char* v : {"GPUCAP_KINDS", "GPUCAP_CUDA_GRAPH_TRACE", "GPUCAP_START_PAUSED", "GPUCAP_CAPTURE_RANGE",
                        "GPUCAP_DELAY_S", "GPUCAP_PAUSE_DETACH", "GPUCAP_TRIGGER_FILE", "GPUCAP_SAMPLE"}) {
    unsetenv(v);
  }
  EXPECT_EQ(count(Config::FromEnvironment()), 0);  // node mode is the default
  setenv("GPUCAP_CUDA_GRAPH_TRACE", "node", 1);
  EXPECT_EQ(count(Config::FromEnvironment()), 0);
  setenv("GPUCAP_CUDA_GRAPH_TRACE", "graph", 1);
  Config g = Config::FromEnvironment();
  EXPECT_EQ(count(g), 1);
  EXPECT_EQ(g.kinds.size(), DefaultKinds().size() + 1);  // the defaults stay
  setenv("GPUCAP_KINDS", "kernel,graph_trace", 1);  // named as a kind too: enabled once
  Config k = Config::FromEnvironment();
  EXPECT_EQ(count(k), 1);
  EXPECT_EQ(k.kinds.size(), 2u);
  unsetenv("GPUCAP_CUDA_GRAPH_TRACE");  // a kind name of its own
  Config named = Config::FromEnvironment();
  EXPECT_EQ(count(named), 1);
  EXPECT_TRUE(named.raw.empty() || named.raw[0].first != "unknown_kinds");
  setenv("GPUCAP_CUDA_GRAPH_TRACE", "nodes", 1);
  unsetenv("GPUCAP_KINDS");
  Config bad = Config::FromEnvironment();
  EXPECT_EQ(count(bad), 0);
  bool reported = false;
  for (const auto& [key, value] : bad.raw) reported |= key == "bad_cuda_graph_trace" && value == "nodes";
  EXPECT_TRUE(reported);
  unsetenv("GPUCAP_CUDA_GRAPH_TRACE");
}

// Graph-level records are kept only where the kinds go on before the
// program can have made a graph and stay on: a recording from the start
// whose pauses keep CUPTI. A paused start (itself, a capture range, a
// trigger file through --window-nvtx), a delay or pauses that detach record
// graphs per node instead, with the reason logged and kept in the options.
TEST(Config, GraphTraceIsKeptOnlyForARecordingFromTheStart) {
  constexpr uint32_t kGraphTrace = static_cast<uint32_t>(gpucap::format::ActivityKind::kGraphTrace);
  const char* vars[] = {"GPUCAP_KINDS", "GPUCAP_START_PAUSED", "GPUCAP_CAPTURE_RANGE", "GPUCAP_DELAY_S",
                        "GPUCAP_PAUSE_DETACH", "GPUCAP_TRIGGER_FILE", "GPUCAP_WINDOW_NVTX"};
  for (const char* v : vars) unsetenv(v);
  setenv("GPUCAP_CUDA_GRAPH_TRACE", "graph", 1);
  auto kept = [&](const Config& c) {
    bool refused_in_options = false;
    for (const auto& [key, value] : c.raw) refused_in_options |= key == "cuda_graph_trace_refused";
    bool kind = std::count(c.kinds.begin(), c.kinds.end(), kGraphTrace) > 0;
    EXPECT_EQ(kind, c.graph_trace_refused.empty());
    EXPECT_EQ(kind, !refused_in_options);
    return kind;
  };
  EXPECT_TRUE(kept(Config::FromEnvironment())) << "a recording from the start";
  const std::vector<std::pair<const char*, const char*>> paused_starts = {
      {"GPUCAP_START_PAUSED", "1"},  {"GPUCAP_CAPTURE_RANGE", "nvtx:step#\\d+"},
      {"GPUCAP_DELAY_S", "2"},       {"GPUCAP_PAUSE_DETACH", "1"},
      {"GPUCAP_TRIGGER_FILE", "/tmp/x"},
  };
  for (const auto& [name, value] : paused_starts) {
    setenv(name, value, 1);
    if (std::string(name) == "GPUCAP_TRIGGER_FILE") setenv("GPUCAP_WINDOW_NVTX", "step", 1);
    Config c = Config::FromEnvironment();
    EXPECT_FALSE(kept(c)) << name;
    EXPECT_NE(c.graph_trace_refused.find("per node"), std::string::npos) << c.graph_trace_refused;
    for (const char* v : vars) unsetenv(v);
  }
  // Named twice as a kind, it goes twice.
  setenv("GPUCAP_KINDS", "kernel,graph_trace,graph_trace", 1);
  setenv("GPUCAP_START_PAUSED", "1", 1);
  EXPECT_FALSE(kept(Config::FromEnvironment()));
  // PM sampling never detaches: its pauses keep CUPTI.
  unsetenv("GPUCAP_START_PAUSED");
  setenv("GPUCAP_PAUSE_DETACH", "1", 1);
  setenv("GPUCAP_COUNTERS", "pm", 1);
  EXPECT_TRUE(kept(Config::FromEnvironment()));
  for (const char* v : vars) unsetenv(v);
  unsetenv("GPUCAP_COUNTERS");
  unsetenv("GPUCAP_CUDA_GRAPH_TRACE");
}

TEST(ApiSelection, LeanSetKeepsWhatATimelineNeeds) {
  for (const char* keep : {"cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060",
                           "cudaLaunchCooperativeKernel_v9000", "cudaGraphLaunch_v10000",
                           "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020", "cudaMalloc_v3020",
                           "cudaFreeAsync_v11020", "cudaStreamSynchronize_v3020",
                           "cudaDeviceSynchronize_v3020", "cudaEventRecord_v3020",
                           "cudaStreamWaitEvent_v3020", "cuLaunchKernel", "cuLaunchKernelEx",
                           "cuGraphLaunch", "cuMemcpyHtoDAsync_v2", "cuMemAllocAsync",
                           "cuCtxSynchronize", "cuStreamWaitEvent"}) {
    EXPECT_TRUE(IsLeanApi(keep)) << keep;
  }
  for (const char* drop : {"cudaGetDevice_v3020", "cudaSetDevice_v3020", "cudaStreamQuery_v3020",
                           "cudaEventQuery_v3020", "cudaGetLastError_v3020", "cuCtxGetCurrent",
                           "cuKernelGetAttribute", "cuDevicePrimaryCtxGetState",
                           "cudaPeekAtLastError_v3020", "cuStreamGetCaptureInfo_v2"}) {
    EXPECT_FALSE(IsLeanApi(drop)) << drop;
  }
  EXPECT_FALSE(IsLeanApi(nullptr));
}

}  // namespace
}  // namespace gpucap::recorder

namespace gpucap::recorder {
namespace {

// Sets GPUCAP_* variables for one test and clears them after.
struct Env {
  std::vector<std::string> names;
  void Set(const char* name, const char* value) {
    setenv(name, value, 1);
    names.push_back(name);
  }
  ~Env() {
    for (const std::string& n : names) unsetenv(n.c_str());
  }
};

TEST(CaptureRangeConfig, NvtxRangeStartsPausedAndMarksItsWindows) {
  Env env;
  env.Set("GPUCAP_CAPTURE_RANGE", "nvtx:step#\\d+");
  env.Set("GPUCAP_SAMPLE", "100");
  Config c = Config::FromEnvironment();
  EXPECT_TRUE(c.capture_error.empty()) << c.capture_error;
  EXPECT_EQ(c.capture.source, CaptureRangeSpec::Source::kNvtx);
  EXPECT_EQ(c.capture.sample_every, 100u);
  EXPECT_TRUE(c.start_paused);
  EXPECT_EQ(c.window_nvtx, "step#\\d+") << "the recorded ranges are the builder's windows";
}

// --sample-random's seed: given, it is used as is; "auto" draws one and the
// capture's options keep the drawn number, not the word.
TEST(CaptureRangeConfig, SampleSeedGivenOrDrawnIsKeptInTheOptions) {
  Env env;
  env.Set("GPUCAP_CAPTURE_RANGE", "nvtx:step#\\d+");
  env.Set("GPUCAP_SAMPLE", "10");
  env.Set("GPUCAP_SAMPLE_SEED", "18446744073709551615");
  Config c = Config::FromEnvironment();
  ASSERT_TRUE(c.capture_error.empty()) << c.capture_error;
  ASSERT_TRUE(c.capture.sample_seed.has_value());
  EXPECT_EQ(*c.capture.sample_seed, 18446744073709551615ull);

  env.Set("GPUCAP_SAMPLE_SEED", "auto");
  Config a = Config::FromEnvironment();
  ASSERT_TRUE(a.capture.sample_seed.has_value());
  std::string kept;
  for (const auto& [k, v] : a.raw) {
    if (k == "GPUCAP_SAMPLE_SEED") kept = v;
  }
  EXPECT_EQ(kept, std::to_string(*a.capture.sample_seed));

  env.Set("GPUCAP_SAMPLE_SEED", "12x");
  Config bad = Config::FromEnvironment();
  EXPECT_NE(bad.capture_error.find("sample seed '12x'"), std::string::npos) << bad.capture_error;
  EXPECT_FALSE(bad.capture.enabled()) << "a refused setting leaves no capture range half applied";
  env.Set("GPUCAP_SAMPLE_SEED", "18446744073709551616");
  EXPECT_NE(Config::FromEnvironment().capture_error.find("larger than"), std::string::npos);
}

TEST(CaptureRangeConfig, SampleGatesOnWindowNvtxWithoutACaptureRange) {
  Env env;
  env.Set("GPUCAP_WINDOW_NVTX", "ProfilerStep#\\d+");
  env.Set("GPUCAP_SAMPLE", "10");
  Config c = Config::FromEnvironment();
  EXPECT_EQ(c.capture.source, CaptureRangeSpec::Source::kNvtx);
  EXPECT_EQ(c.capture.pattern, "ProfilerStep#\\d+");
}

TEST(CaptureRangeConfig, RefusedSettingsLeaveTheRecorderRecordingWhole) {
  Env env;
  env.Set("GPUCAP_SAMPLE", "10");  // no range to sample
  Config c = Config::FromEnvironment();
  EXPECT_FALSE(c.capture.enabled());
  EXPECT_FALSE(c.start_paused);
  EXPECT_NE(c.capture_error.find("--sample"), std::string::npos) << c.capture_error;
  env.Set("GPUCAP_CAPTURE_RANGE", "cudaProfilerApi");
  env.Set("GPUCAP_CAPTURE_RANGE_END", "repeat:zero");
  c = Config::FromEnvironment();
  EXPECT_FALSE(c.capture.enabled());
  EXPECT_NE(c.capture_error.find("repeat:zero"), std::string::npos) << c.capture_error;
}

}  // namespace
}  // namespace gpucap::recorder

namespace gpucap::recorder {
namespace {

TEST(Config, ApiRecordsComeFromActivityUnlessCallbacksAreAsked) {
  unsetenv("GPUCAP_API_RECORDS");
  EXPECT_EQ(Config::FromEnvironment().api_source, ApiRecordSource::kActivity);
  setenv("GPUCAP_API_RECORDS", "callback", 1);
  EXPECT_EQ(Config::FromEnvironment().api_source, ApiRecordSource::kCallback);
  setenv("GPUCAP_API_RECORDS", "activity", 1);
  EXPECT_EQ(Config::FromEnvironment().api_source, ApiRecordSource::kActivity);
  setenv("GPUCAP_API_RECORDS", "callbacks", 1);  // a typo keeps the default, and is kept in the session
  Config bad = Config::FromEnvironment();
  EXPECT_EQ(bad.api_source, ApiRecordSource::kActivity);
  EXPECT_NE(std::find(bad.raw.begin(), bad.raw.end(), std::make_pair(std::string("bad_api_records"), std::string("callbacks"))),
            bad.raw.end());
  unsetenv("GPUCAP_API_RECORDS");
}

}  // namespace
}  // namespace gpucap::recorder

namespace gpucap::recorder {
namespace {

TEST(Config, TheStepTriggersAreOffUnlessAskedAndTheirWindowIsAtLeastOne) {
  const char* vars[] = {"GPUCAP_RING_HANG_S", "GPUCAP_RING_SLOW_STEP", "GPUCAP_RING_SLOW_WINDOW",
                        "GPUCAP_RING_DUMP_INTERVAL_S"};
  for (const char* v : vars) unsetenv(v);
  Config off = Config::FromEnvironment();
  EXPECT_FALSE(off.watches_steps());
  EXPECT_EQ(off.ring_slow_window, 20u);
  EXPECT_EQ(off.ring_dump_interval_s, 60);
  setenv("GPUCAP_RING_HANG_S", "2.5", 1);
  setenv("GPUCAP_RING_SLOW_STEP", "4", 1);
  setenv("GPUCAP_RING_SLOW_WINDOW", "0", 1);
  setenv("GPUCAP_RING_DUMP_INTERVAL_S", "-3", 1);
  Config on = Config::FromEnvironment();
  EXPECT_TRUE(on.watches_steps());
  EXPECT_EQ(on.ring_hang_s, 2.5);
  EXPECT_EQ(on.ring_slow_step, 4);
  EXPECT_EQ(on.ring_slow_window, 1u);
  EXPECT_EQ(on.ring_dump_interval_s, 0);
  for (const char* v : vars) unsetenv(v);
}

TEST(Config, TheBlockedCallTriggerIsOffUnlessAskedAndNeverNegative) {
  unsetenv("GPUCAP_RING_HANG_CALL_S");
  EXPECT_EQ(Config::FromEnvironment().ring_hang_call_s, 0);
  setenv("GPUCAP_RING_HANG_CALL_S", "30", 1);
  EXPECT_EQ(Config::FromEnvironment().ring_hang_call_s, 30);
  setenv("GPUCAP_RING_HANG_CALL_S", "-1", 1);
  EXPECT_EQ(Config::FromEnvironment().ring_hang_call_s, 0);
  unsetenv("GPUCAP_RING_HANG_CALL_S");
}

// A crash dump lacks about this long of GPU activity (periodic_flush.h).
TEST(Config, TheRingsForcedFlushIsEveryHalfSecondUnlessSetAndZeroOrLessTurnsItOff) {
  unsetenv("GPUCAP_RING_FLUSH_MS");
  EXPECT_EQ(Config::FromEnvironment().ring_flush_ms, 500u);
  setenv("GPUCAP_RING_FLUSH_MS", "250", 1);
  EXPECT_EQ(Config::FromEnvironment().ring_flush_ms, 250u);
  setenv("GPUCAP_RING_FLUSH_MS", "0", 1);
  EXPECT_EQ(Config::FromEnvironment().ring_flush_ms, 0u);
  setenv("GPUCAP_RING_FLUSH_MS", "-5", 1);
  EXPECT_EQ(Config::FromEnvironment().ring_flush_ms, 0u);
  unsetenv("GPUCAP_RING_FLUSH_MS");
}

}  // namespace
}  // namespace gpucap::recorder
