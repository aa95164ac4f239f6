// gpucap report in a real browser: a report of every fixture (and the two
// allreduce ranks as one report) is opened in headless Chromium, all in one
// browser run (each report in an iframe of a harness page, so the suite
// pays one browser start). Each page must run without a console error, and
// each chart must hold what the stats library computes for the same windows:
// per window and GPU the time split, per window kind the top kernels, per
// stream a busy strip adding up to its busy time, launch delays for every
// GPU op with a launch, counters where recorded, and both ranks' steps.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "../support/gpucap_cli.h"
#include "../support/skip.h"
#include "../support/temp_dir.h"
#include "cli.h"
#include "gpucap/tools/stats/stats_table.h"
#include "json.h"

namespace gpucap::tools {
namespace {

namespace fs = std::filesystem;
using testing::Json;

struct Case {
  std::string name;
  std::vector<std::string> captures;
  std::string window = "all";
};

struct Rendered {
  Json data;                           // the page's embedded #gpucap-data
  std::map<std::string, Json> charts;  // by canvas id, as Chart.js holds them
  Json errors;
};

std::string Fixture(const std::string& name) { return std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + name + ".gpucap"; }

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const auto& e : fs::directory_iterator(std::string(GPUCAP_SOURCE_DIR) + "/fixtures")) {
    if (e.path().extension() == ".gpucap") cases.push_back({e.path().stem().string(), {e.path().string()}});
  }
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.name < b.name; });
  cases.push_back({"torch_train-marks", {Fixture("torch_train")}, "marks"});
  cases.push_back({"allreduce-ranks", {Fixture("allreduce-0"), Fixture("allreduce-1")}, "marks"});
  return cases;
}

std::string Between(const std::string& text, const std::string& open, const std::string& close) {
  size_t a = text.find(open);
  if (a == std::string::npos) return {};
  a += open.size();
  size_t b = text.find(close, a);
  return b == std::string::npos ? std::string() : text.substr(a, b - a);
}

std::string AttributeEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out.push_back(c);
  }
  return out;
}

// The browser: $GPUCAP_CHROMIUM, or Debian's chromium (scripts/setup
// installs it).
std::string Browser() {
  if (const char* b = std::getenv("GPUCAP_CHROMIUM")) return b;
  for (const char* b : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (fs::exists(b)) return b;
  }
  return {};
}

class HtmlReportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    rendered_ = new std::map<std::string, Rendered>();
    browser_ = Browser();
    if (browser_.empty()) return;
    std::string harness = "<!DOCTYPE html><html><body>";
    std::vector<Case> cases = Cases();
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      std::string out = dir_->File(c.name + ".html"), args = "report -q -o " + out + " --window " + c.window;
      for (const std::string& p : c.captures) args += " " + p;
      testing::CliRun run = testing::Gpucap(args);
      ASSERT_EQ(run.code, 0) << c.name << ": " << run.output;
      std::string page = testing::ReadFile(out);
      Rendered& r = (*rendered_)[c.name];
      std::string data = Between(page, "<script type=\"application/json\" id=\"gpucap-data\">", "</script>");
      for (size_t at; (at = data.find("<\\/")) != std::string::npos;) data.erase(at + 1, 1);
      std::string error;
      ASSERT_TRUE(testing::ParseJson(data, &r.data, &error)) << c.name << ": embedded data: " << error;
      harness += "<iframe id=\"f" + std::to_string(i) + "\" srcdoc=\"" + AttributeEscape(page) + "\"></iframe>";
    }
    // After every frame has loaded: what each frame's page left, copied
    // into the harness's own DOM, which --dump-dom prints.
    harness +=
        "<script>window.addEventListener('load',function(){var n=document.querySelectorAll('iframe').length;"
        "for(var i=0;i<n;i++){var w=document.getElementById('f'+i).contentWindow;var s=document.createElement('script');"
        "s.type='application/json';s.id='r'+i;s.textContent=JSON.stringify({charts:w.gpucapCharts||null,"
        "errors:w.gpucapErrors||null}).split('<').join('\\\\u003c');document.body.appendChild(s);}});</script>"
        "</body></html>";
    std::string harness_path = dir_->File("harness.html");
    testing::WriteFile(harness_path, harness);
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to
    // start; the pages are our own, from files written just now.
    // --disable-dev-shm-usage: containers give /dev/shm 64 MB, where
    // Chromium's renderer can crash; it then uses /tmp.
    std::string command = "timeout 300 " + browser_ + " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run " +
                          "--user-data-dir=" + dir_->File("profile") + " --enable-logging=stderr --v=0 " +
                          "--dump-dom file://" + harness_path + " > " + dir_->File("dom.html") + " 2> " +
                          dir_->File("browser.log");
    int status = std::system(command.c_str());
    ASSERT_EQ(status, 0) << command << "\n" << testing::ReadFile(dir_->File("browser.log"));
    std::string dom = testing::ReadFile(dir_->File("dom.html"));
    log_ = testing::ReadFile(dir_->File("browser.log"));
    for (size_t i = 0; i < cases.size(); ++i) {
      std::string text = Between(dom, "<script type=\"application/json\" id=\"r" + std::to_string(i) + "\">", "</script>");
      Json got;
      std::string error;
      ASSERT_TRUE(testing::ParseJson(text, &got, &error)) << cases[i].name << ": " << error << "\n" << text.substr(0, 400);
      Rendered& r = (*rendered_)[cases[i].name];
      r.errors = got["errors"];
      for (const Json& chart : got["charts"].items) r.charts[chart["id"].text] = chart;
    }
  }
  static void TearDownTestSuite() {
    delete rendered_;
    delete dir_;
  }
  void SetUp() override {
    if (browser_.empty()) GPUCAP_SKIP("no headless browser: apt-get install chromium (scripts/setup does)");
  }

  static const Rendered& Get(const std::string& name) { return rendered_->at(name); }

  // What `gpucap stats` computes for some windows of a capture.
  static GpuStats Stats(const std::string& path, const std::string& window, const std::string& select) {
    auto index = OpenCapture(path);
    EXPECT_TRUE(index.ok()) << index.status().message();
    if (!index.ok()) return {};
    builder::BuildOptions o;
    o.window = window;
    o.select = select;
    auto s = CollectStats(**index, o, nullptr);
    EXPECT_TRUE(s.ok()) << path << ": " << s.status().message();
    return s.ok() ? std::move(s).value() : GpuStats{};
  }

  static const Json& Chart(const Rendered& r, const std::string& id) {
    static const Json kNone;
    auto it = r.charts.find(id);
    EXPECT_NE(it, r.charts.end()) << "no chart " << id;
    return it == r.charts.end() ? kNone : it->second;
  }

  // The checks, one browser run for them all (ctest runs each TEST in a
  // process of its own).
  void EveryPageRendersWithoutConsoleErrors();
  void TimeSplitPerWindowEqualsStats();
  void TopKernelsPerKindEqualStats();
  void StreamStripsAddUpToStreamBusy();
  void LaunchDelaysCoverEveryLaunchedOp();
  void CountersWhereRecorded();
  void TwoRanksShowBoth();

  static inline testing::TempDir* dir_ = nullptr;
  static inline std::map<std::string, Rendered>* rendered_ = nullptr;
  static inline std::string browser_, log_;
};

void HtmlReportTest::EveryPageRendersWithoutConsoleErrors() {
  // The browser's log carries every console message of every frame.
  EXPECT_EQ(log_.find(":CONSOLE"), std::string::npos) << log_;
  for (const Case& c : Cases()) {
    const Rendered& r = Get(c.name);
    EXPECT_TRUE(r.errors.is(Json::Type::kArray)) << c.name << ": the page's script did not finish";
    EXPECT_TRUE(r.errors.items.empty()) << c.name << ": " << r.errors.items.front().text;
    EXPECT_FALSE(r.charts.empty()) << c.name << ": no chart was drawn";
  }
}

