// gpucap stats --report: each nsys-named report against sums computed here
// from the Chrome JSON build of the same capture, the three output forms,
// --timeunit, the kernel name forms, and the old table names as aliases.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "../support/temp_dir.h"
#include "export_test_util.h"

namespace gpucap::testing {
namespace {

const std::vector<std::string>& ReportFixtures() {
  static const std::vector<std::string> names = {"basics", "graphs_nvtx", "torch_train", "allreduce-0", "peer"};
  return names;
}

// The report's rows, through the CLI's JSON form.
std::vector<Json> Report(const std::string& fixture, const std::string& name, const std::string& flags = "") {
  TempDir dir;
  std::string out = dir.File("r.json");
  CliRun run = Gpucap("stats " + Fixture(fixture) + " -q --report " + name + " --format json -o " + out + " " + flags);
  EXPECT_EQ(run.code, 0) << run.output;
  Json root = ParseOrFail(ReadFile(out));
  EXPECT_EQ(root["time_unit"].text, "ns");
  return root["reports"][name].items;
}

struct Sums {
  int64_t count = 0, total = 0, min = INT64_MAX, max = INT64_MIN;
  std::vector<int64_t> samples;
  double median = 0;
  void Add(int64_t v) {
    samples.push_back(v);
    count++;
    total += v;
    min = std::min(min, v);
    max = std::max(max, v);
  }
};

void ExpectSums(const std::map<std::string, Sums>& want, const std::vector<Json>& rows, const char* key,
                const char* count_key) {
  std::map<std::string, Sums> got;
  double percent = 0;
  for (const Json& r : rows) {
    Sums& s = got[r[key].text];
    s.count = r[count_key].i();
    s.total = r["Total Time (ns)"].i();
    s.min = r["Min (ns)"].i();
    s.max = r["Max (ns)"].i();
    s.median = r["Med (ns)"].number;
    percent += r["Time (%)"].number;
    EXPECT_NEAR(r["Avg (ns)"].number * static_cast<double>(s.count), static_cast<double>(s.total), 0.1 * s.count);
  }
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, w] : want) {
    const Sums& g = got[name];
    EXPECT_EQ(g.count, w.count) << name;
    EXPECT_EQ(g.total, w.total) << name;
    EXPECT_EQ(g.min, w.min) << name;
    EXPECT_EQ(g.max, w.max) << name;
    std::vector<int64_t> v = w.samples;
    std::sort(v.begin(), v.end());
    size_t mid = v.size() / 2;
    double median = v.size() % 2 ? static_cast<double>(v[mid]) : (static_cast<double>(v[mid - 1]) + static_cast<double>(v[mid])) / 2;
    EXPECT_DOUBLE_EQ(g.median, median) << name;
  }
  if (!rows.empty()) {
    EXPECT_NEAR(percent, 100.0, 0.01);
  }
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_GE(rows[i - 1]["Total Time (ns)"].i(), rows[i]["Total Time (ns)"].i());
}

std::string CopyOperation(const std::string& name) {
  if (name.rfind("Memset", 0) == 0) return "[CUDA memset]";
  static const std::map<std::string, std::string> kinds = {{"HtoD", "Host-to-Device"}, {"DtoH", "Device-to-Host"},
                                                           {"DtoD", "Device-to-Device"}, {"PtoP", "Peer-to-Peer"},
                                                           {"HtoH", "Host-to-Host"}};
  return "[CUDA memcpy " + kinds.at(name.substr(7, 4)) + "]";
}

TEST(Reports, KernelApiAndMemoryTimeSumsMatchTheTrace) {
  for (const std::string& f : ReportFixtures()) {
    SCOPED_TRACE(f);
    Trace t = BuildOne(Fixture(f));
    std::map<std::string, Sums> kernels, base, apis, copy_time;
    std::map<std::string, int64_t> copy_bytes, copy_count;
    for (const Json* e : t.Events("X")) {
      const std::string& cat = (*e)["cat"].text;
      int64_t dur = Nanos((*e)["dur"]);
      if (cat == "kernel") {
        kernels[(*e)["name"].text].Add(dur);
        base[BaseName((*e)["name"].text)].Add(dur);
      }
      if (cat == "cuda_runtime" || cat == "cuda_driver") apis[(*e)["name"].text].Add(dur);
      if (cat == "gpu_memcpy" || cat == "gpu_memset") {
        std::string op = CopyOperation((*e)["name"].text);
        copy_time[op].Add(dur);
        copy_bytes[op] += std::stoll(ArgText(*e, "bytes"));
        copy_count[op]++;
      }
    }
    ExpectSums(kernels, Report(f, "cuda_gpu_kern_sum"), "Name", "Instances");
    ExpectSums(base, Report(f, "cuda_gpu_kern_sum", "--names base"), "Name", "Instances");
    ExpectSums(apis, Report(f, "cuda_api_sum"), "Name", "Num Calls");
    ExpectSums(copy_time, Report(f, "cuda_gpu_mem_time_sum"), "Operation", "Count");
    auto sizes = Report(f, "cuda_gpu_mem_size_sum");
    ASSERT_EQ(sizes.size(), copy_bytes.size());
    for (const Json& r : sizes) {
      std::string op = r["Operation"].text;
      EXPECT_NEAR(r["Total (MB)"].number, static_cast<double>(copy_bytes[op]) / 1e6, 1e-6) << op;
      EXPECT_EQ(r["Count"].i(), copy_count[op]) << op;
    }
  }
}

