// Synthetic jobs of N ranks (builder/testing/synthetic_job.h): every rank's
// capture opens as that rank of that host, with its steps and kernels; the
// collectives end at one true time once each host's clock is undone with
// job.json's offset and drift; the straggler gpucap stats finds is the slow
// rank but in the straggling step; job.json's per-rank figures are stats's;
// the same seed gives the same bytes. Expectations come from the spec, not
// from the generator's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../support/temp_dir.h"
#include "gpucap/builder/builder.h"
#include "gpucap/builder/capture_index.h"
#include "gpucap/tools/stats/window_stats.h"
#include "json.h"
#include "synthetic_job.h"

namespace gpucap {
namespace {

using builder::testing::JobSpec;
using builder::testing::MakeSyntheticJob;
using builder::testing::RankFileName;
using ::gpucap::testing::Json;
using ::gpucap::testing::ReadFile;
using ::gpucap::testing::TempDir;

constexpr char kSteps[] = "nvtx:ProfilerStep#\\d+";

// A small job with every choice spelled out, so the tests know the answers.
JobSpec SmallJob() {
  JobSpec s;
  s.ranks = 16;
  s.seed = 7;
  s.steps = 5;
  s.first_step = 10;
  s.kernels_per_step = 12;
  s.collectives_per_step = 3;
  s.slow_rank = 5;
  s.straggling_rank = 11;
  s.straggling_step = 12;
  s.end_jitter_ns = 1000;
  return s;
}

Json ReadJob(const std::string& dir) {
  Json j;
  std::string error;
  EXPECT_TRUE(testing::ParseJson(ReadFile(dir + "/job.json"), &j, &error)) << error;
  return j;
}

int64_t Int(const Json& j) { return std::stoll(j.text); }

// The kernels of one window, on the rank's realtime as the builder shows them.
struct Kernel {
  int64_t start, end;
  bool nccl;
};

class KernelSink : public builder::TraceSink {
 public:
  explicit KernelSink(std::vector<Kernel>* out) : out_(out) {}
  Status Begin(const builder::TraceHeader&) override { return Status::Ok(); }
  Status AddSlice(const builder::Slice& s) override {
    if (s.category == builder::Category::kKernel && !s.instant()) {
      out_->push_back({s.ts_ns, s.ts_ns + s.dur_ns, std::string_view(s.name).starts_with("nccl")});
    }
    return Status::Ok();
  }
  Status AddCounter(const builder::CounterPoint&) override { return Status::Ok(); }
  Status End() override { return Status::Ok(); }

 private:
  std::vector<Kernel>* out_;
};

// A rank's step windows: label -> its kernels by start.
std::map<std::string, std::vector<Kernel>> StepKernels(const builder::CaptureIndex& index) {
  builder::BuildOptions o;
  o.window = kSteps;
  builder::Builder b(index, o);
  auto windows = b.MatchedWindows();
  EXPECT_TRUE(windows.ok()) << windows.status().message();
  std::map<std::string, std::vector<Kernel>> out;
  if (!windows.ok()) return out;
  for (const builder::Window& w : *windows) {
    std::vector<Kernel>& k = out[w.label];
    KernelSink sink(&k);
    builder::WindowReport report;
    Status st = b.BuildWindow(w, &sink, &report);
    EXPECT_TRUE(st.ok()) << st.message();
    std::sort(k.begin(), k.end(), [](const Kernel& a, const Kernel& b) { return a.start < b.start; });
  }
  return out;
}

class SyntheticJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = SmallJob();
    Status st = MakeSyntheticJob(dir_.path().string(), spec_);
    ASSERT_TRUE(st.ok()) << st.message();
    job_ = ReadJob(dir_.path().string());
  }
  std::string RankPath(uint32_t r) const { return dir_.File(RankFileName(r)); }
  std::string StepName(uint32_t i) const { return "ProfilerStep#" + std::to_string(spec_.first_step + i); }

  TempDir dir_;
  JobSpec spec_;
  Json job_;
};

