// gpucap merge's placement rules, each by its effect on the merged trace:
// processes ordered by rank whatever order the captures are given in, and
// an OS pid that two captures share kept apart.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "../support/temp_dir.h"
#include "tool_test_util.h"

namespace gpucap::testing {
namespace {

struct Process {
  std::string name;
  int64_t sort_index = 0;
};

std::map<uint64_t, Process> Processes(const Trace& t) {
  std::map<uint64_t, Process> out;
  for (const Json* e : t.events) {
    if ((*e)["ph"].text != "M") continue;
    if ((*e)["name"].text == "process_name") out[(*e)["pid"].u()].name = (*e)["args"]["name"].text;
    if ((*e)["name"].text == "process_sort_index") out[(*e)["pid"].u()].sort_index = (*e)["args"]["sort_index"].i();
  }
  return out;
}

TEST(MergeRules, ProcessesSortByRankWhateverTheOrderGiven) {
  TempDir dir;
  // Rank 1 first on the command line.
  CliRun r = Gpucap("merge " + Fixture("allreduce-1") + " " + Fixture("allreduce-0") + " -q -o " + dir.File("m.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  auto t = ReadTrace(dir.File("m.json"));
  ASSERT_TRUE(t);
  int64_t max0 = INT64_MIN, min1 = INT64_MAX;
  size_t n0 = 0, n1 = 0;
  for (const auto& [pid, p] : Processes(*t)) {
    if (p.name.rfind("rank 0: ", 0) == 0) max0 = std::max(max0, p.sort_index), n0++;
    if (p.name.rfind("rank 1: ", 0) == 0) min1 = std::min(min1, p.sort_index), n1++;
  }
  ASSERT_GT(n0, 0u);
  ASSERT_GT(n1, 0u);
  EXPECT_LT(max0, min1) << "every process of rank 0 sorts before every process of rank 1";
}

TEST(MergeRules, AnOsPidTwoCapturesShareIsKeptApart) {
  TempDir dir;
  // The same program's capture twice: one OS pid, two captures.
  std::string copy = dir.File("again.gpucap");
  std::filesystem::copy_file(Fixture("basics"), copy);
  CliRun r = Gpucap("merge " + Fixture("basics") + " " + copy + " -q -o " + dir.File("m.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  auto t = ReadTrace(dir.File("m.json"));
  ASSERT_TRUE(t);
  std::map<std::string, std::set<uint64_t>> pids_of;  // "capture 0" -> pids
  for (const auto& [pid, p] : Processes(*t)) {
    // The window's own span sits on a process of the trace, not of a capture.
    if (p.name.rfind("capture ", 0) == 0) pids_of[p.name.substr(0, p.name.find(':'))].insert(pid);
  }
  ASSERT_EQ(pids_of.size(), 2u) << "two captures' processes";
  const auto& a = pids_of.begin()->second;
  const auto& b = std::next(pids_of.begin())->second;
  for (uint64_t pid : a) EXPECT_EQ(b.count(pid), 0u) << "pid " << pid << " is in both captures";
  // The API calls of each capture stay on its own process.
  std::map<uint64_t, size_t> calls;
  for (const Json* e : t->Events("X", "cuda_runtime")) calls[(*e)["pid"].u()]++;
  EXPECT_EQ(calls.size(), 2u);
}

}  // namespace
}  // namespace gpucap::testing