TEST(Reports, MangledNamesAreTheCapturesOwn) {
  auto rows = Report("basics", "cuda_gpu_kern_sum", "--names mangled");
  ASSERT_EQ(rows.size(), 5u);
  for (const Json& r : rows) EXPECT_EQ(r["Name"].text.rfind("_Z", 0), 0u) << r["Name"].text;
}

TEST(Reports, NvtxSumAndGpuProjectionMatchTheTrace) {
  for (const std::string& f : ReportFixtures()) {
    SCOPED_TRACE(f);
    Trace t = BuildOne(Fixture(f));
    std::map<std::string, Sums> ranges;
    std::vector<JsonOp> ops = JsonOps(t, false);
    std::map<std::string, int64_t> proj_total, proj_ops, proj_instances, range_total;
    for (const Json* r : t.Events("X", "user_annotation")) {
      std::string domain = ArgText(*r, "domain");
      std::string name = (domain.empty() ? "" : domain + ":") + (*r)["name"].text;
      int64_t dur = Nanos((*r)["dur"]);
      ranges[name].Add(dur);
      // The span of the GPU ops launched on the range's thread while open.
      int64_t start = AbsoluteTs(t, *r), end = start + dur, first = INT64_MAX, last = INT64_MIN, n = 0;
      for (const JsonOp& op : ops) {
        uint64_t thread = BaseThread(t, (*r)["pid"].u(), (*r)["tid"].u());
        if (!op.launched || op.launch_tid != static_cast<int64_t>(thread) || op.launch_start < start ||
            op.launch_start >= end) {
          continue;
        }
        first = std::min(first, op.start);
        last = std::max(last, op.end);
        n++;
      }
      if (n == 0) continue;
      proj_total[name] += last - first;
      proj_ops[name] += n;
      proj_instances[name]++;
      range_total[name] += dur;
    }
    std::map<std::string, Sums> want;
    for (const auto& [name, s] : ranges) want["PushPop/" + name] = s;
    auto rows = Report(f, "nvtx_sum");
    for (Json& r : rows) {
      // Keyed by style and range, as the report groups them.
      r.members.push_back({"Key", Json{Json::Type::kString, false, 0, r["Style"].text + "/" + r["Range"].text, {}, {}}});
    }
    ExpectSums(want, rows, "Key", "Instances");

    auto proj = Report(f, "nvtx_gpu_proj_sum");
    ASSERT_EQ(proj.size(), proj_total.size());
    for (const Json& r : proj) {
      std::string name = r["Range"].text;
      EXPECT_EQ(r["Total Proj Time (ns)"].i(), proj_total[name]) << name;
      EXPECT_EQ(r["Total GPU Ops"].i(), proj_ops[name]) << name;
      EXPECT_EQ(r["Range Instances"].i(), proj_instances[name]) << name;
      EXPECT_EQ(r["Total Range Time (ns)"].i(), range_total[name]) << name;
    }
  }
}

