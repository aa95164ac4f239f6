// gpucap report in a real browser: a report of every fixture (and the two
// allreduce ranks as one report) is opened in headless Chromium, all in one
// browser run (each report in an iframe of a harness page, so the suite
// pays one browser start). Each page must run without a console error, and
// each chart must hold what the stats library computes for the same windows:
// per window and GPU the time split, per window kind the top kernels, per
// stream a busy strip adding up to its busy time, launch delays for every
// GPU op with a launch, counters where recorded, and both ranks' steps; a
// synthetic job of 1,024 ranks names the slow rank and the straggling step
// its truth file names.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "../support/gpucap_cli.h"
#include "../support/limited_run.h"
#include "../support/skip.h"
#include "../support/temp_dir.h"
#include "cli.h"
#include "gpucap/tools/report/html_report.h"
#include "gpucap/tools/stats/stats_table.h"
#include "json.h"
#include "synthetic_capture.h"
#include "synthetic_job.h"

namespace gpucap::tools {
namespace {

namespace fs = std::filesystem;
using testing::Json;

struct Case {
  std::string name;
  std::vector<std::string> captures;
  std::string window = "all";  // empty: none given, the report picks
};

struct Rendered {
  Json data;                           // the page's embedded #gpucap-data
  std::map<std::string, Json> charts;  // by canvas id, as Chart.js holds them
  Json errors;
  Json scripts;                        // how many script elements the page's DOM has
  Json facts;                          // each capture's facts table: rows of cells
  Json notes;                          // the notes of cut axes
  Json findings;                       // the ranks' findings, as the page words them
  Json clocks;                         // the clocks' summary line
};

// The window spec a case's report used (the one it chose when none given).
std::string WindowOf(const Case& c, const Rendered& r) { return c.window.empty() ? r.data["window_spec"].text : c.window; }

// `s` with each byte that starts no UTF-8 sequence as U+FFFD (a check
// written for the test: lead byte, length, continuation bytes, no
// overlong, surrogate or past-U+10FFFF forms).
std::string ValidUtf8(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0; };
    unsigned char c = b(0);
    size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    for (size_t k = 1; k < n; ++k) {
      if ((b(k) & 0xC0) != 0x80) n = 0;
    }
    if (n == 3 && ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) >= 0xA0))) n = 0;
    if (n == 4 && ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) >= 0x90))) n = 0;
    if (n == 0) {
      out += "\xef\xbf\xbd";
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

std::string Fixture(const std::string& name) { return std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + name + ".gpucap"; }

// Names a capture's writer (or an attacker) can choose, each one a way text
// has been found to break a page: an HTML comment opener followed by a
// script tag (the parser's double-escaped state), end and start tags in
// any case, CDATA's end, NUL, bytes that are not UTF-8, JavaScript's old
// line terminator. Each is a kernel name, a step label and an NVTX range.
const std::vector<std::string>& HostileNames() {
  static const std::vector<std::string> names = {
      "<!--<script>", "</script>", "<script>", "]]>", std::string("nul\0byte", 8), "bad\xff\xfeutf8",
      "line\xe2\x80\xa8sep", "<!--", "--></ScRiPt ><sCrIpT>", "&lt;&amp;<b>x</b>"};
  return names;
}
constexpr uint64_t kT0 = 1'790'857'026'000'000'000ull;
constexpr int kHostileSteps = 4;
constexpr char kHostileNccl[] = "ncclDevKernel_AllReduce<!--<script>";

// One rank of a two-rank job whose every name is hostile: per step (window
// marks labelled with a hostile name, the first step ten times as long as
// the others) an NVTX range named with one, each hostile kernel once on
// stream 7 and an NCCL kernel on stream 9; the host, command line and
// thread named likewise.
void WriteHostileCapture(const std::string& path, int32_t rank) {
  format::SessionInfo session = builder::testing::DefaultSession();
  session.rank = rank;
  session.world_size = 2;
  session.host = "<!--<script>";
  session.command_line = {"</script>", "<!--<script>"};
  auto made = builder::testing::SyntheticCapture::Create(path, session, {builder::testing::H200(0)});
  ASSERT_TRUE(made.ok()) << made.status().message();
  builder::testing::SyntheticCapture& c = **made;
  auto ok = [](const Status& s) { ASSERT_TRUE(s.ok()) << s.message(); };
  format::ClockSample clock;
  clock.kind = format::ClockKind::kStart;
  clock.cupti_ns = kT0;
  clock.realtime_ns = static_cast<int64_t>(kT0);
  clock.monotonic_ns = 1000;
  ok(c.Message(clock));
  const auto& names = HostileNames();
  for (size_t i = 0; i < names.size(); ++i) ok(c.String(0x1000 + i, names[i]));
  ok(c.String(0x2000, kHostileNccl));
  ok(c.Message(format::ThreadInfo{4242, 1, 4242, "<!--<script>"}));
  uint32_t correlation = 1;
  uint64_t t = kT0 + 10'000;
  for (int step = 0; step < kHostileSteps; ++step) {
    uint64_t length = step == 0 ? 1'000'000 : 100'000;
    ok(c.Message(format::WindowMark{format::WindowMarkKind::kOpen, t, 4242, uint64_t(step + 1), names[step]}));
    ok(c.Push(4242, t + 100, names[(step + 4) % names.size()]));
    uint64_t at = t + 1000;
    for (size_t i = 0; i <= names.size(); ++i, ++correlation, at += 5000) {
      builder::testing::ApiRecord a;
      a.start = at;
      a.end = at + 2000;
      a.correlation = correlation;
      c.Api(a);
      builder::testing::KernelRecord k;
      k.start = at + 3000;
      k.end = at + 4000 + 100 * rank;
      k.correlation = correlation;
      k.name_pointer = i < names.size() ? 0x1000 + i : 0x2000;
      k.stream = i < names.size() ? 7 : 9;
      c.Kernel(k);
    }
    ok(c.Pop(4242, at));
    ok(c.Message(format::WindowMark{format::WindowMarkKind::kClose, t + length, 4242, uint64_t(step + 1), names[step]}));
    t += length + 10'000;
  }
  ok(c.Close());
}

// Where the hostile captures are written (by the suite's set-up); removed
// at exit.
const testing::TempDir& HostileDir() {
  static const testing::TempDir dir;
  return dir;
}

// A job of 1,024 synthetic ranks (synthetic_job.h), written by the suite's
// set-up; removed at exit.
constexpr uint32_t kJobRanks = 1024;
const testing::TempDir& JobDir() {
  static const testing::TempDir dir;
  return dir;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const auto& e : fs::directory_iterator(std::string(GPUCAP_SOURCE_DIR) + "/fixtures")) {
    if (e.path().extension() == ".gpucap") cases.push_back({e.path().stem().string(), {e.path().string()}});
  }
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.name < b.name; });
  cases.push_back({"torch_train-marks", {Fixture("torch_train")}, "marks"});
  cases.push_back({"allreduce-ranks", {Fixture("allreduce-0"), Fixture("allreduce-1")}, "marks"});
  // As a user first opens them: no --window.
  cases.push_back({"allreduce-first-open", {Fixture("allreduce-0"), Fixture("allreduce-1")}, ""});
  cases.push_back({"torch_train-first-open", {Fixture("torch_train")}, ""});
  cases.push_back({"basics-first-open", {Fixture("basics")}, ""});
  cases.push_back({"hostile-ranks", {HostileDir().File("hostile-0.gpucap"), HostileDir().File("hostile-1.gpucap")}, ""});
  Case job{"job-1024", {}, ""};
  for (uint32_t r = 0; r < kJobRanks; ++r) job.captures.push_back(JobDir().File(builder::testing::RankFileName(r)));
  cases.push_back(std::move(job));
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
    WriteHostileCapture(HostileDir().File("hostile-0.gpucap"), 0);
    WriteHostileCapture(HostileDir().File("hostile-1.gpucap"), 1);
    builder::testing::JobSpec job;
    job.ranks = kJobRanks;
    Status made = builder::testing::MakeSyntheticJob(JobDir().path().string(), job);
    ASSERT_TRUE(made.ok()) << made.message();
    // UTF-8 said, not guessed: the frames' srcdoc pages take the harness's
    // encoding, and Chromium's guess for a file is sometimes windows-1252.
    std::string harness = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>";
    std::vector<Case> cases = Cases();
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      std::string out = dir_->File(c.name + ".html"), args = "report -q -o " + out;
      if (!c.window.empty()) args += " --window " + c.window;
      for (const std::string& p : c.captures) args += " " + p;
      testing::CliRun run = testing::Gpucap(args);
      ASSERT_EQ(run.code, 0) << c.name << ": " << run.output;
      std::string page = testing::ReadFile(out);
      Rendered& r = (*rendered_)[c.name];
      std::string data = Between(page, "<script type=\"application/json\" id=\"gpucap-data\">", "</script>");
      std::string error;
      ASSERT_TRUE(testing::ParseJson(data, &r.data, &error)) << c.name << ": embedded data: " << error;
      harness += "<iframe id=\"f" + std::to_string(i) + "\" srcdoc=\"" + AttributeEscape(page) + "\"></iframe>";
    }
    // After every frame has loaded: what each frame's page left, copied
    // into the harness's own DOM, which --dump-dom prints.
    harness +=
        "<script>window.addEventListener('load',function(){var n=document.querySelectorAll('iframe').length;"
        "for(var i=0;i<n;i++){var w=document.getElementById('f'+i).contentWindow;var s=document.createElement('script');"
        "var d=w.document,cells=function(tr){return Array.prototype.map.call(tr.cells,function(td){return td.textContent;});};"
        "s.type='application/json';s.id='r'+i;s.textContent=JSON.stringify({charts:w.gpucapCharts||null,"
        "errors:w.gpucapErrors||null,scripts:d.scripts.length,"
        "facts:Array.prototype.map.call(d.querySelectorAll('section'),function(sec){"
        "return Array.prototype.map.call(sec.querySelector('table').rows,cells);}),"
        "notes:Array.prototype.map.call(d.querySelectorAll('p.cut'),function(p){return p.textContent;}),"
        "findings:(d.getElementById('ranks-findings')||{}).textContent||null,"
        "clocks:(d.getElementById('clocks-summary')||{}).textContent||null"
        "}).split('<').join('\\\\u003c');document.body.appendChild(s);}});</script>"
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
      r.scripts = got["scripts"];
      r.facts = got["facts"];
      r.notes = got["notes"];
      r.findings = got["findings"];
      r.clocks = got["clocks"];
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

  // The captures a page draws in full (all of a few; the notable ones of
  // many), and the file of the ci-th of them.
  static size_t Drawn(const Rendered& r) { return r.data["captures"].items.size(); }
  static std::string DrawnPath(const Case& c, const Rendered& r, size_t ci) {
    return c.captures.at(r.data["captures"].items.at(ci)["capture"].u());
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
  void HostileNamesCannotBreakThePage();
  void FirstOpenIsOnTheSteps();
  void AnAxisIsCutOnlyPastAnOutlier();
  void StreamsAreNamedByWhatRunsOnThem();
  void FactsShowTheRecorderCountersAsFields();
  void TheDataHasNoDuplicateKey();
  void TimeAxesHaveRoundLabels();
  void AThousandRanksNameTheSlowRankAndTheStragglingStep();

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
    // The page's four (error trap, data, Chart.js, report.js) and the two
    // report.js leaves: every one parsed as a script element of its own.
    EXPECT_EQ(r.scripts.i(), 6) << c.name;
  }
}