// Per window and GPU: compute, NCCL, memcpy, memset and idle, as `gpucap
// stats --table devices --select I` has them.
void HtmlReportTest::TimeSplitPerWindowEqualsStats() {
  for (const Case& c : Cases()) {
    const Rendered& r = Get(c.name);
    for (size_t ci = 0; ci < c.captures.size(); ++ci) {
      const Json& windows = r.data["captures"].items[ci]["windows"];
      ASSERT_FALSE(windows.items.empty()) << c.name;
      for (size_t w = 0; w < windows.items.size(); ++w) {
        GpuStats s = Stats(c.captures[ci], c.window, windows.items[w]["index"].text);
        ASSERT_FALSE(s.devices.empty()) << c.name << " window " << w;
        for (const auto& [device, d] : s.devices) {
          const Json& chart = Chart(r, "split-c" + std::to_string(ci) + "-d" + std::to_string(device));
          ASSERT_EQ(chart["datasets"].items.size(), 5u) << c.name;
          const int64_t want[] = {d.compute_ns, d.communication_ns, d.memcpy_ns, d.memset_ns, d.idle_ns};
          for (size_t k = 0; k < 5; ++k) {
            const Json& set = chart["datasets"].items[k];
            ASSERT_LT(w, set["data"].items.size()) << c.name;
            EXPECT_EQ(set["data"].items[w].i(), want[k]) << c.name << " window " << w << " GPU " << device << " "
                                                         << set["label"].text;
          }
        }
      }
    }
  }
}

// Per window kind: the kernels `gpucap stats --select <its windows> --top 15`
// lists, in its order, with its totals.
void HtmlReportTest::TopKernelsPerKindEqualStats() {
  size_t charts = 0;
  for (const Case& c : Cases()) {
    const Rendered& r = Get(c.name);
    for (size_t ci = 0; ci < c.captures.size(); ++ci) {
      const Json& kinds = r.data["captures"].items[ci]["kinds"];
      for (size_t k = 0; k < kinds.items.size(); ++k) {
        std::string select;
        for (const Json& i : kinds.items[k]["windows"].items) select += (select.empty() ? "" : ",") + i.text;
        Table want = StatsTables(Stats(c.captures[ci], c.window, select), 15).front();
        if (want.rows.empty()) continue;
        const Json& chart = Chart(r, "kernels-c" + std::to_string(ci) + "-k" + std::to_string(k));
        const Json& data = chart["datasets"].items.at(0)["data"];
        ASSERT_EQ(data.items.size(), want.rows.size()) << c.name << " kind " << kinds.items[k]["kind"].text;
        for (size_t row = 0; row < want.rows.size(); ++row) {
          EXPECT_EQ(data.items[row].i(), std::get<int64_t>(want.rows[row][1])) << c.name << " row " << row;
          std::string name = std::get<std::string>(want.rows[row].back());
          std::string label = chart["labels"].items[row].text;
          EXPECT_EQ(name.substr(0, std::min<size_t>(57, label.size())), label.substr(0, std::min<size_t>(57, label.size())))
              << c.name << " row " << row;
        }
        charts++;
      }
    }
  }
  EXPECT_GE(charts, Cases().size()) << "a kernels chart for each fixture at least";
}

// Each stream's strip adds up to its busy time in `gpucap stats`.
void HtmlReportTest::StreamStripsAddUpToStreamBusy() {
  for (const Case& c : Cases()) {
    const Rendered& r = Get(c.name);
    for (size_t ci = 0; ci < c.captures.size(); ++ci) {
      GpuStats s = Stats(c.captures[ci], c.window, "");
      const Json& chart = Chart(r, "strips-c" + std::to_string(ci));
      ASSERT_EQ(chart["datasets"].items.size(), s.streams.size()) << c.name;
      size_t i = 0;
      for (const auto& [key, stream] : s.streams) {
        const Json& set = chart["datasets"].items[i++];
        EXPECT_EQ(set["data"].items.size(), 240u) << c.name;
        int64_t sum = 0;
        for (const Json& v : set["data"].items) sum += v.i();
        EXPECT_EQ(sum, stream.busy_ns) << c.name << " GPU " << key.first << " stream " << key.second;
        EXPECT_NE(set["label"].text.find("stream " + std::to_string(key.second)), std::string::npos);
      }
    }
  }
}

