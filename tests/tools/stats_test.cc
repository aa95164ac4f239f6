// gpucap stats: the tables against what the fixture programs did, exact
// arithmetic on a synthetic capture, the three output forms, and damage.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "../support/temp_dir.h"
#include "cli.h"
#include "scene.h"
#include "gpucap/builder/capture_index.h"
#include "gpucap/tools/stats/stats_table.h"
#include "tool_test_util.h"

namespace gpucap::tools {
namespace {

using testing::Fixture;

GpuStats Stats(const std::string& path, const std::string& window = "all") {
  auto index = OpenCapture(path);
  EXPECT_TRUE(index.ok()) << index.status().message();
  if (!index.ok()) return {};
  builder::BuildOptions o;
  o.window = window;
  auto s = CollectStats(**index, o, nullptr);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : GpuStats{};
}

// "void tiled_sum<128>(float const*, float*, int)" -> "tiled_sum<128>".
std::string BaseName(std::string name) {
  if (name.rfind("void ", 0) == 0) name = name.substr(5);
  return name.substr(0, name.find('('));
}

std::map<std::string, uint64_t> KernelCounts(const GpuStats& s) {
  std::map<std::string, uint64_t> out;
  for (const auto& [name, d] : s.kernels) out[BaseName(name)] += d.count;
  return out;
}

TEST(Stats, BasicsMatchesWhatTheProgramDid) {
  GpuStats s = Stats(Fixture("basics"));
  // fixtures/basics.expect.json
  EXPECT_EQ(KernelCounts(s), (std::map<std::string, uint64_t>{{"dynamic_smem", 20}, {"grid3d", 20}, {"scale", 21},
                                                               {"tiled_sum<128>", 20}, {"tiled_sum<256>", 20}}));
  std::map<std::string, uint64_t> bytes, count;
  for (const auto& [name, c] : s.copies) {
    std::string kind = name.rfind("Memset", 0) == 0 ? "memset" : name.substr(7, 4);
    bytes[kind] += c.bytes;
    count[kind] += c.time.count;
  }
  EXPECT_EQ(bytes["HtoD"], 6291456u);
  EXPECT_EQ(bytes["DtoH"], 4718592u);
  EXPECT_EQ(bytes["DtoD"], 4194304u);
  EXPECT_EQ(bytes["memset"], 1048580u);
  EXPECT_EQ(count["HtoD"], 2u);
  EXPECT_EQ(count["DtoH"], 2u);
  EXPECT_EQ(count["memset"], 2u);
  size_t kernel_streams = 0;
  for (const auto& [key, st] : s.streams) kernel_streams += st.ops >= 20;
  EXPECT_EQ(kernel_streams, 3u) << "streams_used";
  EXPECT_EQ(s.apis["cudaLaunchKernel"].count, 101u);
  for (const auto& [key, st] : s.streams) EXPECT_LE(st.busy_ns, s.window_ns);
}

TEST(Stats, AttributesGpuTimeToLaunchAndCaptureTimeRanges) {
  GpuStats s = Stats(Fixture("graphs_nvtx"));
  EXPECT_EQ(KernelCounts(s), (std::map<std::string, uint64_t>{{"captured_1", 4}, {"captured_2", 4}, {"captured_3", 4},
                                                               {"eager_inner", 12}, {"eager_outer", 6}, {"node_a", 7},
                                                               {"node_b", 7}, {"node_c", 7}, {"node_d", 7}}));
  // The captured graph's kernels carry the ranges open when it was captured
  // (capture_region/layer1 for captured_1 and _2, capture_region/layer2 for
  // _3), replayed 4 times inside the "replays" range.
  EXPECT_EQ(s.ranges["capture_region"].gpu_ops, 12u);
  EXPECT_EQ(s.ranges["layer1"].gpu_ops, 8u);
  EXPECT_EQ(s.ranges["layer2"].gpu_ops, 4u);
  EXPECT_EQ(s.ranges["replays"].gpu_ops, 12u);
  // The built graph was built inside build_graph: 4 kernels x 7 replays.
  EXPECT_EQ(s.ranges["build_graph"].gpu_ops, 28u);
  // Eager: each thread's outer range holds its 3 outer and 6 inner kernels.
  EXPECT_EQ(s.ranges["inner"].gpu_ops, 12u);
  EXPECT_EQ(s.ranges["inner"].cpu.count, 6u);
  EXPECT_EQ(s.ranges["thread0/outer"].gpu_ops, 9u);
  EXPECT_EQ(s.ranges["thread1/outer"].gpu_ops, 9u);
  int64_t layer1 = 0;
  for (const auto& [name, d] : s.kernels) {
    if (BaseName(name) == "captured_1" || BaseName(name) == "captured_2") layer1 += d.total;
  }
  EXPECT_EQ(s.ranges["layer1"].gpu_ns, layer1);

  GpuStats c = Stats(Fixture("counters"));
  EXPECT_EQ(KernelCounts(c)["burn"], 80u);
  EXPECT_EQ(c.ranges["busy"].cpu.count, 2u);
  EXPECT_EQ(c.ranges["busy"].gpu_ops, 80u);
  EXPECT_EQ(c.ranges["idle"].gpu_ops, 0u);

  GpuStats p = Stats(Fixture("peer"));
  ASSERT_EQ(p.copies.count("Memcpy PtoP (Device -> Device)"), 1u);
  EXPECT_EQ(p.copies["Memcpy PtoP (Device -> Device)"].bytes, 75497472u);
  EXPECT_EQ(p.copies["Memcpy PtoP (Device -> Device)"].time.count, 6u);
}

TEST(Stats, ComputesDurationsMediansAndBusyTimeExactly) {
  testing::Scene scene;
  using testing::kT0;
  testing::Scene::Ok(scene.c().String(0x1000, "_Z6kernelv"));
  testing::Scene::Ok(scene.c().String(0x2000, "_Z5otherv"));
  // kernel() 100, 300, 200 ns on stream 7; other() 1000 ns on stream 8,
  // overlapping nothing; a copy on stream 7 overlapping the second kernel.
  scene.Launch(1, 1, kT0 + 10, kT0 + 1000, kT0 + 1100);
  scene.Launch(2, 1, kT0 + 20, kT0 + 2000, kT0 + 2300);
  scene.Launch(3, 1, kT0 + 30, kT0 + 3000, kT0 + 3200);
  scene.Launch(4, 1, kT0 + 40, kT0 + 5000, kT0 + 6000, 0x2000, 8);
  builder::testing::MemcpyRecord m;
  m.correlation = 5;
  m.start = kT0 + 2200;
  m.end = kT0 + 2600;
  m.bytes = 4000;
  scene.c().Memcpy(m);
  GpuStats s = Stats(scene.Path(), "range:" + std::to_string(kT0) + ":" + std::to_string(kT0 + 10000));
  const Durations& k = s.kernels["kernel()"];
  EXPECT_EQ(k.count, 3u);
  EXPECT_EQ(k.total, 600);
  EXPECT_EQ(k.min, 100);
  EXPECT_EQ(k.max, 300);
  EXPECT_EQ(k.Median(), 200);
  EXPECT_EQ(k.Mean(), 200);
  EXPECT_EQ(s.KernelNs(), 1600);
  EXPECT_EQ(s.window_ns, 10000);
  const CopyStats& c = s.copies["Memcpy DtoD (Device -> Device)"];
  EXPECT_EQ(c.bytes, 4000u);
  EXPECT_EQ(c.time.total, 400);
  // Stream 7: [1000,1100) + [2000,2600) (kernel and copy overlap) + [3000,3200).
  EXPECT_EQ((s.streams[{0, 7}].busy_ns), 100 + 600 + 200);
  EXPECT_EQ((s.streams[{0, 7}].ops), 4u);
  EXPECT_EQ((s.streams[{0, 8}].busy_ns), 1000);

  std::vector<Table> tables = StatsTables(s, 0);
  ASSERT_EQ(tables[0].name, "kernels");
  ASSERT_EQ(tables[0].rows.size(), 2u);
  EXPECT_EQ(std::get<std::string>(tables[0].rows[0].back()), "other()") << "largest total first";
  EXPECT_DOUBLE_EQ(std::get<double>(tables[0].rows[1][0]), 100.0 * 600 / 1600);
  Durations even;
  for (int64_t v : {4, 1, 3, 2}) even.Add(v);
  EXPECT_EQ(even.Median(), 2) << "the mean of the middle two, rounded down";
}

TEST(Stats, RendersTextCsvAndJsonOfTheSameTables) {
  GpuStats s = Stats(Fixture("basics"));
  std::vector<Table> tables = StatsTables(s, 2);
  EXPECT_EQ(tables[0].rows.size(), 2u);
  EXPECT_EQ(tables[0].rows_left_out, 3u);

  std::string text = RenderTables(s, tables, TableFormat::kText);
  EXPECT_NE(text.find("scale(float*, int, float)"), std::string::npos);
  EXPECT_NE(text.find("... 3 more (--top)"), std::string::npos);

  std::string csv = RenderTables(s, StatsTables(s, 0), TableFormat::kCsv);
  for (const char* t : {"# kernels\n", "# copies\n", "# apis\n", "# ranges\n", "# streams\n"}) {
    EXPECT_NE(csv.find(t), std::string::npos) << t;
  }
  EXPECT_NE(csv.find("\"scale(float*, int, float)\""), std::string::npos) << "commas quoted";

  testing::Json j = testing::ParseOrFail(RenderTables(s, StatsTables(s, 0), TableFormat::kJson));
  ASSERT_EQ(j["tables"]["kernels"].items.size(), 5u);
  uint64_t launches = 0;
  for (const testing::Json& row : j["tables"]["kernels"].items) launches += row["count"].u();
  EXPECT_EQ(launches, 101u);
  EXPECT_EQ(j["kernel_ns"].i(), s.KernelNs());
}

TEST(Stats, WorksOnWhatADamagedCaptureStillHolds) {
  testing::TempDir dir;
  std::string flipped = dir.File("flipped.gpucap"), cut = dir.File("cut.gpucap");
  // Flipped in the middle of the largest activity chunk, so that chunk's
  // kernels are lost and the rest is kept.
  {
    auto index = builder::CaptureIndex::Open(Fixture("torch_train"));
    ASSERT_TRUE(index.ok());
    const auto& chunks = (*index)->capture().chunks;
    ASSERT_FALSE(chunks.empty());
    auto largest = std::max_element(chunks.begin(), chunks.end(), [](const auto& a, const auto& b) {
      return a.stored.size() < b.stored.size();
    });
    double size = static_cast<double>(std::filesystem::file_size(Fixture("torch_train")));
    testing::WriteFlippedCopy(Fixture("torch_train"), flipped,
                              (largest->frame_offset + largest->stored.size() / 2) / size);
  }
  testing::WriteCutCopy(Fixture("torch_train"), cut, 0.7);
  uint64_t whole = 0;
  for (const auto& [n, d] : Stats(Fixture("torch_train")).kernels) whole += d.count;
  for (const std::string& path : {flipped, cut}) {
    SCOPED_TRACE(path);
    GpuStats s = Stats(path);
    uint64_t kernels = 0;
    for (const auto& [n, d] : s.kernels) kernels += d.count;
    EXPECT_GT(kernels, 0u);
    EXPECT_LT(kernels, whole);
    ASSERT_FALSE(s.warnings.empty()) << "the damage is reported";
    EXPECT_NE(s.warnings[0].find(path), std::string::npos);
  }
}

}  // namespace
}  // namespace gpucap::tools
