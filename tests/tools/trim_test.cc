// gpucap trim: a window built from the trimmed capture is the window built
// from the whole one, on every fixture and every kind of window spec.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "../support/temp_dir.h"
#include "cli.h"
#include "gpucap/tools/trim/fixture.h"
#include "tool_test_util.h"

namespace gpucap::tools {
namespace {

using testing::Fixture;

struct Case {
  const char* fixture;
  const char* window;
  const char* select;
};

std::ostream& operator<<(std::ostream& o, const Case& c) {
  return o << c.fixture << " --window " << c.window << " --select '" << c.select << "'";
}

const Case kCases[] = {
    {"torch_train", "nvtx:ProfilerStep#\\d+", "1"},   // an eager step
    {"torch_train", "nvtx:ProfilerStep#\\d+", "4"},   // the step under emit_nvtx
    {"torch_train", "nvtx:ProfilerStep#\\d+", "6"},   // a CUDA-graph replay
    {"torch_train", "nvtx:ProfilerStep#\\d+", "2,5"}, // two windows at once
    {"torch_train", "marks", "7"},
    {"torch_train", "every:250ms", "8"},
    {"torch_train", "range:+1s:+1.2s", ""},
    {"graphs_nvtx", "marks", ""},
    {"graphs_nvtx", "nvtx:build_graph", ""},
    {"graphs_nvtx", "nvtx:inner", ""},
    {"graphs_nvtx", "every:20ms", ""},
    {"basics", "every:5ms", "72,73"},  // cuts through the program's 20 ms of GPU work
    {"basics", "all", ""},
    {"counters", "nvtx:busy", ""},
    {"counters", "every:200ms", "2"},
    {"peer", "every:30ms", ""},
    {"allreduce-0", "nvtx:ProfilerStep#\\d+", ""},
    {"allreduce-1", "nvtx:nccl.*", ""},
};

// The trace with what names the file and the window's position taken out:
// those differ by nature between a capture and its trimmed copy.
std::string Normalized(std::string text, const std::string& path) {
  for (size_t at; (at = text.find(path)) != std::string::npos;) text.replace(at, path.size(), "CAPTURE");
  return std::regex_replace(text, std::regex("\"window\":\\{\"index\":\\d+,"), "\"window\":{");
}

std::vector<std::string> Build(const builder::CaptureIndex& index, const std::string& window, const std::string& select) {
  builder::BuildOptions o;
  o.window = window;
  o.select = select;
  o.threads = 1;
  o.join.trace_name = "trace";
  builder::Builder b(index, o);
  auto windows = b.Windows();
  EXPECT_TRUE(windows.ok()) << windows.status().message();
  std::vector<std::string> out;
  if (!windows.ok()) return out;
  for (const builder::Window& w : *windows) {
    std::string text;
    auto sink = builder::MakeRenderer(builder::OutputFormat::kChromeJson, builder::NewStringSink(&text));
    builder::WindowReport report;
    Status s = b.BuildWindow(w, sink.get(), &report);
    EXPECT_TRUE(s.ok()) << s.message();
    out.push_back(Normalized(std::move(text), index.path()));
  }
  return out;
}

// Each window's trace from the whole capture against the trimmed one's,
// showing the first line that differs.
void ExpectSameWindows(const std::vector<std::string>& full, const std::vector<std::string>& cut) {
  for (size_t i = 0; i < full.size(); ++i) {
    if (full[i] == cut[i]) continue;
    size_t at = 0;
    while (at < full[i].size() && at < cut[i].size() && full[i][at] == cut[i][at]) ++at;
    size_t line = full[i].rfind('\n', at) + 1;
    ADD_FAILURE() << "window " << i << " of " << full.size() << " differs:\n  whole:   " << full[i].substr(line, 300)
                  << "\n  trimmed: " << cut[i].substr(line, 300);
  }
}

class TrimEquality : public ::testing::TestWithParam<Case> {};

TEST_P(TrimEquality, TheTrimmedCaptureBuildsTheSameWindows) {
  const Case& c = GetParam();
  testing::TempDir dir;
  auto source = OpenCapture(Fixture(c.fixture));
  ASSERT_TRUE(source.ok());
  FixtureRequest r;
  r.source = Fixture(c.fixture);
  r.build.window = c.window;
  r.build.select = c.select;
  r.build.threads = 1;
  std::string small = dir.File("small.gpucap");
  auto trimmed = Trim(**source, r, small, nullptr);
  ASSERT_TRUE(trimmed.ok()) << trimmed.status().message();
  auto index = OpenCapture(small, /*verify=*/true);
  ASSERT_TRUE(index.ok()) << index.status().message();
  EXPECT_TRUE((*index)->capture().report.clean());
  EXPECT_TRUE((*index)->capture().trailer && (*index)->capture().trailer->clean_shutdown);

  std::vector<std::string> full = Build(**source, c.window, c.select);
  std::vector<std::string> cut = Build(**index, trimmed->window, trimmed->select);
  ASSERT_EQ(full.size(), cut.size());
  ASSERT_FALSE(full.empty());
  ExpectSameWindows(full, cut);
  // Smaller, when some windows were left out.
  if (*c.select != '\0') {
    EXPECT_LT(trimmed->result.records, trimmed->records_seen);
    EXPECT_LT(trimmed->result.bytes, (*source)->capture().file->size());
  }
  // The records are CUPTI's, re-packed at the strides they came with.
  for (const format::ChunkView& chunk : (*index)->capture().chunks) {
    for (const format::KindSize& k : chunk.info.record_sizes) {
      bool seen = false;
      for (const format::ChunkView& s : (*source)->capture().chunks) {
        for (const format::KindSize& o : s.info.record_sizes) seen |= o == k;
      }
      EXPECT_TRUE(seen) << "kind " << k.kind << " stride " << k.size;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TrimEquality, ::testing::ValuesIn(kCases));

// Every window spec the fixture tests build (tests/fixtures, the reference
// join's fixture list, the cases above), all of its windows at once: the
// capture trimmed to what the join reported using builds each of them as
// the whole capture does.
struct Spec {
  const char* fixture;
  const char* window;
};

std::ostream& operator<<(std::ostream& o, const Spec& s) { return o << s.fixture << " --window " << s.window; }

const Spec kFixtureSpecs[] = {
    {"basics", "all"},           {"basics", "every:5ms"},
    {"counters", "all"},         {"counters", "every:100ms"},       {"counters", "every:200ms"},
    {"counters", "nvtx:busy"},   {"peer", "all"},                   {"peer", "every:30ms"},
    {"graphs_nvtx", "all"},      {"graphs_nvtx", "marks"},          {"graphs_nvtx", "nvtx:thread\\d/outer"},
    {"graphs_nvtx", "nvtx:.*"},  {"graphs_nvtx", "every:1ms"},      {"graphs_nvtx", "nvtx:build_graph"},
    {"graphs_nvtx", "nvtx:inner"}, {"graphs_nvtx", "every:20ms"},
    {"torch_train", "all"},      {"torch_train", "marks"},          {"torch_train", "nvtx:ProfilerStep#\\d+"},
    {"torch_train", "every:500ms"}, {"torch_train", "every:250ms"}, {"torch_train", "range:+1s:+1.2s"},
    {"allreduce-0", "all"},      {"allreduce-0", "marks"},          {"allreduce-0", "nvtx:ProfilerStep#\\d+"},
    {"allreduce-0", "nvtx:nccl.*"}, {"allreduce-0", "every:250ms"},
    {"allreduce-1", "all"},      {"allreduce-1", "marks"},          {"allreduce-1", "nvtx:ProfilerStep#\\d+"},
    {"allreduce-1", "nvtx:nccl.*"},
    {"nvtx_domains", "all"},     {"nvtx_domains", "marks"},         {"nvtx_domains", "nvtx:Step#\\d+"},
    {"nvtx_domains", "nvtx:.*"}, {"nvtx_domains", "every:100us"},
    {"sync_events", "all"},      {"sync_events", "every:1ms"},
    {"graph_nodes", "all"},      {"graph_nodes", "every:1ms"},
    {"nccl_graph", "all"},       {"nccl_graph", "marks"},           {"nccl_graph", "nvtx:ProfilerStep#\\d+"},
    {"nccl_graph", "every:100ms"},
};

class TrimEverySpec : public ::testing::TestWithParam<Spec> {};

TEST_P(TrimEverySpec, TheTrimmedCaptureBuildsWhatTheWholeOneBuilds) {
  const Spec& c = GetParam();
  testing::TempDir dir;
  auto source = OpenCapture(Fixture(c.fixture));
  ASSERT_TRUE(source.ok());
  FixtureRequest r;
  r.source = Fixture(c.fixture);
  r.build.window = c.window;
  r.build.threads = 1;
  r.build.max_windows = 0;
  std::string small = dir.File("small.gpucap");
  auto trimmed = Trim(**source, r, small, nullptr);
  ASSERT_TRUE(trimmed.ok()) << trimmed.status().message();
  auto index = OpenCapture(small, /*verify=*/true);
  ASSERT_TRUE(index.ok()) << index.status().message();
  std::vector<std::string> full = Build(**source, c.window, "");
  std::vector<std::string> cut = Build(**index, trimmed->window, trimmed->select);
  ASSERT_FALSE(full.empty());
  ASSERT_EQ(full.size(), cut.size());
  ExpectSameWindows(full, cut);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TrimEverySpec, ::testing::ValuesIn(kFixtureSpecs));

TEST(Trim, AnonymizesKernelAndRangeNamesWithStableHashes) {
  testing::TempDir dir;
  auto source = OpenCapture(Fixture("graphs_nvtx"));
  ASSERT_TRUE(source.ok());
  FixtureRequest r;
  r.build.window = "nvtx:build_graph|replays";
  r.anonymize = true;
  // One key file for both trims, so they hash alike.
  r.anonymize_key = dir.File("job.key");
  const std::string secret = "0123456789abcdef-job-key";
  testing::WriteFile(r.anonymize_key, secret);
  AnonymizeKey key(secret);
  std::string a = dir.File("a.gpucap"), b = dir.File("b.gpucap");
  ASSERT_TRUE(Trim(**source, r, a, nullptr).ok());
  ASSERT_TRUE(Trim(**source, r, b, nullptr).ok());
  auto small = OpenCapture(a);
  ASSERT_TRUE(small.ok());
  const format::Capture& c = (*small)->capture();
  std::set<std::string> originals;
  for (const format::SequencedString& s : (*source)->capture().strings) originals.insert(s.def.text);
  ASSERT_FALSE(c.strings.empty());
  for (const format::SequencedString& s : c.strings) {
    EXPECT_EQ(s.def.text.rfind("kernel_", 0), 0u) << s.def.text;
    EXPECT_FALSE(originals.count(s.def.text));
  }
  std::set<std::string> ranges;
  for (const format::RangeEvent& e : c.ranges) {
    if (e.kind == format::RangeKind::kPush) ranges.insert(e.name);
  }
  EXPECT_TRUE(ranges.count("build_graph")) << "the window's own ranges stay findable";
  EXPECT_TRUE(ranges.count("replays"));
  EXPECT_TRUE(ranges.count(key.Hash("range", "capture_region")));
  for (const format::GraphEvent& g : c.graphs) {
    EXPECT_EQ(g.function_name.find("host_checkpoint"), std::string::npos);
    EXPECT_EQ(g.function_name.find("node_"), std::string::npos);
  }
  // The same names hash the same under one key: two trims agree, kernel for kernel.
  auto t1 = Build(**small, "nvtx:build_graph|replays", "");
  auto other = OpenCapture(b);
  ASSERT_TRUE(other.ok());
  auto t2 = Build(**other, "nvtx:build_graph|replays", "");
  ASSERT_EQ(t1.size(), 2u);
  EXPECT_EQ(t1, t2);
  EXPECT_NE(t1[1].find(key.Hash("kernel", "_Z10captured_1Pf")), std::string::npos) << t1[1].substr(0, 2000);
}

// A trim is a function of the capture and the request: the same bytes every
// time (fixtures cut from a capture are committed; a second cut must not be
// a change). The writer's own queue depth, which moves with thread timing,
// stays out: the trailer keeps the recording's.
TEST(Trim, TheSameRequestGivesTheSameBytes) {
  testing::TempDir dir;
  auto source = OpenCapture(Fixture("torch_train"));
  ASSERT_TRUE(source.ok());
  FixtureRequest r;
  r.build.window = "all";
  std::string first;
  for (int i = 0; i < 8; ++i) {
    std::string out = dir.File("t" + std::to_string(i) + ".gpucap");
    ASSERT_TRUE(Trim(**source, r, out, nullptr).ok());
    std::string bytes = testing::ReadFile(out);
    ASSERT_FALSE(bytes.empty());
    if (i == 0) first = bytes;
    else EXPECT_TRUE(bytes == first) << "trim " << i << " differs from the first";
  }
  auto cut = OpenCapture(dir.File("t0.gpucap"));
  ASSERT_TRUE(cut.ok());
  ASSERT_TRUE((*cut)->capture().trailer && (*source)->capture().trailer);
  EXPECT_EQ((*cut)->capture().trailer->stats.queue_high_water,
            (*source)->capture().trailer->stats.queue_high_water);
}

TEST(Trim, VerificationCatchesATraceThatDiffers) {
  testing::TempDir dir;
  auto source = OpenCapture(Fixture("graphs_nvtx"));
  ASSERT_TRUE(source.ok());
  FixtureRequest r;
  r.build.window = "nvtx:replays";
  auto trimmed = Trim(**source, r, dir.File("t.gpucap"), nullptr);
  ASSERT_TRUE(trimmed.ok());
  auto small = OpenCapture(dir.File("t.gpucap"));
  ASSERT_TRUE(small.ok());
  EXPECT_TRUE(VerifyTrimmed(**source, r.build, **small, *trimmed).ok());
  // Built with the window the capture was cut for, against another one of
  // the source: the check must see the difference.
  builder::BuildOptions other = r.build;
  other.window = "nvtx:capture_region";
  Status s = VerifyTrimmed(**source, other, **small, *trimmed);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("first difference"), std::string::npos) << s.message();
}

TEST(Trim, CutsWhatADamagedCaptureStillHolds) {
  testing::TempDir dir;
  std::string flipped = dir.File("flipped.gpucap"), cut = dir.File("cut.gpucap");
  testing::WriteFlippedCopy(Fixture("torch_train"), flipped, 0.4);
  testing::WriteCutCopy(Fixture("torch_train"), cut, 0.97);
  for (const std::string& path : {flipped, cut}) {
    SCOPED_TRACE(path);
    auto source = OpenCapture(path);
    ASSERT_TRUE(source.ok());
    FixtureRequest r;
    r.build.window = "nvtx:ProfilerStep#\\d+";
    r.build.select = "6";
    auto trimmed = Trim(**source, r, dir.File("t.gpucap"), nullptr);
    ASSERT_TRUE(trimmed.ok()) << trimmed.status().message();
    auto small = OpenCapture(dir.File("t.gpucap"), /*verify=*/true);
    ASSERT_TRUE(small.ok());
    EXPECT_TRUE((*small)->capture().report.clean()) << "the trimmed capture itself is whole";
    EXPECT_EQ(Build(**small, trimmed->window, trimmed->select).size(), 1u);
    if (path == cut) {
      ASSERT_FALSE(trimmed->warnings.empty()) << "the cut is reported";
      EXPECT_NE(trimmed->warnings[0].find(cut), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace gpucap::tools
