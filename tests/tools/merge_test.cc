// gpucap merge on the two ranks of a real NCCL job.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "../support/temp_dir.h"
#include "cli.h"
#include "tool_test_util.h"
#include "gpucap/tools/merge/trace_merge.h"

namespace gpucap::tools {
namespace {

using testing::Fixture;
using testing::Json;
using testing::Nanos;

struct Ranks {
  std::vector<std::unique_ptr<builder::CaptureIndex>> owned;
  std::vector<const builder::CaptureIndex*> captures;
  Ranks() {
    for (const char* name : {"allreduce-0", "allreduce-1"}) {
      auto index = OpenCapture(Fixture(name));
      EXPECT_TRUE(index.ok());
      owned.push_back(std::move(index).value());
      captures.push_back(owned.back().get());
    }
  }
};

// Absolute CLOCK_REALTIME ns of an event.
int64_t At(const testing::Trace& t, const Json& e) {
  return static_cast<int64_t>(t.root["baseTimeNanoseconds"].number) + Nanos(e["ts"]);
}

TEST(Merge, BothRanksOnOneClockKeptApartAndLabelled) {
  testing::TempDir dir;
  Ranks ranks;
  builder::BuildOptions o;
  o.output = dir.File("job.json");
  o.threads = 1;
  auto report = MergeTraces(ranks.captures, o, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->outputs.size(), 1u);
  EXPECT_EQ(report->outputs[0].captures, 2u);
  auto t = testing::ReadTrace(o.output);
  testing::ExpectImporterRules(*t);
  EXPECT_FALSE(t->root.has("distributedInfo")) << "a merged trace is no single rank's";

  // Processes by rank: names say which, and no pid is shared.
  std::map<uint64_t, int> rank_of_pid;
  std::multiset<uint64_t> named;
  for (const Json* e : t->Events("M")) {
    if ((*e)["name"].text != "process_name") continue;
    const std::string& name = (*e)["args"]["name"].text;
    named.insert((*e)["pid"].u());
    if (name == "Spans") continue;  // the window's own span, as Kineto's
    ASSERT_TRUE(name.rfind("rank 0: ", 0) == 0 || name.rfind("rank 1: ", 0) == 0) << name;
    rank_of_pid[(*e)["pid"].u()] = name[5] - '0';
  }
  for (uint64_t pid : named) EXPECT_EQ(named.count(pid), 1u) << "pid " << pid << " named twice";
  std::set<std::string> labels;
  for (const Json* e : t->Events("M")) {
    if ((*e)["name"].text == "process_labels") labels.insert((*e)["args"]["labels"].text);
  }
  EXPECT_TRUE(labels.count("rank 0 GPU 0"));
  EXPECT_TRUE(labels.count("rank 1 GPU 1"));

  // Each rank's NCCL kernels, in time order: an all-reduce runs on both
  // ranks at once, so the i-th kernels of the two ranks overlap in time.
  std::vector<const Json*> nccl[2];
  for (const Json* e : t->Events("X", "kernel")) {
    if ((*e)["name"].text.find("ncclDevKernel_AllReduce") == std::string::npos) continue;
    nccl[rank_of_pid.at((*e)["pid"].u())].push_back(e);
  }
  ASSERT_EQ(nccl[0].size(), 5u);
  ASSERT_EQ(nccl[1].size(), 5u);
  for (auto& v : nccl) {
    std::sort(v.begin(), v.end(), [](const Json* a, const Json* b) { return Nanos((*a)["ts"]) < Nanos((*b)["ts"]); });
  }
  for (size_t i = 0; i < 5; ++i) {
    int64_t a0 = Nanos((*nccl[0][i])["ts"]), a1 = a0 + Nanos((*nccl[0][i])["dur"]);
    int64_t b0 = Nanos((*nccl[1][i])["ts"]), b1 = b0 + Nanos((*nccl[1][i])["dur"]);
    EXPECT_TRUE(a0 < b1 && b0 < a1) << "all-reduce " << i << ": rank 0 [" << a0 << ", " << a1 << ") rank 1 [" << b0
                                    << ", " << b1 << ")";
  }

  // The same instants as each rank's own trace: each capture's clock pairs
  // placed it, and merging moved nothing.
  testing::Trace alone = testing::BuildOne(Fixture("allreduce-1"), builder::BuildOptions{});
  std::vector<int64_t> own;
  for (const Json* e : alone.Events("X", "kernel")) {
    if ((*e)["name"].text.find("ncclDevKernel_AllReduce") != std::string::npos) own.push_back(At(alone, *e));
  }
  std::sort(own.begin(), own.end());
  ASSERT_EQ(own.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(At(*t, *nccl[1][i]), own[i]);
}

TEST(Merge, MatchesWindowsAcrossRanksByLabel) {
  testing::TempDir dir;
  Ranks ranks;
  builder::BuildOptions o;
  o.window = "nvtx:ProfilerStep#\\d+";
  o.output = dir.File("steps.json.gz");
  auto report = MergeTraces(ranks.captures, o, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->outputs.size(), 4u);
  for (int step = 0; step < 4; ++step) {
    const MergeReport::Output& out = report->outputs[static_cast<size_t>(step)];
    EXPECT_EQ(out.label, "ProfilerStep#" + std::to_string(step));
    EXPECT_EQ(out.captures, 2u);
    auto t = testing::ReadTrace(out.path);
    testing::ExpectImporterRules(*t);
    EXPECT_EQ(t->root["gpucap"]["window"]["label"].text, out.label);
    size_t steps = 0;
    for (const Json* e : t->Named(out.label)) steps += (*e)["cat"].text == "user_annotation";
    EXPECT_EQ(steps, 2u) << "each rank's range of the step";
  }
}

}  // namespace
}  // namespace gpucap::tools