TEST_F(SyntheticJobTest, EveryRankIsItsProcessOnItsHost) {
  std::map<std::string, std::set<uint32_t>> pids_by_host;
  for (uint32_t r = 0; r < spec_.ranks; ++r) {
    auto index = builder::CaptureIndex::Open(RankPath(r), /*verify=*/true);
    ASSERT_TRUE(index.ok()) << index.status().message();
    const format::Capture& c = (*index)->capture();
    ASSERT_TRUE(c.session.has_value());
    EXPECT_EQ(c.session->rank, static_cast<int32_t>(r));
    EXPECT_EQ(c.session->world_size, 16);
    EXPECT_EQ(c.session->local_rank, static_cast<int32_t>(r % 8));
    std::string host = "node-" + std::to_string(r / 8);
    EXPECT_EQ(c.session->host, host);
    pids_by_host[host].insert(c.session->pid);
    ASSERT_EQ(c.devices.size(), 1u);
    EXPECT_EQ(c.devices[0].id, r % 8);
    EXPECT_EQ(c.devices[0].name, "NVIDIA H200");
    EXPECT_TRUE(c.trailer && c.trailer->clean_shutdown);
    EXPECT_TRUE((*index)->clock().calibrated());

    auto steps = StepKernels(**index);
    ASSERT_EQ(steps.size(), 5u) << "rank " << r;
    for (uint32_t i = 0; i < 5; ++i) {
      ASSERT_TRUE(steps.count(StepName(i))) << StepName(i);
      const auto& k = steps[StepName(i)];
      EXPECT_EQ(std::count_if(k.begin(), k.end(), [](const Kernel& x) { return x.nccl; }), 3);
      EXPECT_EQ(std::count_if(k.begin(), k.end(), [](const Kernel& x) { return !x.nccl; }), 12);
    }
    // job.json names the same file, host and pid.
    const Json& row = job_["ranks"].items.at(r);
    EXPECT_EQ(Int(row["rank"]), r);
    EXPECT_EQ(row["file"].text, RankFileName(r));
    EXPECT_EQ(row["host"].text, host);
    EXPECT_EQ(Int(row["pid"]), c.session->pid);
  }
  ASSERT_EQ(pids_by_host.size(), 2u);
  for (const auto& [host, pids] : pids_by_host) EXPECT_EQ(pids.size(), 8u) << host;
  EXPECT_EQ(RankFileName(7), "rank-0007.gpucap");
}

TEST_F(SyntheticJobTest, TruthStatesTheSpec) {
  EXPECT_EQ(Int(job_["world_size"]), 16);
  EXPECT_EQ(Int(job_["ranks_per_host"]), 8);
  EXPECT_EQ(Int(job_["seed"]), 7);
  EXPECT_EQ(Int(job_["steps"]), 5);
  EXPECT_EQ(Int(job_["first_step"]), 10);
  ASSERT_EQ(job_["step_names"].items.size(), 5u);
  EXPECT_EQ(job_["step_names"].items[0].text, "ProfilerStep#10");
  EXPECT_EQ(job_["step_names"].items[4].text, "ProfilerStep#14");
  EXPECT_EQ(Int(job_["collectives_per_step"]), 3);
  EXPECT_EQ(Int(job_["slow_rank"]), 5);
  EXPECT_DOUBLE_EQ(job_["slow_factor"].number, 1.3);
  EXPECT_EQ(job_["straggling_step"].text, "ProfilerStep#12");
  EXPECT_EQ(Int(job_["straggling_rank"]), 11);
  EXPECT_EQ(Int(job_["end_jitter_ns"]), 1000);
  EXPECT_EQ(Int(job_["t0_realtime_ns"]), spec_.t0_realtime_ns);
  EXPECT_GT(Int(job_["stall_ns"]), 0);
  ASSERT_EQ(job_["hosts"].items.size(), 2u);
  EXPECT_EQ(job_["hosts"].items[0]["host"].text, "node-0");
  EXPECT_EQ(Int(job_["hosts"].items[0]["offset_ns"]), 0);
  EXPECT_EQ(job_["hosts"].items[0]["drift_ppm"].number, 0.0);
  const Json& h1 = job_["hosts"].items[1];
  EXPECT_EQ(h1["host"].text, "node-1");
  EXPECT_LE(std::llabs(Int(h1["offset_ns"])), 2'000'000);
  EXPECT_LE(std::fabs(h1["drift_ppm"].number), 20.0);
  ASSERT_EQ(job_["collective_end_true_ns"].items.size(), 5u);
  for (const Json& step : job_["collective_end_true_ns"].items) EXPECT_EQ(step.items.size(), 3u);
  ASSERT_EQ(job_["ranks"].items.size(), 16u);
}

