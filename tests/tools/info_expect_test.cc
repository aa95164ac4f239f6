// gpucap info against what each fixture's program says it did
// (fixtures/NAME.expect.json, written by the program when it was recorded):
// the numbers come from the program, not from the code under test.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string_view>

#include "../support/temp_dir.h"
#include "cli.h"
#include "gpucap/format/activity_kind.h"
#include "gpucap/tools/info/capture_info.h"
#include "tool_test_util.h"

namespace gpucap::tools {
namespace {

using format::ActivityKind;
using testing::Fixture;
using testing::Json;

Json Manifest(const std::string& name) {
  std::string path = std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + name + ".expect.json";
  return testing::ParseOrFail(testing::ReadFile(path));
}

uint64_t SumPrefixed(const Json& counts, std::string_view prefix) {
  uint64_t n = 0;
  for (const auto& [k, v] : counts.members) {
    if (k.rfind(prefix, 0) == 0) n += v.u();
  }
  return n;
}

uint64_t Kind(const CaptureInfo& info, ActivityKind k) {
  auto it = info.records_per_kind.find(static_cast<uint32_t>(k));
  return it == info.records_per_kind.end() ? 0 : it->second;
}

CaptureInfo Describe(const std::string& name) {
  auto index = OpenCapture(Fixture(name), /*verify=*/true);
  EXPECT_TRUE(index.ok()) << index.status().message();
  return index.ok() ? DescribeCapture(**index) : CaptureInfo{};
}

// Kernels, copies and peer copies the program launched, by name in its
// manifest; CUPTI records one activity record for each.
TEST(InfoExpect, RecordCountsAreWhatTheProgramsLaunched) {
  for (const char* name : {"basics", "counters", "graphs_nvtx", "peer"}) {
    SCOPED_TRACE(name);
    Json m = Manifest(name);
    const Json& counts = m["counts"];
    ASSERT_FALSE(counts.members.empty());
    CaptureInfo info = Describe(name);
    EXPECT_EQ(Kind(info, ActivityKind::kConcurrentKernel), SumPrefixed(counts, "kernel:"));
    EXPECT_EQ(Kind(info, ActivityKind::kMemcpy), SumPrefixed(counts, "memcpy:"));
    EXPECT_EQ(Kind(info, ActivityKind::kMemcpy2), SumPrefixed(counts, "peer:"));
  }
  // basics names its memsets (the other programs' setup memsets it does not).
  EXPECT_EQ(Kind(Describe("basics"), ActivityKind::kMemset), Manifest("basics")["counts"]["memset"].u());
}

TEST(InfoExpect, SessionsAreTheProgramsRanks) {
  for (const char* name : {"allreduce-0", "allreduce-1"}) {
    SCOPED_TRACE(name);
    Json m = Manifest(name);
    CaptureInfo info = Describe(name);
    ASSERT_TRUE(info.session.has_value());
    EXPECT_EQ(info.session->rank, m["rank"].i());
    EXPECT_EQ(info.session->world_size, m["world_size"].i());
  }
  Json peer = Manifest("peer");
  EXPECT_EQ(Describe("peer").devices.size(), peer["peer_access"].members.size());
}

TEST(InfoExpect, MarksAndRangesAreTheProgramsSteps) {
  Json torch = Manifest("torch_train");
  size_t steps = torch["eager_steps"].items.size() + torch["graph_steps"].items.size();
  CaptureInfo t = Describe("torch_train");
  EXPECT_EQ(t.marks_open, steps) << "one window mark per ProfilerStep (--window-nvtx)";
  EXPECT_EQ(t.marks_close, steps);
  EXPECT_EQ(t.mark_windows, steps);
  ASSERT_EQ(t.mark_labels.size(), steps);
  for (size_t i = 0; i < steps; ++i) EXPECT_EQ(t.mark_labels[i], "ProfilerStep#" + std::to_string(i));

  Json g = Manifest("graphs_nvtx");
  CaptureInfo graphs = Describe("graphs_nvtx");
  EXPECT_EQ(graphs.mark_labels, std::vector<std::string>{g["captured_graph"]["window_label"].text});
  EXPECT_EQ(graphs.metadata_names, std::vector<std::string>{g["captured_graph"]["metadata_name"].text});
  EXPECT_EQ(graphs.graph_updates, g["explicit_graph"]["updates"].u());
}

}  // namespace
}  // namespace gpucap::tools
