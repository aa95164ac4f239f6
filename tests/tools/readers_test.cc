// What the ecosystem's readers of Kineto traces depend on, checked on the
// fixtures' traces. Written from what those readers are documented and seen
// to do (their code stays out of the project):
//   - HTA finds a trace's rank in the raw text with the pattern
//     "rank":\s+(\d+) before parsing, and tabulates every duration event
//     with ts, dur, name, cat, pid, tid and "External id";
//   - TensorBoard's profiler plugin lists NAME[.DIGITS].pt.trace.json[.gz]
//     (NAME the worker, DIGITS a span of it) and looks a device up by its id
//     as a position in deviceProperties;
//   - Perfetto's JSON importer takes pids as uint32, Kineto's readers as
//     int32.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "../support/temp_dir.h"
#include "tool_test_util.h"

namespace gpucap::testing {
namespace {

const std::regex kHtaRank("\"rank\":\\s+(\\d+)");
const std::regex kTensorBoardName("^(.*?)(\\.\\d+)?\\.pt\\.trace\\.json(?:\\.gz)?$");

std::vector<Trace> AllWindows(const std::string& fixture, const std::string& window = "all") {
  builder::BuildOptions o;
  o.window = window;
  o.threads = 1;
  return BuildTraces(Fixture(fixture), o);
}

TEST(Readers, TheRankATextScanFindsIsTheRankAParserFinds) {
  for (int rank : {0, 1}) {
    SCOPED_TRACE(rank);
    for (const Trace& t : AllWindows("allreduce-" + std::to_string(rank), "nvtx:ProfilerStep#\\d+")) {
      std::smatch m;
      ASSERT_TRUE(std::regex_search(t.text, m, kHtaRank)) << t.text.substr(0, 200);
      EXPECT_EQ(std::stoi(m[1].str()), rank);
      EXPECT_EQ(t.root["distributedInfo"]["rank"].i(), rank);
      EXPECT_EQ(t.root["distributedInfo"]["world_size"].i(), 2);
      // Within the first lines, where a reader that stops early looks.
      EXPECT_LT(static_cast<size_t>(m.position(0)), 200u);
      EXPECT_EQ(t.root["distributedInfo"]["backend"].text, "nccl");
    }
  }
  // A process without a rank: no distributedInfo, and nothing the pattern takes for one.
  Trace t = BuildOne(Fixture("basics"));
  EXPECT_FALSE(t.root.has("distributedInfo"));
  EXPECT_FALSE(std::regex_search(t.text, kHtaRank));
}

TEST(Readers, TensorBoardListsTheFilesAsSpansOfOneWorker) {
  builder::Window w;
  w.index = 3;
  w.label = "ProfilerStep#3";
  std::smatch m;
  for (const char* out : {"tb/vm_0.pt.trace.json.gz", "tb/vm_0.pt.trace.json"}) {
    std::string name = std::filesystem::path(builder::WindowOutputPath(out, w, false)).filename().string();
    ASSERT_TRUE(std::regex_match(name, m, kTensorBoardName)) << name;
    EXPECT_EQ(m[1].str(), "vm_0") << name;
    EXPECT_EQ(m[2].str(), ".3") << name;
  }
  // Other names keep the label, and are not TensorBoard's.
  EXPECT_EQ(builder::WindowOutputPath("t.json.gz", w, false), "t.3-ProfilerStep#3.json.gz");

  // -o DIR/ names the file after the capture, in TensorBoard's form.
  TempDir dir;
  CliRun r = Gpucap("build " + Fixture("allreduce-1") + " -o " + dir.path().string() + "/tb/");
  ASSERT_EQ(r.code, 0) << r.output;
  std::string file = dir.File("tb/allreduce-1.pt.trace.json.gz");
  ASSERT_TRUE(std::filesystem::exists(file)) << r.output;
  EXPECT_TRUE(std::regex_match(std::string("allreduce-1.pt.trace.json.gz"), kTensorBoardName));
  auto t = ReadTrace(file);
  EXPECT_EQ(t->root["distributedInfo"]["rank"].i(), 1);
}

// The plugin orders a worker's spans by their digits as text: with ten
// windows or more, unpadded numbers would list window 10 between 1 and 2.
TEST(Readers, TensorBoardSpansSortAsTextInWindowOrder) {
  builder::Window w;
  w.index = 3;
  w.label = "ProfilerStep#3";
  EXPECT_EQ(builder::WindowOutputPath("vm_0.pt.trace.json.gz", w, false, 12), "vm_0.03.pt.trace.json.gz");
  EXPECT_EQ(builder::WindowOutputPath("vm_0.pt.trace.json.gz", w, false, 3), "vm_0.3.pt.trace.json.gz");
  EXPECT_EQ(builder::WindowOutputPath("t.json.gz", w, false, 12), "t.3-ProfilerStep#3.json.gz")
      << "other names are not read as spans: no padding";

  TempDir dir;
  auto index = builder::CaptureIndex::Open(Fixture("basics"));
  ASSERT_TRUE(index.ok()) << index.status().message();
  const uint64_t span = (*index)->extent().end_ns - (*index)->extent().start_ns;
  const uint64_t every = (span + 11) / 12;  // twelve windows (the last may be shorter)
  CliRun r = Gpucap("build " + Fixture("basics") + " -w every:" + std::to_string(every) + "ns -o " +
                    dir.path().string() + "/tb/vm_0.pt.trace.json.gz -q");
  ASSERT_EQ(r.code, 0) << r.output;
  const size_t kWindows = (span + every - 1) / every;
  ASSERT_GE(kWindows, 10u) << "enough windows for two-digit numbers";
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.File("tb"))) {
    names.push_back(entry.path().filename().string());
  }
  ASSERT_EQ(names.size(), kWindows) << r.output;
  std::sort(names.begin(), names.end());  // as text, as the plugin sorts them
  for (size_t i = 0; i < names.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(names[i], m, kTensorBoardName)) << names[i];
    EXPECT_EQ(std::stoul(m[2].str().substr(1)), i) << "text order is window order: " << names[i];
  }
}