// A launch delay for every GPU op that has its launch: on each stream, as
// many as `gpucap stats` counts ops there, once ops without a launch record
// are left out.
void HtmlReportTest::LaunchDelaysCoverEveryLaunchedOp() {
  for (const Case& c : Cases()) {
    const Rendered& r = Get(c.name);
    for (size_t ci = 0; ci < c.captures.size(); ++ci) {
      GpuStats s = Stats(c.captures[ci], c.window, "");
      uint64_t ops = 0, delays = 0;
      for (const auto& [key, stream] : s.streams) {
        ops += stream.ops;
        std::string id = "delays-c" + std::to_string(ci) + "-d" + std::to_string(key.first) + "-s" + std::to_string(key.second);
        auto it = r.charts.find(id);
        if (it == r.charts.end()) continue;
        uint64_t launch = 0, queued = 0;
        for (const Json& v : it->second["datasets"].items[0]["data"].items) launch += v.u();
        for (const Json& v : it->second["datasets"].items[1]["data"].items) queued += v.u();
        EXPECT_EQ(launch, queued) << c.name << " " << id;
        EXPECT_LE(launch, stream.ops) << c.name << " " << id;
        delays += launch;
      }
      EXPECT_GT(delays, 0u) << c.name;
      EXPECT_EQ(delays + s.gpu_ops_without_launch, ops) << c.name;
    }
  }
}

void HtmlReportTest::CountersWhereRecorded() {
  const Rendered& r = Get("counters");
  std::set<std::string> names;
  for (const auto& [id, chart] : r.charts) {
    if (id.rfind("counter-c0-", 0) != 0) continue;
    const Json& points = chart["datasets"].items.at(0)["data"];
    EXPECT_GE(points.items.size(), 2u) << id;
    names.insert(chart["datasets"].items.at(0)["label"].text);
  }
  EXPECT_GE(names.size(), 10u) << "the fixture records SM active, DRAM, power, clocks, ...";
  EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.find("power") == 0; }));
  for (const auto& [id, chart] : Get("basics").charts) EXPECT_NE(id.rfind("counter-", 0), 0u) << "basics has none";
}

// The allreduce ranks in one report: both ranks' steps, their NCCL time,
// and both captures' own sections.
void HtmlReportTest::TwoRanksShowBoth() {
  const Case c = Cases().back();
  const Rendered& r = Get("allreduce-ranks");
  const Json& step = Chart(r, "ranks-step");
  ASSERT_EQ(step["datasets"].items.size(), 2u);
  EXPECT_EQ(step["datasets"].items[0]["label"].text, "rank 0");
  EXPECT_EQ(step["datasets"].items[1]["label"].text, "rank 1");
  ASSERT_EQ(step["labels"].items.size(), 4u);
  const Json& nccl = Chart(r, "ranks-nccl");
  for (size_t rank = 0; rank < 2; ++rank) {
    for (size_t w = 0; w < 4; ++w) {
      EXPECT_EQ(step["labels"].items[w].text, "ProfilerStep#" + std::to_string(w));
      GpuStats s = Stats(c.captures[rank], "marks", std::to_string(w));
      EXPECT_EQ(step["datasets"].items[rank]["data"].items[w].i(), s.window_ns) << rank << " " << w;
      int64_t communication = 0;
      for (const auto& [device, d] : s.devices) communication += d.communication_ns;
      EXPECT_GT(communication, 0);
      EXPECT_EQ(nccl["datasets"].items[2 * rank]["data"].items[w].i(), communication) << rank << " " << w;
    }
    EXPECT_TRUE(r.charts.count("split-c" + std::to_string(rank) + "-d" + std::to_string(rank))) << "rank " << rank;
  }
  // The straggler is the rank with the least NCCL time, and waits for nobody.
  const Json& ranks = r.data["ranks"];
  for (size_t w = 0; w < 4; ++w) {
    const Json& straggler = ranks["straggler"].items[w];
    ASSERT_TRUE(straggler.is(Json::Type::kNumber));
    EXPECT_EQ(ranks["rows"].items[straggler.i()]["wait_ns"].items[w].i(), 0);
  }
}

