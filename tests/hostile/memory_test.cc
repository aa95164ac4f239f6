// Issue 23 acceptance: on every generated hostile capture, peak RSS of info,
// build (both renderers), stats and trim stays within 10x the capture's size
// plus 256 MB, measured by wait4 on a child whose address space is capped
// (RunOn; under sanitizers only the measurement holds).
#include "hostile_captures.h"
#include "hostile_test.h"

namespace gpucap::testing::hostile {
namespace {

class MemoryTest : public ::testing::TestWithParam<size_t> {};

TEST_P(MemoryTest, PeakRssWithinTenTimesTheCapturePlus256MB) {
  static const auto cases = AllCases();
  const auto& [name, bytes] = cases[GetParam()];
  SCOPED_TRACE(name + " (" + std::to_string(bytes.size()) + " bytes)");
  TempDir dir;
  for (std::vector<std::string> args :
       {std::vector<std::string>{"info", "{}"},
        std::vector<std::string>{"build", "{}", "-q", "-o", dir.File("t.json")},
        std::vector<std::string>{"build", "{}", "-q", "-o", dir.File("t.pftrace")},
        std::vector<std::string>{"stats", "{}"},
        std::vector<std::string>{"trim", "{}", "-w", "all", "--anonymize", "-o", dir.File("t.gpucap")}}) {
    LimitedRun r = RunOn(dir, bytes, args, 60);
    EXPECT_NE(r.signal, SIGSEGV) << args[0] << ": " << r.Describe();
    EXPECT_NE(r.signal, SIGABRT) << args[0] << ": " << r.Describe();
    std::cout << name << " " << args[0] << (args.size() > 4 ? " " + args.back().substr(args.back().rfind('.')) : "")
              << ": peak RSS " << (r.peak_rss_bytes >> 20) << " MB, budget " << (Budget(bytes.size()) >> 20)
              << " MB, " << (r.ok() ? "ok" : "refused") << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MemoryTest, ::testing::Range<size_t>(0, 16));

}  // namespace
}  // namespace gpucap::testing::hostile
