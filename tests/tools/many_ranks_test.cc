// The ranks of one job, as a synthetic job (synthetic_job.h) makes them with
// its truth in job.json: merge puts hosts whose clocks are offset and drift
// back on rank 0's clock, and gpucap stats' rank tables find the figures,
// the slow rank and the straggling step job.json names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "../support/temp_dir.h"
#include "cli.h"
#include "gpucap/tools/merge/trace_merge.h"
#include "gpucap/tools/stats/job_stats.h"
#include "synthetic_job.h"
#include "tool_test_util.h"

namespace gpucap::tools {
namespace {

using testing::Json;

struct Job {
  testing::TempDir dir;
  Json truth;
  std::vector<std::unique_ptr<builder::CaptureIndex>> owned;
  std::vector<const builder::CaptureIndex*> captures;

  explicit Job(uint32_t ranks) {
    builder::testing::JobSpec spec;
    spec.ranks = ranks;
    Status made = builder::testing::MakeSyntheticJob(dir.path().string(), spec);
    EXPECT_TRUE(made.ok()) << made.message();
    std::string error;
    EXPECT_TRUE(testing::ParseJson(testing::ReadFile(dir.File("job.json")), &truth, &error)) << error;
    for (uint32_t r = 0; r < ranks; ++r) {
      auto index = OpenCapture(dir.File(builder::testing::RankFileName(r)));
      EXPECT_TRUE(index.ok()) << index.status().message();
      owned.push_back(std::move(index).value());
      captures.push_back(owned.back().get());
    }
  }
  CaptureOpener Opener() const { return builder::OpenedCaptures(captures); }
  // Host h's CLOCK_REALTIME at true time t, as job.json says it runs.
  int64_t HostTime(const std::string& host, int64_t t) const {
    for (const Json& h : truth["hosts"].items) {
      if (h["host"].text != host) continue;
      double drift = h["drift_ppm"].number * 1e-6;
      return t + h["offset_ns"].i() + std::llround(drift * static_cast<double>(t - truth["t0_realtime_ns"].i()));
    }
    ADD_FAILURE() << "no host " << host;
    return t;
  }
};

TEST(ManyRanks, AlignmentUndoesEachHostsOffsetAndDrift) {
  Job job(32);  // 4 hosts
  builder::WorkQueue queue(2);
  JobClocks clocks = AlignCaptures(job.captures, &queue);
  EXPECT_EQ(clocks.hosts, 4u);
  ASSERT_EQ(clocks.ranks.size(), 32u);
  const int64_t jitter = job.truth["end_jitter_ns"].i();
  // A true instant read on any host's clock comes back to the reference
  // host's (node-0: offset and drift 0) reading of it, within the
  // collectives' end jitter on both sides.
  const int64_t t0 = job.truth["t0_realtime_ns"].i();
  for (const RankClock& rc : clocks.ranks) {
    EXPECT_EQ(rc.aligned, rc.host != "node-0") << rc.rank;
    EXPECT_EQ(rc.matched, rc.rank == 0 ? 0u : job.truth["steps"].u() * job.truth["collectives_per_step"].u());
    for (int64_t t : {t0, t0 + 100'000'000, t0 + 300'000'000}) {
      EXPECT_LE(std::llabs(rc.Apply(job.HostTime(rc.host, t)) - t), 2 * jitter + 1) << rc.rank << " at " << t - t0;
    }
    EXPECT_LE(rc.residual_max_ns, 2 * jitter + 1) << rc.rank;
  }
}

// In the merged trace every rank's k-th collective ends where rank 0's
// does; left as recorded they are the hosts' offsets apart.
TEST(ManyRanks, MergedCollectivesEndTogether) {
  Job job(16);
  testing::TempDir out;
  auto spread = [&](ClockAlign align) {
    builder::BuildOptions o;
    o.output = out.File(align == ClockAlign::kOff ? "off.json" : "on.json");
    o.window = "nvtx:ProfilerStep#\\d+";
    o.select = "1";
    o.threads = 2;
    MergeChecks checks;
    checks.align = align;
    auto report = MergeTraces(job.captures, o, nullptr, checks);
    EXPECT_TRUE(report.ok()) << report.status().message();
    EXPECT_EQ(report->clocks.has_value(), align != ClockAlign::kOff);
    auto trace = testing::ReadTrace(report->outputs.at(0).path);
    // Per GPU process (one per rank), its NCCL kernels' ends in start order.
    std::map<uint64_t, std::vector<std::pair<double, double>>> by_pid;
    for (const Json* e : trace->Events("X", "kernel")) {
      if ((*e)["name"].text.rfind("ncclDevKernel", 0) != 0) continue;
      by_pid[(*e)["pid"].u()].push_back({(*e)["ts"].number, (*e)["ts"].number + (*e)["dur"].number});
    }
    EXPECT_EQ(by_pid.size(), 16u);
    // Shifting moves a kernel, it does not stretch it: each rank's NCCL
    // time in the step is job.json's, give or take what the drift
    // correction makes of ~30 ms (20 ppm: 0.6 us) and the trace's rounding.
    std::multiset<int64_t> got, want;
    for (const auto& [pid, spans] : by_pid) {
      double sum = 0;
      for (const auto& [start, end] : spans) sum += end - start;
      got.insert(std::llround(sum * 1000));
    }
    for (const Json& rank : job.truth["ranks"].items) want.insert(rank["nccl_ns_per_step"].items.at(1).i());
    EXPECT_EQ(got.size(), want.size());
    for (auto g = got.begin(), w = want.begin(); g != got.end() && w != want.end(); ++g, ++w) {
      EXPECT_NEAR(*g, *w, 2000);
    }
    double widest = 0;
    size_t per_rank = by_pid.begin()->second.size();
    EXPECT_EQ(per_rank, job.truth["collectives_per_step"].u());
    for (size_t k = 0; k < per_rank; ++k) {
      double lo = 1e300, hi = -1e300;
      for (auto& [pid, ends] : by_pid) {
        std::sort(ends.begin(), ends.end());
        lo = std::min(lo, ends.at(k).second);
        hi = std::max(hi, ends.at(k).second);
      }
      widest = std::max(widest, hi - lo);
    }
    return widest;  // us
  };
  double jitter_us = job.truth["end_jitter_ns"].number / 1000.0;
  EXPECT_LE(spread(ClockAlign::kAuto), 2 * jitter_us + 0.002);
  EXPECT_GT(spread(ClockAlign::kOff), 100 * jitter_us) << "the hosts' clocks differ by far more than the jitter";
}

TEST(ManyRanks, StatsRankTablesAreTheJobsTruth) {
  Job job(16);
  builder::BuildOptions o;
  o.window = "nvtx:ProfilerStep#\\d+";
  o.threads = 2;
  auto stats = CollectJobStats(job.captures.size(), job.Opener(), o, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  std::vector<Table> tables = RankTables(*stats);
  ASSERT_EQ(tables.size(), 2u);
  const Table& ranks = tables[0];
  const Table& steps = tables[1];
  const size_t n = job.truth["steps"].u();
  ASSERT_EQ(ranks.rows.size(), 16u);
  ASSERT_EQ(steps.rows.size(), 16u * n);
  const int64_t slow = job.truth["slow_rank"].i(), straggling = job.truth["straggling_rank"].i();
  for (size_t row = 0; row < steps.rows.size(); ++row) {
    const auto& cells = steps.rows[row];
    int64_t rank = std::get<int64_t>(cells[1]);
    const std::string& step = std::get<std::string>(cells[2]);
    size_t k = row % n;
    EXPECT_EQ(step, job.truth["step_names"].items[k].text);
    const Json& truth = job.truth["ranks"].items[static_cast<size_t>(rank)];
    EXPECT_EQ(std::get<int64_t>(cells[3]), truth["step_ns"].items[k].i()) << rank << " " << step;
    EXPECT_EQ(std::get<int64_t>(cells[4]), truth["nccl_ns_per_step"].items[k].i()) << rank << " " << step;
    int64_t straggler = step == job.truth["straggling_step"].text ? straggling : slow;
    EXPECT_EQ(std::get<int64_t>(cells[6]), rank == straggler ? 1 : 0) << rank << " " << step;
    if (rank == straggler) {
      EXPECT_EQ(std::get<int64_t>(cells[5]), 0);
    }
  }
  // The slow rank straggled every step but the straggling one.
  for (const auto& cells : ranks.rows) {
    int64_t rank = std::get<int64_t>(cells[1]);
    int64_t want = rank == slow ? static_cast<int64_t>(n - 1) : rank == straggling ? 1 : 0;
    EXPECT_EQ(std::get<int64_t>(cells[12]), want) << rank;
  }
  EXPECT_EQ(stats->total.windows, 16u * n);
}

}  // namespace
}  // namespace gpucap::tools
