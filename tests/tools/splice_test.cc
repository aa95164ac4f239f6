// Splicing into torch.profiler: the profiler's own sample trace, stripped to
// its CPU side, gets back the GPU work recorded by gpucap -- at the same
// instants, tied to the same CPU ops by their External ids.
#include <gtest/gtest.h>

#include <map>

#include "../support/temp_dir.h"
#include "cli.h"
#include "gpucap/tools/json/json_read.h"
#include "gpucap/tools/splice/kineto_splice.h"
#include "scene.h"
#include "tool_test_util.h"

namespace gpucap::tools {
namespace {

using testing::Json;
using testing::Nanos;

const char* kGpuCategories[] = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
                                "gpu_user_annotation", "ac2g"};

const std::string kSample = std::string(GPUCAP_SOURCE_DIR) + "/tests/tools/data/kineto_sample.json.gz";

struct Sample {
  std::string cpu_only;  // the sample without its GPU side or device facts
  Json full;             // the sample as torch.profiler wrote it
  int64_t base = 0;
};

// Keeps every event whose category is not a GPU one, copied byte for byte,
// in a document carrying only what a CPU-only profile has at the top.
Sample LoadSample() {
  Sample s;
  // shared/reference/kineto_sample.json: a real torch.profiler trace.
  std::string text = testing::ReadTrace(kSample)->text;
  s.full = testing::ParseOrFail(text);
  s.base = static_cast<int64_t>(s.full["baseTimeNanoseconds"].number);
  // Each event's bytes, through the reader the splice uses.
  JsonText json(text);
  ondemand::parser parser;
  ondemand::document doc;
  ondemand::value root;
  std::string kept;
  EXPECT_TRUE(OpenJsonObject(parser, json, "a trace", &doc, &root).ok());
  Status read = ForEachJsonMember(json.view(), root, [&](std::string_view key, ondemand::value v) -> Status {
    if (key != "traceEvents") return CheckJsonValue(json.view(), v);
    return ForEachJsonElement(json.view(), v, [&](ondemand::value e) -> Status {
      auto span = JsonSpan(json.view(), e);
      if (!span.ok()) return span.status();
      std::string cat = testing::ParseOrFail(std::string(*span))["cat"].text;
      for (const char* g : kGpuCategories) {
        if (cat == g) return Status::Ok();
      }
      kept.append(kept.empty() ? "\n" : ",\n").append(*span);
      return Status::Ok();
    });
  });
  EXPECT_TRUE(read.ok()) << read.message();
  s.cpu_only = "{\n\"schemaVersion\": 1,\n\"baseTimeNanoseconds\": " + std::to_string(s.base) +
               ",\n\"traceEvents\": [" + kept + "\n],\n\"traceName\": \"cpu_only.json\"\n}\n";
  return s;
}

// A capture holding what the sample's GPU side shows: its launches and
// kernels at the same instants (CUPTI runs kClockOffset behind realtime).
std::string RecordSampleGpuSide(const Sample& s, testing::Scene* scene, bool external_correlation) {
  std::map<std::string, uint64_t> names;
  for (const Json& e : s.full["traceEvents"].items) {
    const std::string& cat = e["cat"].text;
    auto at = [&](const char* key) { return static_cast<uint64_t>(s.base + Nanos(e[key]) - testing::kClockOffset); };
    const Json& a = e["args"];
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      builder::testing::ApiRecord r;
      r.driver = cat == "cuda_driver";
      r.cbid = static_cast<uint32_t>(a["cbid"].u());
      r.start = at("ts");
      r.end = r.start + static_cast<uint64_t>(Nanos(e["dur"]));
      r.pid = static_cast<uint32_t>(e["pid"].u());
      r.tid = static_cast<uint32_t>(e["tid"].u());
      r.correlation = static_cast<uint32_t>(a["correlation"].u());
      if (external_correlation && a.has("External id")) scene->c().ExternalCorrelation(r.correlation, a["External id"].u());
      scene->c().Api(r);
    } else if (cat == "kernel") {
      auto [it, added] = names.try_emplace(e["name"].text, 0x10000 + names.size() * 0x100);
      if (added) testing::Scene::Ok(scene->c().String(it->second, it->first));
      builder::testing::KernelRecord k;
      k.start = at("ts");
      k.end = k.start + static_cast<uint64_t>(Nanos(e["dur"]));
      k.correlation = static_cast<uint32_t>(a["correlation"].u());
      k.stream = static_cast<uint32_t>(a["stream"].u());
      k.name_pointer = it->second;
      k.grid_x = static_cast<int32_t>(a["grid"].items[0].number);
      k.block_x = static_cast<int32_t>(a["block"].items[0].number);
      scene->c().Kernel(k);
    } else if (cat == "gpu_memcpy") {
      builder::testing::MemcpyRecord m;
      m.start = at("ts");
      m.end = m.start + static_cast<uint64_t>(Nanos(e["dur"]));
      m.correlation = static_cast<uint32_t>(a["correlation"].u());
      m.bytes = a["bytes"].u();
      scene->c().Memcpy(m);
    }
  }
  return scene->Path();
}