// No browser needed: what the page is made of, and the split against the
// kernel and copy tallies it is made from.
TEST(HtmlReport, PageFetchesNothing) {
  testing::TempDir dir;
  testing::CliRun run = testing::Gpucap("report -q -o " + dir.File("r.html") + " " + Fixture("basics"));
  ASSERT_EQ(run.code, 0) << run.output;
  std::string page = testing::ReadFile(dir.File("r.html"));
  for (const char* fetch : {"<script src", "<link", "@import", "sourceMappingURL", "<img", "<iframe"}) {
    EXPECT_EQ(page.find(fetch), std::string::npos) << fetch;
  }
  EXPECT_NE(page.find("Chart.js v4.6.1"), std::string::npos) << "the library is inlined";
  EXPECT_NE(page.find("id=\"gpucap-data\""), std::string::npos);
}

TEST(HtmlReport, DeviceSplitAgreesWithTheKernelAndCopyTables) {
  for (const char* name : {"allreduce-0", "nccl_graph", "torch_train", "peer", "capture_lanes"}) {
    auto index = OpenCapture(Fixture(name));
    ASSERT_TRUE(index.ok());
    auto stats = CollectStats(**index, builder::BuildOptions{}, nullptr);
    ASSERT_TRUE(stats.ok());
    int64_t nccl = 0, copies = 0, split_kernels = 0, split_copies = 0;
    for (const auto& [n, d] : stats->kernels) nccl += n.rfind("nccl", 0) == 0 ? d.total : 0;
    for (const auto& [n, c] : stats->copies) copies += c.time.total;
    int64_t communication = 0;
    for (const auto& [device, d] : stats->devices) {
      communication += d.communication_ns;
      split_kernels += d.compute_ns + d.communication_ns;
      split_copies += d.memcpy_ns + d.memset_ns;
      EXPECT_GE(d.busy_ns + d.idle_ns, stats->window_ns) << name;
      EXPECT_LE(d.busy_ns, d.compute_ns + d.communication_ns + d.memcpy_ns + d.memset_ns) << name;
    }
    EXPECT_EQ(communication, nccl) << name;
    EXPECT_EQ(split_kernels, stats->KernelNs()) << name;
    EXPECT_EQ(split_copies, copies) << name;
    if (std::string(name) == "allreduce-0") {
      EXPECT_GT(nccl, 0);
    }
  }
}

TEST(HtmlReport, BadInputSaysWhichFile) {
  testing::TempDir dir;
  testing::CliRun run = testing::Gpucap("report -q -o " + dir.File("r.html") + " " + dir.File("missing.gpucap"));
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.output.find("missing.gpucap"), std::string::npos) << run.output;
  run = testing::Gpucap("report -q -o " + dir.File("r.html") + " --window marks " + Fixture("basics"));
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.output.find("basics.gpucap"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("no window marks"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(dir.File("r.html"))) << "nothing written on failure";
  run = testing::Gpucap("report -q " + Fixture("basics"));
  EXPECT_EQ(run.code, 2) << "no -o: " << run.output;
}

TEST_F(HtmlReportTest, EveryFixtureInABrowser) {
  {
    SCOPED_TRACE("EveryPageRendersWithoutConsoleErrors");
    EveryPageRendersWithoutConsoleErrors();
  }
  {
    SCOPED_TRACE("TimeSplitPerWindowEqualsStats");
    TimeSplitPerWindowEqualsStats();
  }
  {
    SCOPED_TRACE("TopKernelsPerKindEqualStats");
    TopKernelsPerKindEqualStats();
  }
  {
    SCOPED_TRACE("StreamStripsAddUpToStreamBusy");
    StreamStripsAddUpToStreamBusy();
  }
  {
    SCOPED_TRACE("LaunchDelaysCoverEveryLaunchedOp");
    LaunchDelaysCoverEveryLaunchedOp();
  }
  {
    SCOPED_TRACE("CountersWhereRecorded");
    CountersWhereRecorded();
  }
  {
    SCOPED_TRACE("TwoRanksShowBoth");
    TwoRanksShowBoth();
  }
}

}  // namespace
}  // namespace gpucap::tools
