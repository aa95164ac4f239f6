// Ranks' clocks aligned from their shared collectives (clock_alignment.h):
// hosts shifted and drifting by known amounts come back onto the
// reference's clock, and the two ranks of a real NCCL job, on one host, end
// their collectives together.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "cli.h"
#include "tool_test_util.h"
#include "gpucap/tools/align/clock_alignment.h"

namespace gpucap::tools {
namespace {

constexpr int64_t kT0 = 1'790'000'000'000'000'000;
constexpr int64_t kMs = 1'000'000;

struct Host {
  std::string name;
  int64_t offset_ns;
  double drift_ppm;
};

// True end of collective k: every 10 ms, with an uneven part so that no two
// gaps are alike.
int64_t TrueEnd(int k) { return kT0 + k * 10 * kMs + (k * 7919 % 1000) * 1000; }

// Rank r's reading of true time t on host h, with a jitter of at most
// `jitter` ns that depends on the rank and the collective.
int64_t Reading(const Host& h, int r, int k, int64_t jitter) {
  int64_t t = TrueEnd(k);
  int64_t j = jitter == 0 ? 0 : ((r * 131 + k * 17) % (2 * jitter + 1)) - jitter;
  return t + h.offset_ns + std::llround(h.drift_ppm * 1e-6 * static_cast<double>(t - kT0)) + j;
}

CollectiveTimes Rank(int r, const Host& h, int collectives, int64_t jitter) {
  CollectiveTimes c;
  c.rank = r;
  c.host = h.name;
  c.names = {"ncclDevKernel_AllReduce_Sum_f32_RING_LL"};
  auto& s = c.streams.emplace_back();
  for (int k = 0; k < collectives; ++k) s.push_back({static_cast<uint64_t>(k), 0, Reading(h, r, k, jitter)});
  return c;
}

TEST(ClockAlignment, HostsShiftedAndDriftingComeBackOntoTheReference) {
  const Host a{"node-a", 0, 0}, b{"node-b", 1'500'000, 12.0}, c{"node-c", -800'000, -7.0};
  const int64_t jitter = 500;
  std::vector<CollectiveTimes> job = {Rank(2, b, 200, jitter), Rank(0, a, 200, jitter), Rank(1, a, 200, jitter),
                                      Rank(3, b, 200, jitter), Rank(4, c, 200, jitter)};
  JobClocks clocks = AlignClocks(job);
  EXPECT_EQ(clocks.reference, 1u) << "the lowest rank";
  EXPECT_EQ(clocks.hosts, 3u);
  ASSERT_EQ(clocks.ranks.size(), 5u);
  EXPECT_FALSE(clocks.ranks[1].aligned);
  EXPECT_FALSE(clocks.ranks[2].aligned) << "the reference's host keeps its clock";
  for (size_t i : {0u, 3u, 4u}) {
    const RankClock& rc = clocks.ranks[i];
    ASSERT_TRUE(rc.aligned) << i;
    EXPECT_EQ(rc.matched, 200u);
    const Host& h = rc.host == "node-b" ? b : c;
    // Every reading goes back to its true time, give or take the two
    // jitters (the rank's and the reference's) and the fit's rounding.
    for (int k = 0; k < 200; k += 13) {
      int64_t back = rc.Apply(Reading(h, static_cast<int>(rc.rank), k, 0));
      EXPECT_NEAR(static_cast<double>(back), static_cast<double>(TrueEnd(k)), 2.0 * jitter + 2) << i << " " << k;
    }
    // The slope of 200 readings over 2 s with two jitters of +-500 ns has a
    // standard error of ~0.05 ppm: five of them.
    EXPECT_NEAR(rc.drift_ppm(), -h.drift_ppm, 0.25) << i;
    EXPECT_LE(rc.residual_max_ns, 2 * jitter + 2) << i;
    EXPECT_GT(rc.residual_rms_ns, 0) << i;
  }
  EXPECT_EQ(clocks.ranks[0].offset_ns, clocks.ranks[3].offset_ns) << "one line per host";
  EXPECT_LE(clocks.worst_residual_ns, 2 * jitter + 2);
}

TEST(ClockAlignment, ACollectiveFarOffTheLineDoesNotMoveIt) {
  const Host a{"node-a", 0, 0}, b{"node-b", 3 * kMs, 0};
  std::vector<CollectiveTimes> job = {Rank(0, a, 100, 0), Rank(1, b, 100, 0)};
  job[1].streams[0][40].end_ns += 2 * kMs;  // one end recorded late (a preempted rank, a clock step)
  JobClocks clocks = AlignClocks(job);
  const RankClock& rc = clocks.ranks[1];
  ASSERT_TRUE(rc.aligned);
  EXPECT_EQ(rc.offset_ns, -3 * kMs);
  EXPECT_EQ(rc.drift, 0.0);
  EXPECT_EQ(rc.residual_max_ns, 2 * kMs) << "the residual still shows the pair left out of the fit";
}

TEST(ClockAlignment, AStreamStopsMatchingWhereItsKernelNamesPart) {
  const Host a{"node-a", 0, 0}, b{"node-b", kMs, 0};
  std::vector<CollectiveTimes> job = {Rank(0, a, 20, 0), Rank(1, b, 20, 0)};
  job[1].names.push_back("ncclDevKernel_Broadcast_RING_LL");
  job[1].streams[0][5].name = 1;
  JobClocks clocks = AlignClocks(job);
  EXPECT_EQ(clocks.ranks[1].matched, 5u);
  EXPECT_EQ(clocks.ranks[1].offset_ns, -kMs);
}

TEST(ClockAlignment, StridedStreamsMatchOnTheOrdinalsBothKept) {
  const Host a{"node-a", 0, 0}, b{"node-b", kMs, 0};
  std::vector<CollectiveTimes> job = {Rank(0, a, 40, 0), Rank(1, b, 40, 0)};
  std::vector<CollectiveTimes::End> every_other;
  for (const auto& e : job[1].streams[0]) {
    if (e.ordinal % 2 == 0) every_other.push_back(e);
  }
  job[1].streams[0] = every_other;
  EXPECT_EQ(AlignClocks(job).ranks[1].matched, 20u);
}

TEST(ClockAlignment, AHostSharingNothingKeepsItsTimesAndSaysSo) {
  const Host a{"node-a", 0, 0}, b{"node-b", kMs, 0};
  std::vector<CollectiveTimes> job = {Rank(0, a, 10, 0), Rank(1, b, 0, 0)};
  job[1].streams.clear();
  JobClocks clocks = AlignClocks(job);
  EXPECT_FALSE(clocks.ranks[1].aligned);
  EXPECT_FALSE(clocks.ranks[1].note.empty());
  EXPECT_EQ(clocks.ranks[1].Apply(kT0 + 5), kT0 + 5);
  std::vector<std::string> lines = DescribeClocks(clocks);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("0 of 2 captures shifted"), std::string::npos) << lines[0];
}

TEST(ClockAlignment, TheTwoRanksOfARealJobEndTheirCollectivesTogether) {
  std::vector<CollectiveTimes> job;
  for (const char* name : {"allreduce-0", "allreduce-1"}) {
    auto index = OpenCapture(testing::Fixture(name));
    ASSERT_TRUE(index.ok()) << index.status().message();
    job.push_back(ReadCollectiveTimes(**index));
  }
  ASSERT_EQ(job[0].host, job[1].host) << "both ranks ran on one host";
  ASSERT_FALSE(job[0].streams.empty());
  size_t collectives = 0;
  for (const auto& s : job[0].streams) collectives += s.size();
  // Both ranks see the same clock: aligning them as if on two hosts must
  // find no offset and no drift beyond what the collectives' ends differ by.
  job[1].host = "another host";
  JobClocks same = AlignClocks(job);
  const RankClock& rc = same.ranks[1];
  ASSERT_TRUE(rc.aligned);
  EXPECT_EQ(rc.matched, collectives);
  EXPECT_LE(std::llabs(rc.offset_ns), 5'000);
  EXPECT_LE(rc.residual_max_ns, 5'000);
  // The same job with rank 1's host 3 ms ahead comes back by 3 ms.
  for (auto& s : job[1].streams) {
    for (auto& e : s) e.end_ns += 3 * kMs;
  }
  JobClocks shifted = AlignClocks(job);
  EXPECT_LE(std::llabs(shifted.ranks[1].offset_ns + 3 * kMs - rc.offset_ns), 1);
  EXPECT_EQ(shifted.ranks[1].residual_max_ns, rc.residual_max_ns);
}

}  // namespace
}  // namespace gpucap::tools