format::SessionInfo Python851() {
  format::SessionInfo s = builder::testing::DefaultSession();
  s.pid = 851;
  return s;
}

// Sample events by correlation id.
std::map<uint64_t, const Json*> ByCorrelation(const Json& root, const char* cat) {
  std::map<uint64_t, const Json*> out;
  for (const Json& e : root["traceEvents"].items) {
    if (e["cat"].text == cat && e["args"].has("correlation")) out[e["args"]["correlation"].u()] = &e;
  }
  return out;
}

TEST(Splice, PutsTheGpuSideBackWhereTheProfilerHadIt) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.cpu_only.empty());
  testing::Scene scene("gpu.gpucap", Python851());
  std::string capture = RecordSampleGpuSide(s, &scene, /*external_correlation=*/false);
  auto index = OpenCapture(capture);
  ASSERT_TRUE(index.ok());
  auto kineto = KinetoTrace::Parse(s.cpu_only, "cpu_only.json");
  ASSERT_TRUE(kineto.ok()) << kineto.status().message();
  EXPECT_EQ(kineto->base_time_ns(), s.base);
  EXPECT_EQ(kineto->gpu_events(), 0u);

  std::string out = scene.File("spliced.json");
  auto report = SpliceIntoKineto(**index, builder::BuildOptions{}, KinetoWindow(**index, *kineto), *kineto, out);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(report->warnings.empty()) << report->warnings[0];
  auto t = testing::ReadTrace(out);

  // The profiler's document is intact: every CPU event, and its bytes.
  std::string spliced = testing::ReadFile(out);
  EXPECT_NE(spliced.find(s.cpu_only.substr(s.cpu_only.find("\"traceEvents\": [") + 16, 2000)), std::string::npos);
  size_t cpu_ops = 0, full_cpu_ops = 0;
  for (const Json* e : t->Events("X", "cpu_op")) cpu_ops += e != nullptr;
  for (const Json& e : s.full["traceEvents"].items) full_cpu_ops += e["cat"].text == "cpu_op";
  EXPECT_EQ(cpu_ops, full_cpu_ops);
  EXPECT_EQ(t->root["traceName"].text, "cpu_only.json");
  // What a CPU-only profile lacks comes from the capture.
  ASSERT_EQ(t->root["deviceProperties"].items.size(), 1u);
  EXPECT_EQ(t->root["deviceProperties"].items[0]["name"].text, "NVIDIA H200");
  EXPECT_EQ(t->root["cuda_driver_version"].i(), 13000);
  EXPECT_TRUE(t->root.has("gpucap"));
  // Names the profiler gave are not given twice.
  size_t python_names = 0;
  for (const Json* e : t->Events("M")) {
    python_names += (*e)["name"].text == "process_name" && (*e)["pid"].u() == 851;
  }
  EXPECT_EQ(python_names, 1u);

  // Every kernel whose launch the sample holds, at the sample's instant,
  // with the sample's External id wherever the sample holds the CPU op that
  // launched it.
  auto want = ByCorrelation(s.full, "kernel");
  auto got = ByCorrelation(t->root, "kernel");
  auto want_launches = ByCorrelation(s.full, "cuda_runtime");
  for (const auto& [corr, l] : ByCorrelation(s.full, "cuda_driver")) want_launches[corr] = l;
  for (const auto& [corr, k] : want) {
    if (want_launches.count(corr)) {
      EXPECT_TRUE(got.count(corr)) << "kernel " << corr << " missing";
    }
  }
  size_t linked = 0;
  for (const auto& [corr, k] : got) {
    ASSERT_TRUE(want.count(corr)) << corr;
    const Json& w = *want.at(corr);
    EXPECT_EQ(Nanos((*k)["ts"]), Nanos(w["ts"])) << corr;
    EXPECT_EQ(Nanos((*k)["dur"]), Nanos(w["dur"])) << corr;
    EXPECT_EQ((*k)["name"].text, w["name"].text);
    EXPECT_EQ((*k)["pid"].u(), w["pid"].u());
    EXPECT_EQ((*k)["tid"].u(), w["tid"].u());
    if ((*k)["args"].has("External id")) {
      EXPECT_EQ((*k)["args"]["External id"].u(), w["args"]["External id"].u()) << corr;
      linked++;
    }
  }
  size_t launches_with_ops = 0;
  for (const auto& [corr, l] : want_launches) launches_with_ops += got.count(corr);
  for (const char* cat : {"cuda_runtime", "cuda_driver"}) {
    for (const auto& [corr, l] : ByCorrelation(t->root, cat)) {
      if ((*l)["args"].has("External id")) {
        EXPECT_EQ((*l)["args"]["External id"].u(), want_launches.at(corr)->operator[]("args")["External id"].u());
      }
    }
  }
  EXPECT_EQ(report->launches_linked_by_time + report->launches_unlinked, launches_with_ops);
  // One launch's CPU op was cut out of the sample: nothing encloses it.
  EXPECT_EQ(report->launches_unlinked, 1u);
  EXPECT_EQ(linked, launches_with_ops - 1);
  EXPECT_EQ(report->launches_linked_by_capture, 0u);
  // cudaStreamIsCapturing started no GPU work: Kineto gives it no id, nor do we.
  for (const Json* e : t->Named("cudaStreamIsCapturing")) EXPECT_FALSE((*e)["args"].has("External id"));
  // Launch flows bound at both ends.
  EXPECT_EQ(t->Events("s", "ac2g").size(), t->Events("f", "ac2g").size());
  EXPECT_GE(t->Events("f", "ac2g").size(), 48u);
}