// Undoing each host's offset and drift (job.json) brings every rank's
// collective ends to the one true end, within the end jitter; left on its
// host's realtime, node-1 is off by far more.
TEST_F(SyntheticJobTest, CollectivesEndTogetherOnceClocksAreUndone) {
  const int64_t t0 = spec_.t0_realtime_ns, jitter = spec_.end_jitter_ns;
  // [step][collective] -> per rank: the end as shown, and as undone.
  std::vector<std::vector<std::vector<int64_t>>> shown(5, std::vector<std::vector<int64_t>>(3)), undone = shown;
  for (uint32_t r = 0; r < spec_.ranks; ++r) {
    auto index = builder::CaptureIndex::Open(RankPath(r));
    ASSERT_TRUE(index.ok());
    auto steps = StepKernels(**index);
    const Json& host = job_["hosts"].items.at(r / 8);
    long double drift = host["drift_ppm"].number * 1e-6L;
    int64_t offset = Int(host["offset_ns"]);
    for (uint32_t i = 0; i < 5; ++i) {
      std::vector<int64_t> ends;
      for (const Kernel& k : steps[StepName(i)]) {
        if (k.nccl) ends.push_back(k.end);
      }
      ASSERT_EQ(ends.size(), 3u) << "rank " << r;
      for (uint32_t c = 0; c < 3; ++c) {
        // realtime = true + offset + drift * (true - T0): solve for true.
        long double x = static_cast<long double>(ends[c] - t0 - offset) / (1 + drift);
        shown[i][c].push_back(ends[c]);
        undone[i][c].push_back(t0 + std::llroundl(x));
      }
    }
  }
  int64_t widest_shown = 0;
  for (uint32_t i = 0; i < 5; ++i) {
    for (uint32_t c = 0; c < 3; ++c) {
      int64_t truth = Int(job_["collective_end_true_ns"].items.at(i).items.at(c));
      auto [lo, hi] = std::minmax_element(undone[i][c].begin(), undone[i][c].end());
      EXPECT_GE(*lo, truth - 2) << StepName(i) << " collective " << c;
      EXPECT_LE(*hi, truth + jitter + 2) << StepName(i) << " collective " << c;
      EXPECT_LE(*hi - *lo, jitter + 4);
      auto [slo, shi] = std::minmax_element(shown[i][c].begin(), shown[i][c].end());
      widest_shown = std::max(widest_shown, *shi - *slo);
    }
  }
  // Left on their hosts' realtime, the ends are far apart: the test sees a
  // clock that was not undone.
  EXPECT_GT(widest_shown, 10 * jitter);
}

// The rank with the least NCCL time in a step, as gpucap stats measures it:
// the slow rank, but in the straggling step the rank that stalled. And
// job.json's per-rank figures are those stats gives.
TEST_F(SyntheticJobTest, StragglerIsTheSlowRankButInTheStragglingStep) {
  std::vector<std::vector<int64_t>> nccl(spec_.ranks), length(spec_.ranks);
  for (uint32_t r = 0; r < spec_.ranks; ++r) {
    auto index = builder::CaptureIndex::Open(RankPath(r));
    ASSERT_TRUE(index.ok());
    builder::BuildOptions o;
    o.window = kSteps;
    auto stats = tools::CollectWindowStats(**index, o, nullptr);
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    EXPECT_EQ(stats->rank, static_cast<int32_t>(r));
    ASSERT_EQ(stats->windows.size(), 5u);
    const Json& row = job_["ranks"].items.at(r);
    for (uint32_t i = 0; i < 5; ++i) {
      const tools::WindowStats& w = stats->windows[i];
      EXPECT_EQ(w.window.label, StepName(i));
      int64_t comm = 0;
      for (const auto& [device, d] : w.stats.devices) comm += d.communication_ns;
      nccl[r].push_back(comm);
      length[r].push_back(w.end_ns - w.start_ns);
      EXPECT_EQ(Int(row["nccl_ns_per_step"].items.at(i)), comm) << "rank " << r << " " << StepName(i);
      EXPECT_EQ(Int(row["step_ns"].items.at(i)), w.end_ns - w.start_ns) << "rank " << r << " " << StepName(i);
    }
  }
  for (uint32_t i = 0; i < 5; ++i) {
    uint32_t least = 0;
    for (uint32_t r = 1; r < spec_.ranks; ++r) {
      if (nccl[r][i] < nccl[least][i]) least = r;
    }
    bool straggling = spec_.first_step + i == 12;
    EXPECT_EQ(least, straggling ? 11u : 5u) << StepName(i);
    if (!straggling) {
      // The slow rank arrives last: each collective lasts the transfer and
      // its end jitter (on a clock drifting <= 20 ppm: within 10 ns of it).
      EXPECT_GE(nccl[5][i], 3 * spec_.transfer_ns - 30);
      EXPECT_LE(nccl[5][i], 3 * (spec_.transfer_ns + spec_.end_jitter_ns) + 30);
    }
  }
  // The stall makes the straggling step long for everyone.
  for (uint32_t r = 0; r < spec_.ranks; ++r) {
    EXPECT_GT(length[r][2], Int(job_["stall_ns"])) << "rank " << r;
    EXPECT_LT(length[r][1], Int(job_["stall_ns"])) << "rank " << r;
  }
}

