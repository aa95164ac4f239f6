// gpucap report's numbers, read from the page's embedded data (no browser
// needed) and checked against what this test computes on its own: the
// straggler of each step from the ranks' NCCL kernel time in their Chrome
// JSON builds, and the launch-delay percentiles by the nearest-rank
// definition, on a synthetic capture whose delays are known and on a
// fixture's delays read from its trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "../support/temp_dir.h"
#include "export_test_util.h"
#include "scene.h"

namespace gpucap::testing {
namespace {

// The report of `captures`, its embedded JSON (script#gpucap-data) parsed.
Json ReportData(const std::vector<std::string>& captures, const std::string& window) {
  TempDir dir;
  std::string out = dir.File("r.html"), args = "report -q -o " + out + " --window " + window;
  for (const std::string& c : captures) args += " " + c;
  CliRun run = Gpucap(args);
  EXPECT_EQ(run.code, 0) << run.output;
  std::string page = ReadFile(out);
  const std::string open = "id=\"gpucap-data\">";
  size_t a = page.find(open);
  EXPECT_NE(a, std::string::npos) << "no embedded data";
  if (a == std::string::npos) return {};
  a += open.size();
  std::string data = page.substr(a, page.find("</script>", a) - a);
  // The page escapes "</" inside the script as "<\/".
  for (size_t at; (at = data.find("<\\/")) != std::string::npos;) data.erase(at + 1, 1);
  return ParseOrFail(data);
}

// The nearest-rank percentile: the smallest value such that at least p of
// the values are at or below it, i.e. the ceil(p * n)-th smallest (1-based).
int64_t NearestRank(std::vector<int64_t> v, int percent) {
  std::sort(v.begin(), v.end());
  size_t rank = (static_cast<size_t>(percent) * v.size() + 99) / 100;  // ceil, in integers
  return v[std::max<size_t>(rank, 1) - 1];
}

TEST(ReportData, NearestRankOfTheTestItself) {
  // The definition the report documents, on lists small enough to see.
  std::vector<int64_t> ten = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  EXPECT_EQ(NearestRank(ten, 50), 5);
  EXPECT_EQ(NearestRank(ten, 90), 9);
  EXPECT_EQ(NearestRank(ten, 99), 10);
  EXPECT_EQ(NearestRank({42}, 50), 42);
  EXPECT_EQ(NearestRank({1, 2, 3}, 50), 2);
}

// Twenty launches on one stream whose launch-to-start delays are 1..20 us
// in a shuffled order: p50 is the 10th smallest (10 us), p90 the 18th, p99
// the 20th; each call lasts 2 us, so return-to-start is 2 us less.
TEST(ReportData, LaunchDelayPercentilesAreNearestRankOnAKnownList) {
  Scene s;
  Scene::Ok(s.c().String(0x1000, "_Z6kernelv"));
  std::vector<int64_t> launch, ret;
  for (uint32_t k = 0; k < 20; ++k) {
    uint64_t delay = ((k * 7) % 20 + 1) * 1000;  // 7 is prime to 20: each of 1..20 once
    uint64_t api = kT0 + 10'000 + k * 100'000;
    s.Launch(k + 1, 4242, api, api + delay, api + delay + 500);
    launch.push_back(static_cast<int64_t>(delay));
    ret.push_back(static_cast<int64_t>(delay) - 2000);
  }
  Json data = ReportData({s.Path()}, "all");
  const Json& delays = data["captures"].items.at(0)["delays"];
  ASSERT_EQ(delays.items.size(), 1u) << "one stream";
  const Json& d = delays.items[0];
  EXPECT_EQ(d["stream"].i(), 7);
  const Json& l = d["launch_to_start"];
  EXPECT_EQ(l["count"].i(), 20);
  EXPECT_EQ(l["p50_ns"].i(), 10'000);
  EXPECT_EQ(l["p90_ns"].i(), 18'000);
  EXPECT_EQ(l["p99_ns"].i(), 20'000);
  EXPECT_EQ(l["max_ns"].i(), 20'000);
  const Json& r = d["return_to_start"];
  EXPECT_EQ(r["count"].i(), 20);
  EXPECT_EQ(r["p50_ns"].i(), 8'000);
  EXPECT_EQ(r["p90_ns"].i(), 16'000);
  EXPECT_EQ(r["p99_ns"].i(), 18'000);
  // The same through the test's own definition.
  EXPECT_EQ(l["p50_ns"].i(), NearestRank(launch, 50));
  EXPECT_EQ(r["p90_ns"].i(), NearestRank(ret, 90));
}

// A fixture's delays, per stream, from the launch flows of its trace.
TEST(ReportData, LaunchDelayPercentilesOfAFixtureMatchItsTrace) {
  const std::string path = Fixture("basics");
  Trace t = BuildOne(path);
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> launch, ret;
  for (const JsonOp& op : JsonOps(t, false)) {
    if (!op.launched) continue;
    auto key = std::pair(std::stoll(ArgText(*op.e, "device")), std::stoll(ArgText(*op.e, "stream")));
    launch[key].push_back(op.start - op.launch_start);
    ret[key].push_back(op.start - (op.launch_start + op.launch_dur));
  }
  ASSERT_FALSE(launch.empty());
  Json data = ReportData({path}, "all");
  const Json& delays = data["captures"].items.at(0)["delays"];
  ASSERT_EQ(delays.items.size(), launch.size());
  size_t distinct_ranks = 0;
  for (const Json& d : delays.items) {
    auto key = std::pair(d["device"].i(), d["stream"].i());
    SCOPED_TRACE("device " + std::to_string(key.first) + " stream " + std::to_string(key.second));
    ASSERT_TRUE(launch.count(key));
    for (const auto& [name, want] : {std::pair("launch_to_start", &launch[key]), std::pair("return_to_start", &ret[key])}) {
      const Json& got = d[name];
      EXPECT_EQ(got["count"].u(), want->size()) << name;
      EXPECT_EQ(got["p50_ns"].i(), NearestRank(*want, 50)) << name;
      EXPECT_EQ(got["p90_ns"].i(), NearestRank(*want, 90)) << name;
      EXPECT_EQ(got["p99_ns"].i(), NearestRank(*want, 99)) << name;
      EXPECT_EQ(got["max_ns"].i(), *std::max_element(want->begin(), want->end())) << name;
      std::vector<int64_t> v = *want;
      std::sort(v.begin(), v.end());
      size_t n = v.size(), r50 = (50 * n + 99) / 100;
      if (r50 < n && v[r50 - 1] != v[r50]) distinct_ranks++;
    }
  }
  // Otherwise a percentile one rank off could not show here.
  EXPECT_GT(distinct_ranks, 0u) << "the fixture's delays have neighbours that differ at the median";
}

// The straggler of a step is the rank with the least NCCL time in it
// (docs/cli.md, report): the one the others' collectives waited for. Each
// rank's NCCL time per step is summed here from its own trace (the kernels
// named nccl*), the straggler picked as the least, and each wait is the
// rank's NCCL time past the straggler's.
TEST(ReportData, TheStragglerIsTheRankWithTheLeastNcclTime) {
  const std::vector<std::string> ranks = {Fixture("allreduce-0"), Fixture("allreduce-1")};
  std::vector<std::map<std::string, int64_t>> nccl(ranks.size());  // by step label
  builder::BuildOptions o;
  o.window = "marks";
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (const Trace& t : BuildTraces(ranks[r], o)) {
      int64_t sum = 0;
      for (const Json* k : t.Events("X", "kernel")) {
        if ((*k)["name"].text.rfind("nccl", 0) == 0) sum += Nanos((*k)["dur"]);
      }
      nccl[r][t.root["gpucap"]["window"]["label"].text] = sum;
    }
  }
  Json data = ReportData(ranks, "marks");
  const Json& report = data["ranks"];
  const Json& steps = report["steps"];
  ASSERT_EQ(steps.items.size(), 4u);
  for (size_t s = 0; s < steps.items.size(); ++s) {
    const std::string& label = steps.items[s].text;
    SCOPED_TRACE(label);
    ASSERT_TRUE(nccl[0].count(label) && nccl[1].count(label));
    int64_t a = nccl[0][label], b = nccl[1][label];
    ASSERT_GT(a, 0);
    ASSERT_GT(b, 0);
    ASSERT_NE(a, b) << "a step where the ranks tie cannot tell least from most";
    int64_t want = a < b ? 0 : 1;
    int64_t least = std::min(a, b);
    EXPECT_EQ(report["straggler"].items.at(s).i(), want) << "NCCL time: rank 0 " << a << " ns, rank 1 " << b << " ns";
    for (size_t r = 0; r < 2; ++r) {
      const Json& row = report["rows"].items.at(r);
      EXPECT_EQ(row["communication_ns"].items.at(s).i(), nccl[r][label]) << "rank " << r;
      EXPECT_EQ(row["wait_ns"].items.at(s).i(), nccl[r][label] - least) << "rank " << r;
    }
  }
}

}  // namespace
}  // namespace gpucap::testing