TEST(Splice, UsesTheCapturesOwnExternalIdsWhenItHasThem) {
  Sample s = LoadSample();
  testing::Scene scene("gpu.gpucap", Python851());
  std::string capture = RecordSampleGpuSide(s, &scene, /*external_correlation=*/true);
  auto index = OpenCapture(capture);
  ASSERT_TRUE(index.ok());
  auto kineto = KinetoTrace::Parse(s.cpu_only, "cpu_only.json");
  ASSERT_TRUE(kineto.ok());
  std::string out = scene.File("spliced.json.gz");
  auto report = SpliceIntoKineto(**index, builder::BuildOptions{}, KinetoWindow(**index, *kineto), *kineto, out);
  ASSERT_TRUE(report.ok()) << report.status().message();
  auto launched = ByCorrelation(testing::ReadTrace(out)->root, "kernel");
  size_t with_ops = 0;
  for (const char* cat : {"cuda_runtime", "cuda_driver"}) {
    for (const auto& [corr, l] : ByCorrelation(s.full, cat)) with_ops += launched.count(corr);
  }
  // The profiler's op around a launch first (here the ids are the same,
  // as the profiler pushed them); the capture's id only for the one launch
  // whose CPU op was cut out of the sample.
  EXPECT_EQ(report->launches_linked_by_time, with_ops - 1);
  EXPECT_EQ(report->launches_linked_by_capture, 1u);
  EXPECT_EQ(report->launches_unlinked, 0u);
  auto t = testing::ReadTrace(out);
  auto want = ByCorrelation(s.full, "kernel");
  auto want_launches = ByCorrelation(s.full, "cuda_runtime");
  for (const auto& [corr, k] : ByCorrelation(t->root, "kernel")) {
    if (!want_launches.count(corr)) continue;  // launched before the sample begins
    ASSERT_TRUE((*k)["args"].has("External id")) << corr;
    EXPECT_EQ((*k)["args"]["External id"].u(), want.at(corr)->operator[]("args")["External id"].u());
  }
}

