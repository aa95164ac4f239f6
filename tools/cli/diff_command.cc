// gpucap diff A B [--threshold PCT]: per kernel name, count and time deltas
// between two captures (or two windows of one); exit 3 past the threshold.
#include <iostream>

#include "cli.h"
#include "command.h"
#include "progress.h"
#include "gpucap/tools/stats/kernel_diff.h"

namespace po = boost::program_options;

namespace gpucap::tools {

int RunDiff(const std::vector<std::string>& args) {
  po::options_description options("gpucap diff options");
  WindowFlags window;
  std::string window_b, select_b, threshold, min_delta, metric, format;
  size_t top = 0;
  options.add_options()
      ("a", po::value<std::string>()->required(), "baseline capture")
      ("b", po::value<std::string>()->required(), "capture to compare with it")
      ("window-b", po::value<std::string>(&window_b), "window spec for B (default: --window)")
      ("select-b", po::value<std::string>(&select_b), "window selection for B (default: --select)")
      ("threshold", po::value<std::string>(&threshold)->default_value("10%"),
       "a kernel past it (slower, or new) makes the exit status 3")
      ("min-delta", po::value<std::string>(&min_delta)->default_value("5us"),
       "changes smaller than this in time never count")
      ("metric", po::value<std::string>(&metric)->default_value("total"),
       "total (GPU time per name) | mean (per launch: for runs of different lengths)")
      ("counts", po::bool_switch(), "a change in any kernel's count is past the threshold too")
      ("top,n", po::value<size_t>(&top)->default_value(0), "rows shown, largest change first (0: all)")
      ("format,f", po::value<std::string>(&format)->default_value("text"), "text | json")
      ("quiet,q", po::bool_switch(), "no progress line, no warnings on stderr");
  AddWindowFlags(&options, &window, "Several windows are tallied together.");
  po::positional_options_description positional;
  positional.add("a", 1).add("b", 1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap diff A B [--threshold PCT] [--window SPEC [--window-b SPEC]]", options,
                 positional, &vm, &code)) {
    return code;
  }
  bool quiet = vm["quiet"].as<bool>();
  DiffOptions o;
  auto pct = ParsePercent(threshold);
  if (!pct.ok()) return Fail("diff", "--threshold: " + pct.status().message(), kExitUsage);
  o.threshold_pct = *pct;
  auto floor = builder::ParseDuration(min_delta);
  if (!floor.ok()) return Fail("diff", "--min-delta: " + floor.status().message(), kExitUsage);
  o.min_delta_ns = static_cast<int64_t>(*floor);
  if (metric == "total") {
    o.metric = DiffOptions::Metric::kTotal;
  } else if (metric == "mean") {
    o.metric = DiffOptions::Metric::kMean;
  } else {
    return Fail("diff", "--metric '" + metric + "': expected total or mean", kExitUsage);
  }
  o.counts = vm["counts"].as<bool>();
  if (format != "text" && format != "json") return Fail("diff", "--format '" + format + "': expected text or json", kExitUsage);
  builder::BuildOptions build_a, build_b;
  if (Status s = ApplyWindowFlags(window, &build_a); !s.ok()) return Fail("diff", s, kExitUsage);
  WindowFlags window_of_b = window;
  if (vm.count("window-b")) window_of_b.window = window_b;
  if (vm.count("select-b")) window_of_b.select = select_b;
  if (Status s = ApplyWindowFlags(window_of_b, &build_b); !s.ok()) return Fail("diff", s, kExitUsage);

  Progress progress("diff", Progress::ShouldShow(quiet));
  GpuStats stats[2];
  const std::string paths[2] = {vm["a"].as<std::string>(), vm["b"].as<std::string>()};
  for (int i = 0; i < 2; ++i) {
    auto index = OpenCapture(paths[i]);
    if (!index.ok()) return Fail("diff", index.status());
    auto s = CollectStats(**index, i == 0 ? build_a : build_b, progress.Fn());
    if (!s.ok()) return Fail("diff", s.status());
    for (const std::string& w : s->warnings) Warn("diff", w, quiet);
    stats[i] = std::move(s).value();
  }
  progress.Clear();
  KernelDiff d = DiffKernels(stats[0], stats[1], o);
  std::cout << (format == "json" ? DiffJson(d, o) : DiffText(d, o, top));
  return d.Past() ? kExitPastThreshold : kExitOk;
}

}  // namespace gpucap::tools