TEST(Readers, ADeviceIsFoundAtTheListPositionOfItsId) {
  for (const std::string& name : FixtureNames()) {
    SCOPED_TRACE(name);
    Trace t = BuildOne(Fixture(name));
    const Json& devices = t.root["deviceProperties"];
    ASSERT_FALSE(devices.items.empty());
    for (size_t i = 0; i < devices.items.size(); ++i) EXPECT_EQ(devices.items[i]["id"].u(), i);
    size_t gpu_ops = 0;
    for (const char* cat : {"kernel", "gpu_memcpy", "gpu_memset"}) {
      for (const Json* e : t.Events("X", cat)) {
        // GPU ops sit on the pid of their device, as Kineto's.
        uint64_t device = (*e)["pid"].u();
        ASSERT_LT(device, devices.items.size()) << (*e)["name"].text;
        EXPECT_TRUE(devices.items[device].has("name")) << "device " << device << " has no facts";
        EXPECT_TRUE(devices.items[device].has("computeMajor"));
        ++gpu_ops;
      }
    }
    EXPECT_GT(gpu_ops, 0u);
  }
  // Rank 1 recorded device 1 only: device 0 is listed by its id alone.
  Trace rank1 = BuildOne(Fixture("allreduce-1"));
  ASSERT_EQ(rank1.root["deviceProperties"].items.size(), 2u);
  EXPECT_FALSE(rank1.root["deviceProperties"].items[0].has("name"));
  EXPECT_EQ(rank1.root["deviceProperties"].items[1]["name"].text, "NVIDIA H200");
}