// A capture with NVTX ranges around its launches (issue 38): the join gives
// each launch its range's stand-in External id, and the splice must still
// tie every launch the profiler has an op around to that op's id; the
// stand-in stays only where the profiler has none.
TEST(Splice, TheProfilersIdsWinOverNvtxStandIns) {
  Sample s = LoadSample();
  testing::Scene scene("gpu.gpucap", Python851());
  // One NVTX range per launching thread, around the whole sample.
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> span;  // tid -> CUPTI span of its launches
  for (const Json& e : s.full["traceEvents"].items) {
    if (e["cat"].text != "cuda_runtime" && e["cat"].text != "cuda_driver") continue;
    uint64_t t = static_cast<uint64_t>(s.base + Nanos(e["ts"]) - testing::kClockOffset);
    auto [it, added] = span.try_emplace(e["tid"].u(), t, t);
    it->second.first = std::min(it->second.first, t);
    it->second.second = std::max(it->second.second, t);
  }
  ASSERT_FALSE(span.empty());
  for (const auto& [tid, sp] : span) {
    testing::Scene::Ok(scene.c().Push(static_cast<uint32_t>(tid), sp.first - 1000, "outer"));
    testing::Scene::Ok(scene.c().Pop(static_cast<uint32_t>(tid), sp.second + 100'000));
  }
  std::string capture = RecordSampleGpuSide(s, &scene, /*external_correlation=*/false);
  auto index = OpenCapture(capture);
  ASSERT_TRUE(index.ok());
  auto kineto = KinetoTrace::Parse(s.cpu_only, "cpu_only.json");
  ASSERT_TRUE(kineto.ok());

  // Built alone, every launch carries its range's stand-in.
  std::string plain = scene.File("plain.json");
  builder::BuildOptions o;
  o.output = plain;
  ASSERT_TRUE(builder::BuildTraces(**index, o).ok());
  auto p = testing::ReadTrace(plain);
  std::map<uint64_t, uint64_t> stand_in;  // correlation -> External id built alone
  for (const char* cat : {"cuda_runtime", "cuda_driver"}) {
    for (const auto& [corr, l] : ByCorrelation(p->root, cat)) {
      if ((*l)["args"].has("External id")) stand_in[corr] = (*l)["args"]["External id"].u();
    }
  }
  ASSERT_FALSE(stand_in.empty());

  std::string out = scene.File("spliced.json");
  auto report = SpliceIntoKineto(**index, builder::BuildOptions{}, KinetoWindow(**index, *kineto), *kineto, out);
  ASSERT_TRUE(report.ok()) << report.status().message();
  auto t = testing::ReadTrace(out);
  auto want = ByCorrelation(s.full, "kernel");
  auto want_launches = ByCorrelation(s.full, "cuda_runtime");
  for (const auto& [corr, l] : ByCorrelation(s.full, "cuda_driver")) want_launches[corr] = l;
  size_t right = 0, stand_ins = 0, wrong = 0;
  for (const auto& [corr, k] : ByCorrelation(t->root, "kernel")) {
    if (!want_launches.count(corr)) continue;
    ASSERT_TRUE((*k)["args"].has("External id")) << corr;
    uint64_t id = (*k)["args"]["External id"].u();
    if (id == want.at(corr)->operator[]("args")["External id"].u()) {
      right++;
    } else if (stand_in.count(corr) && id == stand_in.at(corr)) {
      stand_ins++;
    } else {
      wrong++;
    }
  }
  // Every launch but the one whose CPU op was cut out of the sample.
  EXPECT_EQ(stand_ins, 1u);
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(right + stand_ins, report->launches_linked_by_time + report->launches_linked_by_capture);
  EXPECT_EQ(report->launches_linked_by_capture, 1u);
  EXPECT_EQ(report->launches_unlinked, 0u);
  EXPECT_GE(right, 48u);
}

TEST(Splice, SaysWhenTraceAndCaptureDoNotMeet) {
  Sample s = LoadSample();
  testing::Scene scene("gpu.gpucap", Python851());
  std::string capture = RecordSampleGpuSide(s, &scene, false);
  auto index = OpenCapture(capture);
  ASSERT_TRUE(index.ok());
  // The same profile an hour later.
  std::string later = s.cpu_only;
  std::string base = std::to_string(s.base);
  later.replace(later.find(base), base.size(), std::to_string(s.base + 3'600'000'000'000));
  auto kineto = KinetoTrace::Parse(later, "later.json");
  ASSERT_TRUE(kineto.ok());
  builder::Window w;
  w.start_ns = (*index)->extent().start_ns;
  w.end_ns = (*index)->extent().end_ns + 1;
  auto report = SpliceIntoKineto(**index, builder::BuildOptions{}, w, *kineto, scene.File("x.json"));
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->warnings.empty());
  EXPECT_NE(report->warnings.back().find("do not overlap"), std::string::npos);

  EXPECT_FALSE(KinetoTrace::Parse("{\"traceEvents\": [1,]}", "bad.json").ok());
  auto no_events = KinetoTrace::Parse("{\"schemaVersion\": 1}", "empty.json");
  ASSERT_FALSE(no_events.ok());
  EXPECT_NE(no_events.status().message().find("empty.json"), std::string::npos);
}

TEST(Splice, FromTheCommandLine) {
  Sample s = LoadSample();
  testing::Scene scene("gpu.gpucap", Python851());
  std::string capture = RecordSampleGpuSide(s, &scene, false);
  std::string profile = scene.File("cpu_only.json");
  testing::WriteFile(profile, s.cpu_only);
  std::string out = scene.File("out.json.gz");
  testing::CliRun r = testing::Gpucap("build " + capture + " --into " + profile + " -o " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("49 by the enclosing profiler op"), std::string::npos) << r.output;
  auto t = testing::ReadTrace(out);
  EXPECT_EQ(t->Events("X", "kernel").size(), 51u);
  testing::CliRun several = testing::Gpucap("build " + capture + " --into " + profile + " -o " + out +
                                            " --window every:1000000s");
  EXPECT_EQ(several.code, 2) << several.output;
  EXPECT_NE(several.output.find("one window"), std::string::npos);
  testing::CliRun missing = testing::Gpucap("build " + capture + " --into " + scene.File("nope.json") + " -o " + out);
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("nope.json"), std::string::npos);
}

}  // namespace
}  // namespace gpucap::tools