TEST(SyntheticJob, SameSeedSameBytes) {
  TempDir a, b, c;
  JobSpec spec = SmallJob();
  ASSERT_TRUE(MakeSyntheticJob(a.path().string(), spec).ok());
  ASSERT_TRUE(MakeSyntheticJob(b.path().string(), spec).ok());
  spec.seed = 8;
  ASSERT_TRUE(MakeSyntheticJob(c.path().string(), spec).ok());
  std::vector<std::string> files = {"job.json"};
  for (uint32_t r = 0; r < spec.ranks; ++r) files.push_back(RankFileName(r));
  size_t differ = 0;
  for (const std::string& f : files) {
    std::string x = ReadFile(a.File(f));
    ASSERT_FALSE(x.empty()) << f;
    EXPECT_TRUE(x == ReadFile(b.File(f))) << f << " differs between two runs of one seed";
    differ += x != ReadFile(c.File(f));
  }
  EXPECT_EQ(differ, files.size());
  size_t listed = std::distance(std::filesystem::directory_iterator(a.path()), {});
  EXPECT_EQ(listed, files.size());
}

TEST(SyntheticJob, WritesOnlyNewFiles) {
  TempDir dir;
  testing::WriteFile(dir.File("rank-0003.gpucap"), "mine");
  Status st = MakeSyntheticJob(dir.path().string(), SmallJob());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank-0003.gpucap exists"), std::string::npos) << st.message();
  EXPECT_EQ(ReadFile(dir.File("rank-0003.gpucap")), "mine");
  EXPECT_FALSE(std::filesystem::exists(dir.File("rank-0000.gpucap")));
}

TEST(SyntheticJob, RefusesJobsWithoutAnAnswer) {
  JobSpec s = SmallJob();
  s.straggling_rank = s.slow_rank;
  EXPECT_FALSE(builder::testing::ResolveJobSpec(s).ok());
  s = SmallJob();
  s.ranks = 1;
  s.slow_rank.reset();
  s.straggling_rank.reset();
  EXPECT_FALSE(builder::testing::ResolveJobSpec(s).ok());
  s = SmallJob();
  s.straggling_step = 15;  // steps are 10..14
  EXPECT_FALSE(builder::testing::ResolveJobSpec(s).ok());
  s = SmallJob();
  s.slow_rank = 16;
  EXPECT_FALSE(builder::testing::ResolveJobSpec(s).ok());
}

TEST(SyntheticJob, DefaultsNameDistinctRanksAndAMiddleStep) {
  JobSpec s;
  s.ranks = 1024;
  auto r = builder::testing::ResolveJobSpec(s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r->slow_rank, 512u);
  EXPECT_NE(*r->straggling_rank, 512u);
  EXPECT_LT(*r->straggling_rank, 1024u);
  EXPECT_EQ(*r->straggling_step, 4);
  s.ranks = 2;
  r = builder::testing::ResolveJobSpec(s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(*r->straggling_rank, *r->slow_rank);
}

}  // namespace
}  // namespace gpucap