TEST(Reports, KernelExecSumSplitsLaunchQueueAndRun) {
  for (const std::string& f : ReportFixtures()) {
    SCOPED_TRACE(f);
    Trace t = BuildOne(Fixture(f));
    struct Want {
      int64_t count = 0, queued = 0, api = 0, queue = 0, kernel = 0, total = 0;
    };
    std::map<std::string, Want> want;
    for (const JsonOp& op : JsonOps(t, true)) {
      if (!op.launched) continue;
      Want& w = want[std::to_string(op.launch_tid) + "/" + ArgText(*op.e, "device") + "/" + op.launch_name + "/" +
                     (*op.e)["name"].text];
      int64_t api_end = op.launch_start + op.launch_dur;
      w.count++;
      w.queued += op.start > api_end;
      w.api += op.launch_dur;
      w.queue += std::max<int64_t>(op.start - api_end, 0);
      w.kernel += op.end - op.start;
      w.total += op.end - op.launch_start;
    }
    auto rows = Report(f, "cuda_kern_exec_sum");
    ASSERT_EQ(rows.size(), want.size());
    for (const Json& r : rows) {
      std::string key = r["TID"].text + "/" + r["DevId"].text + "/" + r["API Name"].text + "/" + r["Kernel Name"].text;
      ASSERT_TRUE(want.count(key)) << key;
      const Want& w = want[key];
      double n = static_cast<double>(w.count);
      EXPECT_EQ(r["Count"].i(), w.count) << key;
      EXPECT_EQ(r["QCount"].i(), w.queued) << key;
      EXPECT_NEAR(r["AAvg (ns)"].number * n, static_cast<double>(w.api), 0.1 * n) << key;
      EXPECT_NEAR(r["QAvg (ns)"].number * n, static_cast<double>(w.queue), 0.1 * n) << key;
      EXPECT_NEAR(r["KAvg (ns)"].number * n, static_cast<double>(w.kernel), 0.1 * n) << key;
      EXPECT_NEAR(r["TAvg (ns)"].number * n, static_cast<double>(w.total), 0.1 * n) << key;
    }
  }
}

TEST(Reports, MedianAndStdDevOfAKnownSet) {
  // basics: scale ran 21 times; the report's median and sample standard
  // deviation against the trace's durations.
  Trace t = BuildOne(Fixture("basics"));
  std::vector<double> d;
  for (const Json* e : t.Events("X", "kernel")) {
    if (BaseName((*e)["name"].text) == "scale") d.push_back(static_cast<double>(Nanos((*e)["dur"])));
  }
  ASSERT_EQ(d.size(), 21u);
  std::sort(d.begin(), d.end());
  double mean = 0, var = 0;
  for (double x : d) mean += x / 21;
  for (double x : d) var += (x - mean) * (x - mean) / 20;
  for (const Json& r : Report("basics", "cuda_gpu_kern_sum", "--names base")) {
    if (r["Name"].text != "scale") continue;
    EXPECT_DOUBLE_EQ(r["Med (ns)"].number, d[10]);
    EXPECT_NEAR(r["StdDev (ns)"].number, std::sqrt(var), 0.1);
  }
}

TEST(Reports, FormsUnitsAndAliases) {
  CliRun csv = Gpucap("stats " + Fixture("basics") + " -q --report cuda_gpu_kern_sum --format csv --timeunit us");
  ASSERT_EQ(csv.code, 0) << csv.output;
  EXPECT_EQ(csv.output.substr(0, csv.output.find('\n')),
            "Time (%),Total Time (us),Instances,Avg (us),Med (us),Min (us),Max (us),StdDev (us),Name");
  // In us the ns totals come out divided by a thousand, three decimals.
  auto ns = Report("basics", "cuda_gpu_kern_sum");
  std::string line = csv.output.substr(csv.output.find('\n') + 1);
  std::string total_us = line.substr(line.find(',') + 1);
  total_us = total_us.substr(0, total_us.find(','));
  char want[64];
  std::snprintf(want, sizeof(want), "%.3f", static_cast<double>(ns[0]["Total Time (ns)"].i()) / 1e3);
  EXPECT_EQ(total_us, want);

  CliRun table = Gpucap("stats " + Fixture("basics") + " -q --report cuda_api_sum --format table");
  ASSERT_EQ(table.code, 0) << table.output;
  EXPECT_NE(table.output.find("CUDA API Summary (cuda_api_sum)"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("cudaLaunchKernel"), std::string::npos);

  // The tables gpucap had keep their names, through --report too.
  CliRun alias = Gpucap("stats " + Fixture("basics") + " -q --report kernels --format csv");
  CliRun old = Gpucap("stats " + Fixture("basics") + " -q --table kernels --format csv");
  ASSERT_EQ(alias.code, 0) << alias.output;
  EXPECT_EQ(alias.output, old.output);

  CliRun bad = Gpucap("stats " + Fixture("basics") + " --report cuda_gpu_kern_summ");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("cuda_gpu_kern_summ"), std::string::npos) << bad.output;
  CliRun unit = Gpucap("stats " + Fixture("basics") + " --report cuda_api_sum --timeunit fortnights");
  EXPECT_EQ(unit.code, 2);
  EXPECT_NE(unit.output.find("--timeunit"), std::string::npos) << unit.output;
}

}  // namespace
}  // namespace gpucap::testing