// Per window and GPU: compute, NCCL, memcpy, memset and idle, as `gpucap
// stats --table devices --select I` has them.
void HtmlReportTest::TimeSplitPerWindowEqualsStats() {
  for (const Case& c : Cases()) {
    const Rendered& r = Get(c.name);
    for (size_t ci = 0; ci < Drawn(r); ++ci) {
      const Json& windows = r.data["captures"].items[ci]["windows"];
      ASSERT_FALSE(windows.items.empty()) << c.name;
      for (size_t w = 0; w < windows.items.size(); ++w) {
        GpuStats s = Stats(DrawnPath(c, r, ci), WindowOf(c, r), windows.items[w]["index"].text);
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
    for (size_t ci = 0; ci < Drawn(r); ++ci) {
      const Json& kinds = r.data["captures"].items[ci]["kinds"];
      for (size_t k = 0; k < kinds.items.size(); ++k) {
        std::string select;
        for (const Json& i : kinds.items[k]["windows"].items) select += (select.empty() ? "" : ",") + i.text;
        Table want = StatsTables(Stats(DrawnPath(c, r, ci), WindowOf(c, r), select), 15).front();
        if (want.rows.empty()) continue;
        const Json& chart = Chart(r, "kernels-c" + std::to_string(ci) + "-k" + std::to_string(k));
        const Json& data = chart["datasets"].items.at(0)["data"];
        ASSERT_EQ(data.items.size(), want.rows.size()) << c.name << " kind " << kinds.items[k]["kind"].text;
        for (size_t row = 0; row < want.rows.size(); ++row) {
          EXPECT_EQ(data.items[row].i(), std::get<int64_t>(want.rows[row][1])) << c.name << " row " << row;
          std::string name = ValidUtf8(std::get<std::string>(want.rows[row].back()));
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
    for (size_t ci = 0; ci < Drawn(r); ++ci) {
      GpuStats s = Stats(DrawnPath(c, r, ci), WindowOf(c, r), "");
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
    for (size_t ci = 0; ci < Drawn(r); ++ci) {
      GpuStats s = Stats(DrawnPath(c, r, ci), WindowOf(c, r), "");
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

// A job of 1,024 ranks on 128 hosts whose clocks differ: the page names the
// slow rank and the straggling step that job.json names, draws every rank
// in the heatmap, draws in full only the notable captures, and its clocks
// agree within what the job's collectives' ends differ by.
void HtmlReportTest::AThousandRanksNameTheSlowRankAndTheStragglingStep() {
  Json truth;
  std::string error;
  ASSERT_TRUE(testing::ParseJson(testing::ReadFile(JobDir().File("job.json")), &truth, &error)) << error;
  const int64_t slow = truth["slow_rank"].i(), straggling = truth["straggling_rank"].i();
  const std::string step = truth["straggling_step"].text;
  const size_t steps = truth["step_names"].items.size();
  const Rendered& r = Get("job-1024");
  ASSERT_TRUE(r.findings.is(Json::Type::kString)) << "no findings drawn";
  const std::string& words = r.findings.text;
  EXPECT_NE(words.find("Slow rank: rank " + std::to_string(slow) + " (node-" + std::to_string(slow / 8) +
                       "), the straggler of " + std::to_string(steps - 1) + " of " + std::to_string(steps) + " steps"),
            std::string::npos) << words;
  EXPECT_NE(words.find("Longest step: " + step + ","), std::string::npos) << words;
  EXPECT_NE(words.find("its straggler: rank " + std::to_string(straggling) + "."), std::string::npos) << words;
  // Every rank in the heatmap, each step's straggler marked.
  const Json& heat = Chart(r, "ranks-wait-heatmap");
  EXPECT_EQ(heat["rows"].u(), kJobRanks);
  ASSERT_EQ(heat["stragglers"].items.size(), steps);
  for (size_t i = 0; i < steps; ++i) {
    int64_t want = truth["step_names"].items[i].text == step ? straggling : slow;
    EXPECT_EQ(heat["stragglers"].items[i].i(), want) << truth["step_names"].items[i].text;
  }
  EXPECT_TRUE(r.charts.count("ranks-step-spread"));
  EXPECT_FALSE(r.charts.count("ranks-step")) << "no bar per rank at this scale";
  // In full: a few captures, the slow and the straggling rank among them.
  EXPECT_EQ(r.data["capture_count"].u(), kJobRanks);
  std::set<uint64_t> drawn;
  for (const Json& c : r.data["captures"].items) drawn.insert(c["rank"].u());
  EXPECT_LE(drawn.size(), 8u);
  EXPECT_TRUE(drawn.count(0) && drawn.count(slow) && drawn.count(straggling)) << drawn.size();
  // 128 hosts aligned on rank 0's: every rank's collectives end where rank
  // 0's do, within the ends' own jitter (both ranks') and a nanosecond.
  const Json& clocks = r.data["clocks"];
  EXPECT_EQ(clocks["hosts"].u(), kJobRanks / 8);
  EXPECT_LE(clocks["worst_residual_ns"].i(), 2 * truth["end_jitter_ns"].i() + 1);
  size_t shifted = 0;
  for (const Json& row : clocks["rows"].items) shifted += row["aligned"].boolean;
  EXPECT_EQ(shifted, kJobRanks - 8) << "every host but the reference's";
  ASSERT_TRUE(r.clocks.is(Json::Type::kString));
  EXPECT_NE(r.clocks.text.find("128 host(s); 1016 of 1024 ranks shifted onto rank 0 (node-0)"), std::string::npos)
      << r.clocks.text;
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
  std::vector<Case> cases = Cases();
  auto found = std::find_if(cases.begin(), cases.end(), [](const Case& k) { return k.name == "allreduce-ranks"; });
  ASSERT_NE(found, cases.end());
  const Case& c = *found;
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


// Every hostile name reached the page as itself (bytes not UTF-8 as
// U+FFFD) and every part of the page drew: the steps across ranks, each
// rank's split, kernels, strips and delays.
void HtmlReportTest::HostileNamesCannotBreakThePage() {
  const Rendered& r = Get("hostile-ranks");
  EXPECT_TRUE(r.errors.is(Json::Type::kArray) && r.errors.items.empty());
  EXPECT_EQ(r.scripts.i(), 6);
  const Json& step = Chart(r, "ranks-step");
  ASSERT_EQ(step["labels"].items.size(), static_cast<size_t>(kHostileSteps));
  for (int i = 0; i < kHostileSteps; ++i) EXPECT_EQ(step["labels"].items[i].text, ValidUtf8(HostileNames()[i]));
  EXPECT_TRUE(r.charts.count("ranks-nccl"));
  std::set<std::string> kernels;
  for (int rank = 0; rank < 2; ++rank) {
    std::string c = "-c" + std::to_string(rank);
    EXPECT_TRUE(r.charts.count("split" + c + "-d0")) << rank;
    EXPECT_TRUE(r.charts.count("strips" + c)) << rank;
    EXPECT_TRUE(r.charts.count("delays" + c + "-d0-s7")) << rank;
    for (int k = 0; k < kHostileSteps; ++k) {
      for (const Json& l : Chart(r, "kernels" + c + "-k" + std::to_string(k))["labels"].items) kernels.insert(l.text);
    }
  }
  for (const std::string& name : HostileNames()) EXPECT_TRUE(kernels.count(ValidUtf8(name))) << name;
  EXPECT_TRUE(kernels.count(kHostileNccl));
  // The host and command line, in the facts.
  ASSERT_EQ(r.facts.items.size(), 2u);
  bool host = false;
  for (const Json& row : r.facts.items[0].items) host |= row.items[0].text == "host" && row.items[1].text == "<!--<script>";
  EXPECT_TRUE(host);
}

// With no --window, a capture with window marks opens on them (one window
// per step, as many as the marks give), and one without marks or step
// ranges on the whole capture.
void HtmlReportTest::FirstOpenIsOnTheSteps() {
  auto marks = [](const std::string& path) {
    auto index = OpenCapture(path);
    EXPECT_TRUE(index.ok());
    builder::BuildOptions o;
    o.window = "marks";
    auto w = builder::Builder(**index, o).Windows();
    return w.ok() ? w->size() : size_t{0};
  };
  for (const char* name : {"allreduce-first-open", "torch_train-first-open", "hostile-ranks"}) {
    const Rendered& r = Get(name);
    EXPECT_EQ(r.data["window_spec"].text, "marks") << name;
    EXPECT_TRUE(r.data["window_chosen"].boolean) << name;
    for (const Case& c : Cases()) {
      if (c.name != name) continue;
      for (size_t ci = 0; ci < c.captures.size(); ++ci) {
        size_t want = marks(c.captures[ci]);
        EXPECT_GT(want, 1u) << name;
        EXPECT_EQ(r.data["captures"].items[ci]["windows"].items.size(), want) << name;
      }
    }
  }
  EXPECT_EQ(marks(Fixture("basics")), 0u);
  EXPECT_EQ(Get("basics-first-open").data["window_spec"].text, "all");
  EXPECT_EQ(Get("basics-first-open").data["captures"].items[0]["windows"].items.size(), 1u);
  EXPECT_EQ(Get("allreduce-first-open").data["ranks"]["steps"].items.size(), 4u);
}

// On every bar chart of windows or steps: when a bar (its stack's total;
// on the rank charts the tallest of the step) is past 4x the median of the
// bars, and there are three bars or more, the axis ends below it and above
// every other bar, and a note names it; otherwise the axis is Chart.js's.
void HtmlReportTest::AnAxisIsCutOnlyPastAnOutlier() {
  size_t cuts = 0;
  for (const Case& c : Cases()) {
    const Rendered& r = Get(c.name);
    for (const auto& [id, chart] : r.charts) {
      bool stacked = id.rfind("split-", 0) == 0;
      if (!stacked && id != "ranks-step" && id != "ranks-nccl") continue;
      std::vector<int64_t> bars(chart["labels"].items.size(), 0);
      for (const Json& set : chart["datasets"].items) {
        for (size_t i = 0; i < bars.size(); ++i) {
          int64_t v = set["data"].items.at(i).i();
          bars[i] = stacked ? bars[i] + v : std::max(bars[i], v);
        }
      }
      std::vector<int64_t> sorted;
      for (int64_t b : bars) {
        if (b > 0) sorted.push_back(b);
      }
      std::sort(sorted.begin(), sorted.end());
      bool outlier = sorted.size() >= 3 && sorted.back() > 4 * sorted[(sorted.size() - 1) / 2];
      if (!outlier) {
        EXPECT_TRUE(chart["y_max"].is(Json::Type::kNull)) << c.name << " " << id;
        continue;
      }
      cuts++;
      ASSERT_TRUE(chart["y_max"].is(Json::Type::kNumber)) << c.name << " " << id;
      int64_t top = chart["y_max"].i();
      EXPECT_LT(top, sorted.back()) << c.name << " " << id;
      for (size_t i = 0; i < bars.size(); ++i) {
        if (bars[i] <= 4 * sorted[(sorted.size() - 1) / 2]) {
          EXPECT_GE(top, bars[i]) << c.name << " " << id << " " << i;
        }
        if (bars[i] <= top) continue;
        std::string label = chart["labels"].items[i].text;
        EXPECT_TRUE(std::any_of(r.notes.items.begin(), r.notes.items.end(), [&](const Json& n) {
          return n.text.find(label) != std::string::npos;
        })) << c.name << " " << id << ": no note names " << label;
      }
    }
  }
  // allreduce's first step (NCCL's start-up, 655 ms against < 1 ms) and
  // the hostile capture's first step (10x) are cut.
  EXPECT_GE(cuts, 4u);
  EXPECT_TRUE(Chart(Get("allreduce-first-open"), "ranks-step")["y_max"].is(Json::Type::kNumber));
}

// A stream is named by the kind of op that runs on it: the allreduce
// ranks' stream 7 runs NCCL's kernel, torch_train's stream 7 the model's,
// the hostile capture's stream 9 an NCCL kernel and 7 the others.
void HtmlReportTest::StreamsAreNamedByWhatRunsOnThem() {
  auto label = [](const std::string& c, const std::string& chart, size_t i) {
    return Chart(Get(c), chart)["datasets"].items.at(i)["label"].text;
  };
  EXPECT_EQ(label("allreduce-first-open", "strips-c0", 0).rfind("GPU 0 stream 7: NCCL (", 0), 0u);
  EXPECT_EQ(label("allreduce-first-open", "strips-c1", 0).rfind("GPU 1 stream 7: NCCL (", 0), 0u);
  EXPECT_EQ(label("torch_train-first-open", "strips-c0", 0).rfind("GPU 0 stream 7: compute (", 0), 0u);
  EXPECT_EQ(label("hostile-ranks", "strips-c0", 0).rfind("GPU 0 stream 7: compute (", 0), 0u);
  EXPECT_EQ(label("hostile-ranks", "strips-c0", 1).rfind("GPU 0 stream 9: NCCL (", 0), 0u);
  // allreduce's other streams run only copies.
  auto index = OpenCapture(Fixture("allreduce-0"));
  ASSERT_TRUE(index.ok());
  for (size_t i = 1; i < Chart(Get("allreduce-first-open"), "strips-c0")["datasets"].items.size(); ++i) {
    EXPECT_NE(label("allreduce-first-open", "strips-c0", i).find(": copy ("), std::string::npos);
  }
}

// The recorder's counters are a row of "name value" pairs, the nonzero
// ones as `gpucap info --json` has them; no cell is an [object Object].
void HtmlReportTest::FactsShowTheRecorderCountersAsFields() {
  testing::CliRun info = testing::Gpucap("info --json " + Fixture("allreduce-0"));
  ASSERT_EQ(info.code, 0) << info.output;
  Json root;
  std::string error;
  ASSERT_TRUE(testing::ParseJson(info.output, &root, &error)) << error;
  std::string want;
  for (const auto& [k, v] : root["drops"]["recorder_counters"].members) {
    if (v.u() != 0) want += (want.empty() ? "" : ", ") + k + " " + v.text;
  }
  ASSERT_FALSE(want.empty());
  bool found = false;
  for (const Json& row : Get("allreduce-first-open").facts.items[0].items) {
    if (row.items[0].text == "recorder counters") found = row.items[1].text == want;
  }
  EXPECT_TRUE(found) << want;
  for (const Case& c : Cases()) {
    for (const Json& section : Get(c.name).facts.items) {
      for (const Json& row : section.items) {
        for (const Json& cell : row.items) EXPECT_EQ(cell.text.find("[object"), std::string::npos) << c.name;
      }
    }
  }
}

void HtmlReportTest::TheDataHasNoDuplicateKey() {
  std::function<void(const Json&, const std::string&)> walk = [&](const Json& j, const std::string& where) {
    std::set<std::string> keys;
    for (const auto& [k, v] : j.members) {
      EXPECT_TRUE(keys.insert(k).second) << where << ": key " << k << " twice";
      walk(v, where + "." + k);
    }
    for (const Json& item : j.items) walk(item, where + "[]");
  };
  for (const Case& c : Cases()) walk(Get(c.name).data, c.name);
}

// Tick labels on time axes are round: a number with no trailing zero after
// its point ("700 ms", "1.5 ms", never "700.000 ms"); strips are in %.
void HtmlReportTest::TimeAxesHaveRoundLabels() {
  size_t seen = 0;
  for (const Case& c : Cases()) {
    for (const auto& [id, chart] : Get(c.name).charts) {
      bool strip = id.rfind("strips-", 0) == 0;
      if (!strip && id.rfind("split-", 0) != 0 && id.rfind("ranks-", 0) != 0) continue;
      for (const Json& t : chart["y_ticks"].items) {
        const std::string& l = t.text;
        seen++;
        if (strip) {
          EXPECT_EQ(l.back(), '%') << c.name << " " << id << ": " << l;
          continue;
        }
        size_t space = l.find(' ');
        ASSERT_NE(space, std::string::npos) << l;
        std::string number = l.substr(0, space), unit = l.substr(space + 1);
        EXPECT_TRUE(unit == "ns" || unit == "us" || unit == "ms" || unit == "s") << l;
        size_t point = number.find('.');
        if (point != std::string::npos) {
          EXPECT_NE(number.back(), '0') << c.name << " " << id << ": " << l;
          EXPECT_LE(number.size() - point - 1, 3u) << l;
        }
      }
    }
  }
  EXPECT_GT(seen, 100u);
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

size_t CountCaseless(const std::string& text, const std::string& what) {
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t n = 0;
  for (size_t at = lower.find(what); at != std::string::npos; at = lower.find(what, at + 1)) n++;
  return n;
}

// Without a browser: the page around hostile names has its own four script
// elements and no other tag-like text, is valid UTF-8 with no raw U+2028,
// and its data reads back the names.
TEST(HtmlReport, HostileNamesStayInsideTheDataElement) {
  testing::TempDir dir;
  WriteHostileCapture(dir.File("h0.gpucap"), 0);
  WriteHostileCapture(dir.File("h1.gpucap"), 1);
  testing::CliRun run = testing::Gpucap("report -q -o " + dir.File("r.html") + " " + dir.File("h0.gpucap") + " " +
                                        dir.File("h1.gpucap"));
  ASSERT_EQ(run.code, 0) << run.output;
  std::string page = testing::ReadFile(dir.File("r.html"));
  EXPECT_EQ(CountCaseless(page, "<script"), 4u);
  EXPECT_EQ(CountCaseless(page, "</script"), 4u);
  EXPECT_EQ(page.find("<!--"), std::string::npos);
  EXPECT_EQ(page.find("]]>"), std::string::npos);
  EXPECT_EQ(page.find("\xe2\x80\xa8"), std::string::npos);
  EXPECT_EQ(page.find('\0'), std::string::npos);
  EXPECT_EQ(ValidUtf8(page), page) << "the page is valid UTF-8";
  std::string data = Between(page, "<script type=\"application/json\" id=\"gpucap-data\">", "</script>");
  EXPECT_EQ(data.find_first_of("<>&"), std::string::npos);
  Json root;
  std::string error;
  ASSERT_TRUE(testing::ParseJson(data, &root, &error)) << error;
  EXPECT_EQ(root["captures"].items.at(0)["host"].text, "<!--<script>");
  std::set<std::string> kernels;
  for (const Json& kind : root["captures"].items[0]["kinds"].items) {
    for (const Json& k : kind["kernels"].items) kernels.insert(k["name"].text);
  }
  for (const std::string& name : HostileNames()) EXPECT_TRUE(kernels.count(ValidUtf8(name))) << name;
}

// A capture of `steps` NVTX ranges named `name(i)`, a kernel in each, no
// window marks; the session's options `options`.
void WriteRangeSteps(const std::string& path, const std::function<std::string(int)>& name, int steps,
                     std::vector<std::pair<std::string, std::string>> options) {
  format::SessionInfo session = builder::testing::DefaultSession();
  session.options = std::move(options);
  auto made = builder::testing::SyntheticCapture::Create(path, session, {builder::testing::H200(0)});
  ASSERT_TRUE(made.ok()) << made.status().message();
  builder::testing::SyntheticCapture& c = **made;
  ASSERT_TRUE(c.String(0x1000, "k").ok());
  for (int i = 0; i < steps; ++i) {
    uint64_t t = kT0 + static_cast<uint64_t>(i) * 100'000;
    ASSERT_TRUE(c.Push(4242, t, name(i)).ok());
    builder::testing::ApiRecord a;
    a.start = t + 1000;
    a.end = t + 3000;
    a.correlation = static_cast<uint32_t>(i + 1);
    c.Api(a);
    builder::testing::KernelRecord k;
    k.start = t + 4000;
    k.end = t + 9000;
    k.correlation = a.correlation;
    k.name_pointer = 0x1000;
    c.Kernel(k);
    ASSERT_TRUE(c.Pop(4242, t + 50'000).ok());
  }
  ASSERT_TRUE(c.Close().ok());
}

// Without marks, the steps are the ranges the recorder was told mark them
// (GPUCAP_WINDOW_NVTX in the session), else PyTorch's ProfilerStep#N; an
// explicit --window is kept.
TEST(HtmlReport, WithoutMarksTheStepsAreRanges) {
  testing::TempDir dir;
  auto data = [&](const std::string& args) {
    testing::CliRun run = testing::Gpucap("report -q -o " + dir.File("r.html") + " " + args);
    EXPECT_EQ(run.code, 0) << run.output;
    Json root;
    std::string error;
    EXPECT_TRUE(testing::ParseJson(Between(testing::ReadFile(dir.File("r.html")), "id=\"gpucap-data\">", "</script>"),
                                   &root, &error)) << error;
    return root;
  };
  auto labels = [](const Json& root) {
    std::vector<std::string> out;
    for (const Json& w : root["captures"].items.at(0)["windows"].items) out.push_back(w["label"].text);
    return out;
  };
  WriteRangeSteps(dir.File("profiler.gpucap"), [](int i) { return "ProfilerStep#" + std::to_string(i); }, 3, {});
  Json root = data(dir.File("profiler.gpucap"));
  EXPECT_EQ(root["window_spec"].text, "nvtx:ProfilerStep#\\d+");
  EXPECT_EQ(labels(root), (std::vector<std::string>{"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"}));

  // iter_0, ProfilerStep#1, iter_2, ...: the recorder's pattern comes first.
  WriteRangeSteps(dir.File("iters.gpucap"),
                  [](int i) { return (i % 2 ? "ProfilerStep#" : "iter_") + std::to_string(i); }, 4,
                  {{"GPUCAP_OUTPUT", "x.gpucap"}, {"GPUCAP_WINDOW_NVTX", "iter_\\d+"}});
  root = data(dir.File("iters.gpucap"));
  EXPECT_EQ(root["window_spec"].text, "nvtx:iter_\\d+");
  EXPECT_TRUE(root["window_chosen"].boolean);
  EXPECT_EQ(labels(root), (std::vector<std::string>{"iter_0", "iter_2"}));

  root = data(dir.File("iters.gpucap") + " --window all");
  EXPECT_EQ(root["window_spec"].text, "all");
  EXPECT_FALSE(root["window_chosen"].boolean);
  EXPECT_EQ(root["captures"].items.at(0)["windows"].items.size(), 1u);
}

// --bins has a documented range: past it a usage error (exit 2) naming it,
// not an allocation of bins x streams.
TEST(HtmlReport, BinsPastTheLimitAreAUsageError) {
  testing::TempDir dir;
  for (const char* bins : {"0", "100001", "1000000000", "18446744073709551615", "18446744073709551616", "-1"}) {
    testing::CliRun run = testing::Gpucap("report -q -o " + dir.File("r.html") + " --bins " + bins + " " + Fixture("basics"));
    EXPECT_EQ(run.code, 2) << bins << ": " << run.output;
    EXPECT_FALSE(fs::exists(dir.File("r.html"))) << bins;
  }
  testing::CliRun run = testing::Gpucap("report -q -o " + dir.File("r.html") + " --bins 1000000000 " + Fixture("basics"));
  EXPECT_NE(run.output.find("1 to 100000"), std::string::npos) << run.output;
  run = testing::Gpucap("report -q -o " + dir.File("r.html") + " --bins 100000 " + Fixture("basics"));
  ASSERT_EQ(run.code, 0) << run.output;
}

// 100,000 streams, one 500 ns kernel each, and --bins 100000: the page
// draws the busiest streams that 4M points allow (40), names the rest by
// count and busy time, counts their launch delays together, and the run
// stays within the hostile-input budget (10x the capture plus 256 MB).
TEST(HtmlReport, ManyStreamsAndBinsStayWithinTheMemoryBudget) {
  constexpr uint32_t kStreams = 100'000;
  constexpr int64_t kDur = 500;
  testing::TempDir dir;
  std::string path = dir.File("streams.gpucap");
  {
    auto made = builder::testing::SyntheticCapture::Create(path, builder::testing::DefaultSession(),
                                                           {builder::testing::H200(0)});
    ASSERT_TRUE(made.ok()) << made.status().message();
    builder::testing::SyntheticCapture& c = **made;
    ASSERT_TRUE(c.String(0x1000, "k").ok());
    for (uint32_t i = 0; i < kStreams; ++i) {
      uint64_t at = kT0 + uint64_t{i} * 1000;
      builder::testing::ApiRecord a;
      a.start = at;
      a.end = at + 200;
      a.correlation = i + 1;
      c.Api(a);
      builder::testing::KernelRecord k;
      k.start = at + 300;
      k.end = at + 300 + kDur;
      k.correlation = i + 1;
      k.name_pointer = 0x1000;
      k.stream = 10 + i;
      c.Kernel(k);
      if (c.pending_records() >= 20'000) {
        ASSERT_TRUE(c.EndChunk().ok());
      }
    }
    ASSERT_TRUE(c.Close().ok());
  }
  uint64_t size = fs::file_size(path);
  uint64_t budget = 10 * size + (256ull << 20);
  testing::Limits limits;
  limits.memory_bytes = budget + (1ull << 30);
  limits.seconds = 300;
  testing::LimitedRun r = testing::RunGpucapLimited({"report", "-q", "--bins", "100000", "-o", dir.File("r.html"), path}, limits);
  ASSERT_TRUE(r.ok()) << r.Describe();
  // Under sanitizers the RSS is theirs (shadow memory, quarantine), as in
  // tests/support/limited_run.h: there only the run is checked; the plain
  // suite holds the budget.
  if (testing::kCanLimitAddressSpace) {
    EXPECT_LE(r.peak_rss_bytes, budget) << r.Describe() << " (capture " << size << " bytes)";
  }
  std::cout << "report of " << kStreams << " streams, --bins 100000: capture " << (size >> 10) << " KB, peak RSS "
            << (r.peak_rss_bytes >> 20) << " MB, budget " << (budget >> 20) << " MB\n";
  std::string page = testing::ReadFile(dir.File("r.html"));
  Json root;
  std::string error;
  ASSERT_TRUE(testing::ParseJson(Between(page, "id=\"gpucap-data\">", "</script>"), &root, &error)) << error;
  const Json& strips = root["captures"].items.at(0)["strips"];
  size_t drawn = kStripCells / 100'000;
  EXPECT_EQ(strips["bins"].i(), 100'000);
  ASSERT_EQ(strips["streams"].items.size(), drawn);
  EXPECT_EQ(strips["streams_left_out"].u(), kStreams - drawn);
  int64_t busy = strips["left_out_busy_ns"].i();
  for (const Json& st : strips["streams"].items) {
    EXPECT_EQ(st["busy"].items.size(), 100'000u);
    busy += st["busy_ns"].i();
  }
  EXPECT_EQ(busy, int64_t{kStreams} * kDur);
  const Json& delays = root["captures"].items[0]["delays"];
  ASSERT_EQ(delays.items.size(), drawn + 1);
  EXPECT_TRUE(delays.items.back()["stream"].is(Json::Type::kNull));
  EXPECT_EQ(delays.items.back()["streams"].u(), kStreams - drawn);
  EXPECT_EQ(delays.items.back()["launch_to_start"]["count"].u(), kStreams - drawn);
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
    SCOPED_TRACE("AThousandRanksNameTheSlowRankAndTheStragglingStep");
    AThousandRanksNameTheSlowRankAndTheStragglingStep();
  }
  {
    SCOPED_TRACE("TwoRanksShowBoth");
    TwoRanksShowBoth();
  }
  {
    SCOPED_TRACE("HostileNamesCannotBreakThePage");
    HostileNamesCannotBreakThePage();
  }
  {
    SCOPED_TRACE("FirstOpenIsOnTheSteps");
    FirstOpenIsOnTheSteps();
  }
  {
    SCOPED_TRACE("AnAxisIsCutOnlyPastAnOutlier");
    AnAxisIsCutOnlyPastAnOutlier();
  }
  {
    SCOPED_TRACE("StreamsAreNamedByWhatRunsOnThem");
    StreamsAreNamedByWhatRunsOnThem();
  }
  {
    SCOPED_TRACE("FactsShowTheRecorderCountersAsFields");
    FactsShowTheRecorderCountersAsFields();
  }
  {
    SCOPED_TRACE("TheDataHasNoDuplicateKey");
    TheDataHasNoDuplicateKey();
  }
  {
    SCOPED_TRACE("TimeAxesHaveRoundLabels");
    TimeAxesHaveRoundLabels();
  }
}

}  // namespace
}  // namespace gpucap::tools
