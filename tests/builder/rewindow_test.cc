// Properties of windows chosen at build time, over a training-like capture:
// eager launches and graph replays per ProfilerStep, the GPU running behind
// the CPU so ops start in later windows than their launches.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "scene.h"
#include "trace_util.h"

namespace gpucap::testing {
namespace {

using builder::BuildOptions;
using builder::GzipCodec;
using builder::testing::ApiRecord;
using builder::testing::KernelRecord;

constexpr uint32_t kMain = 100;
constexpr uint64_t kStep = 1'000'000;   // 1 ms per step
constexpr uint64_t kGpuLag = 150'000;   // kernels run 150 us after launch

// Writes `steps` steps of `eager` launches and one 3-kernel graph replay.
void Workload(Scene& s, int steps, int eager) {
  Scene::Ok(s.c().String(0x1000, "_Z5eagerv"));
  Scene::Ok(s.c().String(0x2000, "_Z5graphv"));
  // Capture the graph once, under ranges.
  Scene::Ok(s.c().Push(kMain, kT0 + 10, "capture"));
  for (uint64_t n = 1; n <= 3; ++n) {
    Scene::Ok(s.c().Push(kMain, kT0 + 10 + n * 10, "layer" + std::to_string(n)));
    format::GraphEvent e;
    e.kind = format::GraphEventKind::kNodeCreated;
    e.node_id = n;
    e.os_tid = kMain;
    e.timestamp_ns = kT0 + 11 + n * 10;
    Scene::Ok(s.c().Message(e));
    Scene::Ok(s.c().Pop(kMain, kT0 + 15 + n * 10));
    format::GraphEvent c;
    c.kind = format::GraphEventKind::kNodeCloned;
    c.node_id = 100 + n;
    c.original_node_id = n;
    Scene::Ok(s.c().Message(c));
  }
  Scene::Ok(s.c().Pop(kMain, kT0 + 60));
  uint32_t corr = 1;
  std::vector<KernelRecord> queued;  // kernels complete later than launches
  for (int step = 0; step < steps; ++step) {
    uint64_t t = kT0 + 1000 + step * kStep;
    Scene::Ok(s.c().Push(kMain, t, "ProfilerStep#" + std::to_string(step)));
    Scene::Ok(s.c().Push(kMain, t + 10, "forward"));
    for (int i = 0; i < eager; ++i) {
      uint64_t at = t + 100 + i * (kStep / (eager + 4));
      ApiRecord a;
      a.start = at;
      a.end = at + 2000;
      a.tid = kMain;
      a.correlation = corr;
      s.c().Api(a);
      KernelRecord k;
      k.start = at + kGpuLag;
      k.end = k.start + 3000;
      k.correlation = corr++;
      k.name_pointer = 0x1000;
      queued.push_back(k);
    }
    uint64_t g = t + kStep - 120'000;
    ApiRecord a;
    a.cbid = 311;
    a.start = g;
    a.end = g + 3000;
    a.tid = kMain;
    a.correlation = corr;
    s.c().Api(a);
    for (int n = 1; n <= 3; ++n) {
      KernelRecord k;
      k.start = g + kGpuLag + n * 5000;
      k.end = k.start + 4000;
      k.correlation = corr;
      k.stream = 8;
      k.name_pointer = 0x2000;
      k.graph_node_id = 100 + n;
      queued.push_back(k);
    }
    corr++;
    Scene::Ok(s.c().Pop(kMain, t + kStep - 100'000));  // forward
    Scene::Ok(s.c().Pop(kMain, t + kStep - 100));
    // Buffers complete out of time order: this step's API records share a
    // buffer with the previous step's kernels, newest first.
    for (auto it = queued.rbegin(); it != queued.rend(); ++it) s.c().Kernel(*it);
    queued.clear();
    Scene::Ok(s.c().EndChunk());
  }
}

// Identifies a GPU op across windows.
std::pair<uint64_t, uint64_t> OpKey(const Json& e) {
  return {e["args"]["correlation"].u(), e["args"].has("graph node") ? e["args"]["graph node"].u() : 0};
}

TEST(Rewindow, EveryWindowsPartitionTheGpuOps) {
  Scene s;
  const int steps = 12, eager = 20;
  Workload(s, steps, eager);
  const size_t total = steps * (eager + 3);
  for (const char* every : {"every:137us", "every:1ms", "every:5ms"}) {
    BuildOptions o;
    o.window = every;
    std::vector<Trace> traces = BuildTraces(s.Path(), o);
    ASSERT_GT(traces.size(), 1u) << every;
    std::map<std::pair<uint64_t, uint64_t>, int> seen;
    size_t api_calls = 0;
    for (const Trace& t : traces) {
      ExpectImporterRules(t);
      for (const Json* k : t.Events("X", "kernel")) seen[OpKey(*k)]++;
      api_calls += t.Events("X", "cuda_runtime").size();
      EXPECT_EQ(t.Count("gpu ops without launch record"), 0) << every;
    }
    EXPECT_EQ(seen.size(), total) << every;
    for (auto& [key, n] : seen) EXPECT_EQ(n, 1) << every << ": op " << key.first << " in " << n << " windows";
    EXPECT_EQ(api_calls, steps * (eager + 1u)) << every;
  }
}

TEST(Rewindow, NvtxStepWindowsAnnotateEveryKernelGraphReplaysIncluded) {
  Scene s;
  Workload(s, 6, 10);
  BuildOptions o;
  o.window = R"(nvtx:ProfilerStep#\d+)";
  std::vector<Trace> traces = BuildTraces(s.Path(), o);
  ASSERT_EQ(traces.size(), 6u);
  size_t graph_kernels = 0;
  for (size_t i = 0; i < traces.size(); ++i) {
    const Trace& t = traces[i];
    ExpectImporterRules(t);
    EXPECT_EQ(t.root["gpucap"]["window"]["label"].text, "ProfilerStep#" + std::to_string(i));
    auto kernels = t.Events("X", "kernel");
    ASSERT_FALSE(kernels.empty());
    for (const Json* k : kernels) {
      const Json& args = (*k)["args"];
      ASSERT_TRUE(args.has("annotation")) << (*k)["name"].text;
      EXPECT_EQ(args["annotation stack"].items[0].text.rfind("ProfilerStep#", 0), 0u);
      if (args.has("graph node")) {
        graph_kernels++;
        EXPECT_EQ(args["annotation"].text, "layer" + std::to_string(args["capture node"].u()));
      } else {
        EXPECT_EQ(args["annotation"].text, "forward");
      }
    }
  }
  // Each step holds the replay it launched, the last one too, though the GPU
  // runs it after the step's range has closed.
  EXPECT_EQ(graph_kernels, 6u * 3);
}

// Down to the compressed bytes, with every codec at its default level.
TEST(Rewindow, SameCaptureAndWindowsGiveByteIdenticalTraces) {
  Scene s;
  Workload(s, 8, 30);
  for (GzipCodec codec : {GzipCodec::kDefault, GzipCodec::kIsal, GzipCodec::kLibdeflate}) {
    if (!builder::GzipCodecAvailable(codec)) continue;
    std::vector<std::string> runs;
    for (int threads : {1, 2, 2}) {
      BuildOptions o;
      o.window = "every:2ms";
      o.threads = threads;
      o.output = s.File("t" + std::to_string(runs.size()) + ".json.gz");
      o.output_options.threads = threads;
      o.output_options.block_bytes = 4096;
      o.output_options.codec = codec;
      o.join.trace_name = "t.json.gz";
      auto report = builder::BuildTraces(*builder::CaptureIndex::Open(s.Path()).value(), o);
      ASSERT_TRUE(report.ok()) << report.status().message();
      std::string all;
      for (const auto& w : report->windows) all += ReadFile(w.path);
      runs.push_back(all);
    }
    EXPECT_GT(runs[0].size(), 1000u);
    EXPECT_EQ(runs[0], runs[1]) << static_cast<int>(codec);
    EXPECT_EQ(runs[1], runs[2]) << static_cast<int>(codec);
  }
}

// Keeps the frames a window needs: every small message, and the chunks
// whose span reaches into [start - lookback, end).
void Trim(const std::string& from, const std::string& to, uint64_t start, uint64_t end, uint64_t lookback) {
  auto c = format::LoadCapture(from);
  ASSERT_TRUE(c.ok());
  auto sink = format::OpenFileSink(to);
  ASSERT_TRUE(sink.ok());
  auto w = format::CaptureWriter::Start(std::move(sink).value(), {});
  ASSERT_TRUE(w.ok());
  std::vector<format::SmallMessage> m;
  m.emplace_back(*c->session);
  for (const auto& x : c->devices) m.emplace_back(x);
  for (const auto& x : c->clocks) m.emplace_back(x);
  for (const auto& x : c->strings) m.emplace_back(x.def);
  for (const auto& x : c->ranges) m.emplace_back(x);
  for (const auto& x : c->graphs) m.emplace_back(x);
  for (const auto& x : c->threads) m.emplace_back(x);
  ASSERT_TRUE((*w)->Submit(std::move(m)));
  std::vector<uint64_t> raw;
  int kept = 0;
  for (const format::ChunkView& ch : c->chunks) {
    uint64_t last = std::max({ch.info.max_start_ns, ch.info.max_end_ns});
    if (last < start - lookback || ch.info.min_start_ns >= end) continue;
    ASSERT_TRUE(format::DecompressChunk(*c->file, ch, &raw).ok());
    format::ActivityBuffer b;
    b.data = reinterpret_cast<const uint8_t*>(raw.data());
    b.size = ch.info.raw_size;
    b.info = ch.info;
    ASSERT_TRUE((*w)->SubmitActivity(std::move(b)));
    ASSERT_TRUE((*w)->Flush(std::chrono::seconds(10)));
    kept++;
  }
  ASSERT_LT(kept, static_cast<int>(c->chunks.size()));
  ASSERT_TRUE((*w)->Close({}, std::chrono::seconds(10)).ok());
}

std::string Events(const std::string& text) {
  size_t a = text.find("\"baseTimeNanoseconds\"");
  size_t b = text.find("\"traceName\"");
  return text.substr(a, b - a);
}

TEST(Rewindow, AWindowOfATrimmedCaptureEqualsTheSameWindowOfTheFullOne) {
  Scene s;
  Workload(s, 10, 20);
  uint64_t start = kT0 + 1000 + 4 * kStep + 300'000, end = start + 2 * kStep;
  BuildOptions o;
  o.window = "range:" + std::to_string(start) + ":" + std::to_string(end);
  o.launch_lookback_ns = kStep;
  Trace full = BuildOne(s.Path(), o);
  std::string trimmed = s.File("trimmed.gpucap");
  Trim(s.Path(), trimmed, start, end, o.launch_lookback_ns);
  Trace part = BuildOne(trimmed, o);
  EXPECT_GT(full.Events("X", "kernel").size(), 40u);
  EXPECT_EQ(Events(full.text), Events(part.text));
}

}  // namespace
}  // namespace gpucap::testing
