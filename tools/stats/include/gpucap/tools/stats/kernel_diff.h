// Per kernel name, what changed between two tallies (two captures, or two
// windows of one): counts and GPU time, with a verdict for CI gates. Only
// regressions count against the threshold: a kernel that got slower, or a
// new one, by more than the threshold in percent and by more than a floor in
// time (so a 1 us kernel jittering by 20% does not fail a build).
#ifndef GPUCAP_TOOLS_KERNEL_DIFF_H_
#define GPUCAP_TOOLS_KERNEL_DIFF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gpucap/tools/stats/gpu_stats.h"

namespace gpucap::tools {

struct DiffOptions {
  enum class Metric { kTotal, kMean };
  Metric metric = Metric::kTotal;  // what is compared per kernel
  double threshold_pct = 10;
  int64_t min_delta_ns = 5000;
  bool counts = false;  // any change in a kernel's count is past the threshold too
};

struct KernelDelta {
  std::string name;
  uint64_t count_a = 0, count_b = 0;
  int64_t value_a = 0, value_b = 0;  // ns, by the metric
  double change_pct = 0;             // of value_a; +inf for a kernel new in B
  bool past = false;
  int64_t delta() const { return value_b - value_a; }
};

struct KernelDiff {
  std::vector<KernelDelta> kernels;  // largest change first
  int64_t kernel_ns_a = 0, kernel_ns_b = 0;
  bool total_past = false;           // the summed kernel time regressed
  size_t past = 0;                   // kernels past the threshold
  bool Past() const { return past > 0 || total_past; }
};

KernelDiff DiffKernels(const GpuStats& a, const GpuStats& b, const DiffOptions& options);

std::string DiffText(const KernelDiff& diff, const DiffOptions& options, size_t top);
std::string DiffJson(const KernelDiff& diff, const DiffOptions& options);

// "10", "10%", "2.5%" -> percent.
Result<double> ParsePercent(const std::string& text);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_KERNEL_DIFF_H_