// The columns HTA builds its table from, on every duration event of every
// window, including windows that hold nothing but counters.
void ExpectHtaColumns(const Trace& t, const std::string& what, size_t* tied) {
  auto xs = t.Events("X");
  ASSERT_FALSE(xs.empty()) << what << ": no duration event";
  for (const Json* e : xs) {
    for (const char* key : {"ts", "dur", "name", "cat", "pid", "tid"}) {
      EXPECT_TRUE(e->has(key)) << what << ": " << key << " missing on " << (*e)["name"].text;
    }
  }
  // Kineto's External id ties an annotation to the calls made inside it and
  // the GPU ops they launched.
  std::map<uint64_t, uint64_t> external_of_launch;  // correlation -> External id
  for (const char* cat : {"cuda_runtime", "cuda_driver"}) {
    for (const Json* e : t.Events("X", cat)) {
      if ((*e)["args"].has("External id") && (*e)["args"].has("correlation")) external_of_launch[(*e)["args"]["correlation"].u()] = (*e)["args"]["External id"].u();
    }
  }
  for (const char* cat : {"user_annotation", "gpu_user_annotation"}) {
    for (const Json* e : t.Events("X", cat)) {
      ASSERT_TRUE((*e)["args"].has("External id")) << what << ": " << cat << " " << (*e)["name"].text;
      EXPECT_GT((*e)["args"]["External id"].u(), 0u);
    }
  }
  for (const char* cat : {"kernel", "gpu_memcpy", "gpu_memset"}) {
    for (const Json* e : t.Events("X", cat)) {
      // (An op whose launch is in an earlier window carries its id too.)
      ASSERT_TRUE((*e)["args"].has("correlation")) << what << ": " << (*e)["name"].text;
      auto it = external_of_launch.find((*e)["args"]["correlation"].u());
      if (it != external_of_launch.end()) {
        ASSERT_TRUE((*e)["args"].has("External id")) << what << ": " << (*e)["name"].text;
        EXPECT_EQ((*e)["args"]["External id"].u(), it->second) << what << ": " << (*e)["name"].text;
        ++*tied;
      }
    }
  }
}

TEST(Readers, EveryWindowHasTheColumnsHtaTabulates) {
  size_t tied = 0;
  for (const std::string& name : FixtureNames()) ExpectHtaColumns(BuildOne(Fixture(name)), name, &tied);
  EXPECT_GT(tied, 100u) << "GPU ops tied to their launch's External id";
  std::vector<Trace> windows = AllWindows("counters", "every:200ms");
  ASSERT_GT(windows.size(), 3u);
  for (size_t i = 0; i < windows.size(); ++i) {
    ExpectHtaColumns(windows[i], "counters every:200ms window " + std::to_string(i), &tied);
    // The window's own span, as Kineto's "PyTorch Profiler (0)": its extent.
    auto spans = windows[i].Events("X", "Trace");
    ASSERT_EQ(spans.size(), 1u);
    const Json& w = windows[i].root["gpucap"]["window"];
    EXPECT_EQ(static_cast<uint64_t>(Nanos((*spans[0])["dur"])), w["end_ns"].u() - w["start_ns"].u());
  }
  // A kernel launched inside a range carries the range's id: the ProfilerStep's.
  std::vector<Trace> steps = AllWindows("allreduce-1", "nvtx:ProfilerStep#\\d+");
  ASSERT_GT(steps.size(), 2u);
  const Trace& step = steps[2];  // (a copy's events would point into the original)
  std::set<uint64_t> step_ids;
  for (const Json* e : step.Named("ProfilerStep#2")) {
    if ((*e)["cat"].text == "Trace") continue;
    step_ids.insert((*e)["args"]["External id"].u());
  }
  ASSERT_EQ(step_ids.size(), 1u) << "the range and its GPU span share one id";
  size_t in_step = 0;
  for (const Json* e : step.Events("X", "kernel")) {
    if ((*e)["args"].has("External id")) in_step += step_ids.count((*e)["args"]["External id"].u());
  }
  EXPECT_GT(in_step, 0u);
}

TEST(Readers, PidsReadTheSameAsInt32AndUint32AndLanesHaveCleanNames) {
  Trace t = BuildOne(Fixture("allreduce-1"));
  std::set<uint64_t> named;
  for (const Json* e : t.Events("M")) {
    if ((*e)["name"].text == "process_name") named.insert((*e)["pid"].u());
    if ((*e)["name"].text == "thread_name") {
      const std::string& name = (*e)["args"]["name"].text;
      EXPECT_FALSE(name.empty() || name.back() == ' ') << "'" << name << "'";
    }
  }
  auto overhead = t.Events("X", "overhead");
  ASSERT_FALSE(overhead.empty());
  for (const Json* e : t.events) {
    if (!e->has("pid")) continue;
    EXPECT_LE((*e)["pid"].u(), 0x7fffffffu) << (*e)["name"].text;
    EXPECT_NE((*e)["pid"].u(), 0u) << (*e)["name"].text << ": pid 0 is Perfetto's idle process";
  }
  for (const Json* e : overhead) EXPECT_TRUE(named.count((*e)["pid"].u())) << "overhead on an unnamed process";
  EXPECT_EQ(t.ThreadName(1, 7), "stream 7");
}

