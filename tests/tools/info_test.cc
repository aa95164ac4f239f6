// gpucap info on the real captures, whole and damaged.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "../support/temp_dir.h"
#include "gpucap/tools/info/capture_info.h"
#include "cli.h"
#include "tool_test_util.h"

namespace gpucap::tools {
namespace {

using testing::Fixture;
using testing::Json;

CaptureInfo Describe(const std::string& path) {
  auto index = OpenCapture(path, /*verify=*/true);
  EXPECT_TRUE(index.ok()) << index.status().message();
  return index.ok() ? DescribeCapture(**index) : CaptureInfo{};
}

TEST(Info, EveryFixtureIsIntactAndItsJsonAgreesWithItsText) {
  for (const std::string& name : testing::FixtureNames()) {
    SCOPED_TRACE(name);
    CaptureInfo info = Describe(Fixture(name));
    EXPECT_TRUE(info.Intact());
    ASSERT_TRUE(info.session.has_value());
    ASSERT_TRUE(info.records_written.has_value());
    EXPECT_EQ(*info.records_written, info.records) << "every record the recorder wrote is readable";
    // Per kind as the recorder counted them when it wrote them (the
    // trailer), not as this reader decoded them.
    auto index = OpenCapture(Fixture(name));
    ASSERT_TRUE(index.ok());
    const auto& trailer = (*index)->capture().trailer;
    ASSERT_TRUE(trailer.has_value());
    std::map<uint32_t, uint64_t> written;
    for (const format::KindCount& k : trailer->records_per_kind) written[k.kind] += k.count;
    EXPECT_EQ(info.records_per_kind, written);
    EXPECT_GT(info.end_ns, info.start_ns);
    EXPECT_LE(info.start_ns, info.activity_first_ns);

    Json j = testing::ParseOrFail(InfoJson(info));
    EXPECT_EQ(j["records"]["total"].u(), info.records);
    EXPECT_EQ(j["session"]["pid"].u(), info.session->pid);
    EXPECT_EQ(j["devices"].items.size(), info.devices.size());
    EXPECT_TRUE(j["damage"]["intact"].boolean);
    std::string text = InfoText(info);
    EXPECT_NE(text.find("damage    none"), std::string::npos);
    EXPECT_NE(text.find("pid " + std::to_string(info.session->pid)), std::string::npos);
  }
}

TEST(Info, ReportsWhatEachProgramDid) {
  CaptureInfo graphs = Describe(Fixture("graphs_nvtx"));
  // graphs_nvtx.expect.json: a built graph of 4 kernels, a host node and an
  // event record, and a captured graph of 3 kernels; a window "captured
  // replays" with a metadata blob "replay-info".
  // The manifest gives each graph's own nodes but not the nodes CUDA creates
  // when the program updates its exec, so the node counts stay lower bounds;
  // the execs (one per graph) and the one update are exact.
  EXPECT_GE(graphs.nodes_by_type["kernel"], 7u);
  EXPECT_GE(graphs.nodes_by_type["host"], 1u);
  EXPECT_GE(graphs.nodes_by_type["event_record"], 1u);
  EXPECT_EQ(graphs.graph_execs, 2u);
  EXPECT_EQ(graphs.graph_updates, 1u);
  EXPECT_EQ(graphs.mark_labels, std::vector<std::string>{"captured replays"});
  EXPECT_EQ(graphs.mark_windows, 1u);
  EXPECT_EQ(graphs.metadata_names, std::vector<std::string>{"replay-info"});
  ASSERT_EQ(graphs.domains.size(), 1u);
  EXPECT_EQ(graphs.domains[0].ranges, graphs.push_pop_ranges);

  CaptureInfo torch = Describe(Fixture("torch_train"));
  EXPECT_EQ(torch.marks_open, 8u) << "ProfilerStep#0..7 marked by --window-nvtx";
  EXPECT_EQ(torch.mark_windows, 8u);
  EXPECT_EQ(torch.mark_labels.front(), "ProfilerStep#0");
  std::set<std::string> threads;
  for (const auto& [tid, name] : torch.threads) threads.insert(name);
  EXPECT_TRUE(threads.count("pt_autograd_0"));

  for (int rank : {0, 1}) {
    CaptureInfo r = Describe(Fixture("allreduce-" + std::to_string(rank)));
    EXPECT_EQ(r.session->rank, rank);
    EXPECT_EQ(r.session->world_size, 2);
  }
  EXPECT_FALSE(Describe(Fixture("counters")).counters.empty()) << "NVML counters";
  EXPECT_GT(Describe(Fixture("counters")).counter_samples, 0u);
  EXPECT_EQ(Describe(Fixture("peer")).devices.size(), 2u);
}

// A capture whose pauses detached CUPTI says how long each detach held the
// program's new CUDA calls and how often one gave up; one that never
// detached says nothing of it.
TEST(Info, ShowsTheDetachesHoldsAndGiveUps) {
  CaptureInfo c = Describe(Fixture("torch_train"));
  ASSERT_TRUE(c.recorder.has_value());
  EXPECT_EQ(InfoText(c).find("detaches"), std::string::npos);
  c.recorder->extra.emplace_back("cupti_detaches", 3);
  c.recorder->extra.emplace_back("cupti_detach_give_ups", 1);
  c.recorder->extra.emplace_back("cupti_detach_hold_ns_p50", 1500000);
  c.recorder->extra.emplace_back("cupti_detach_hold_ns_p99", 2250000);
  c.recorder->extra.emplace_back("cupti_detach_hold_ns_max", 4000000);
  EXPECT_NE(InfoText(c).find("detaches  3, holding new CUDA calls p50 1.500 ms, p99 2.250 ms, max 4.000 ms; "
                             "1 gave up\n"),
            std::string::npos)
      << InfoText(c);
}

TEST(Info, ReportsDamageInCutAndFlippedCopies) {
  testing::TempDir dir;
  std::string cut = dir.File("cut.gpucap"), flipped = dir.File("flipped.gpucap");
  testing::WriteCutCopy(Fixture("torch_train"), cut, 0.6);
  testing::WriteFlippedCopy(Fixture("torch_train"), flipped, 0.5);

  CaptureInfo c = Describe(cut);
  EXPECT_FALSE(c.Intact());
  EXPECT_FALSE(c.has_trailer);
  EXPECT_GT(c.tail_bytes_lost, 0u);
  EXPECT_TRUE(c.session.has_value()) << "what came before the cut is read";
  EXPECT_GT(c.frames, 0u);
  EXPECT_NE(InfoText(c).find("no trailer"), std::string::npos);

  CaptureInfo f = Describe(flipped);
  EXPECT_FALSE(f.Intact());
  ASSERT_FALSE(f.damage.empty());
  CaptureInfo whole = Describe(Fixture("torch_train"));
  EXPECT_LT(f.frames, whole.frames) << "the damaged frame is skipped";
  Json j = testing::ParseOrFail(InfoJson(f));
  EXPECT_FALSE(j["damage"]["intact"].boolean);
  ASSERT_FALSE(j["damage"]["regions"].items.empty());
  EXPECT_GT(j["damage"]["regions"].items[0]["offset"].u(), 0u);
  EXPECT_NE(j["damage"]["lines"].items[0].text.find(flipped), std::string::npos) << "names the file";
}

}  // namespace
}  // namespace gpucap::tools