TEST(Readers, TraceIdNamesOneTrace) {
  std::vector<Trace> a = AllWindows("torch_train", "nvtx:ProfilerStep#\\d+");
  std::vector<Trace> b = AllWindows("torch_train", "nvtx:ProfilerStep#\\d+");
  ASSERT_GT(a.size(), 2u);
  std::set<std::string> ids;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& id = a[i].root["trace_id"].text;
    EXPECT_TRUE(std::regex_match(id, std::regex("[0-9A-F]{32}"))) << id;
    EXPECT_EQ(id, b[i].root["trace_id"].text) << "a rebuild names the trace the same";
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), a.size());
}

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  if (f == nullptr) return out;
  char buf[65536];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

TEST(Cli, TheConventionsPeopleExpect) {
  CliRun v = Gpucap("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.output.rfind("gpucap ", 0), 0u) << v.output;
  CliRun help = Gpucap("help build");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.output.find("usage: gpucap build"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("--window"), std::string::npos);
  EXPECT_EQ(Gpucap("help no-such-command").code, 2);

  TempDir dir;
  std::string capture = Fixture("allreduce-0");
  // A malformed --window is a usage error in every command.
  for (const char* window : {"'nvtx:('", "range:+2s:+1s", "every:5xs", "sometimes"}) {
    for (const std::string& cmd : {"build " + capture + " -o " + dir.File("t.json"),
                                   "stats " + capture,
                                   "merge " + capture + " -o " + dir.File("m.json"),
                                   "trim " + capture + " -o " + dir.File("t.gpucap"),
                                   "diff " + capture + " " + capture,
                                   "fixture " + capture + " -o " + dir.File("fx")}) {
      CliRun r = Gpucap(cmd + " -w " + window);
      EXPECT_EQ(r.code, 2) << cmd << " -w " << window << ": " << r.output;
    }
  }
  // -q: nothing at all, per window or otherwise.
  CliRun quiet = Gpucap("build " + Fixture("torch_train") + " -w 'nvtx:ProfilerStep#\\d+' -q -o " + dir.File("q.json"));
  EXPECT_EQ(quiet.code, 0);
  EXPECT_EQ(quiet.output, "");
  EXPECT_TRUE(std::filesystem::exists(dir.File("q.3-ProfilerStep#3.json")));
  CliRun merge_quiet = Gpucap("merge " + capture + " " + Fixture("allreduce-1") + " -q -o " + dir.File("mq.json"));
  EXPECT_EQ(merge_quiet.code, 0);
  EXPECT_EQ(merge_quiet.output, "");

  // merge writes Perfetto's format when asked by name or by --format.
  for (const std::string& args : {std::string("-o ") + dir.File("job.pftrace.gz"),
                                  std::string("--format pftrace -o ") + dir.File("job.pf.gz")}) {
    CliRun r = Gpucap("merge " + capture + " " + Fixture("allreduce-1") + " " + args);
    ASSERT_EQ(r.code, 0) << r.output;
  }
  for (const char* name : {"job.pftrace.gz", "job.pf.gz"}) {
    std::string bytes = Gunzip(dir.File(name));
    ASSERT_GT(bytes.size(), 100u) << name;
    // A TracePacket stream: field 1 of Trace, length-delimited; never JSON's '{'.
    EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x0au) << name;
  }
  EXPECT_EQ(Gpucap("merge " + capture + " --format svg -o " + dir.File("x")).code, 2);

  // A folder given where a file goes: a clear error, before anything is written.
  CliRun folder = Gpucap("merge " + capture + " -o " + dir.path().string() + "/");
  EXPECT_EQ(folder.code, 1);
  EXPECT_NE(folder.output.find("is a folder"), std::string::npos) << folder.output;
  EXPECT_EQ(folder.output.find(".tmp"), std::string::npos) << folder.output;

  // info counts frames as frames, devices as devices.
  CliRun info = Gpucap("info " + Fixture("peer"));
  ASSERT_EQ(info.code, 0);
  EXPECT_NE(info.output.find("1 devices frame"), std::string::npos) << info.output;
  EXPECT_EQ(info.output.find(" 1 devices,"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("device 1 "), std::string::npos) << info.output;
}

}  // namespace
}  // namespace gpucap::testing
