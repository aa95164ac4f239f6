#include "gpucap/tools/stats/stats_reports.h"

#include <sqlite3.h>

#include <array>
#include <memory>

#include "gpucap/tools/export/sqlite_export.h"
#include "report_queries.h"

namespace gpucap::tools {
namespace {

// nsys's report names, and whether the report takes a kernel name form
// (its `:base` and `:mangled` arguments).
struct Known {
  std::string_view name;
  bool kernel_names;
};
constexpr Known kKnown[] = {
    {"cuda_api_sum", false},        {"cuda_gpu_kern_sum", true},     {"cuda_gpu_kern_gb_sum", true},
    {"cuda_gpu_mem_time_sum", false}, {"cuda_gpu_mem_size_sum", false}, {"cuda_gpu_sum", true},
    {"cuda_gpu_trace", true},       {"cuda_kern_exec_sum", true},    {"nvtx_sum", false},
    {"nvtx_pushpop_sum", false},    {"nvtx_gpu_proj_sum", false},    {"nvtx_kern_sum", true},
};

constexpr auto kNames = [] {
  std::array<std::string_view, std::size(kKnown)> names{};
  for (size_t i = 0; i < std::size(kKnown); ++i) names[i] = kKnown[i].name;
  return names;
}();

const Known* Find(std::string_view name) {
  for (const Known& k : kKnown) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

}  // namespace

std::span<const std::string_view> ReportNames() { return kNames; }

bool IsReportName(std::string_view name) { return Find(name) != nullptr; }

Result<KernelNameForm> ParseKernelNameForm(std::string_view name) {
  if (name == "demangled") return KernelNameForm::kDemangled;
  if (name == "base") return KernelNameForm::kBase;
  if (name == "mangled") return KernelNameForm::kMangled;
  return Status::InvalidArgument("--names '" + std::string(name) + "': expected demangled, base or mangled");
}

Result<bool> ParseReportRequest(std::string_view text, ReportRequest* out) {
  size_t colon = text.find(':');
  const Known* known = Find(text.substr(0, colon));
  if (known == nullptr) return false;
  out->name = std::string(known->name);
  out->has_form = false;
  if (colon == std::string_view::npos) return true;
  std::string_view arg = text.substr(colon + 1);
  if (!known->kernel_names || (arg != "base" && arg != "mangled")) {
    return Status::InvalidArgument("--report '" + std::string(text) + "': " + out->name +
                                   (known->kernel_names ? " takes :base or :mangled" : " takes no argument"));
  }
  out->has_form = true;
  out->form = arg == "base" ? KernelNameForm::kBase : KernelNameForm::kMangled;
  return true;
}

Result<TimeUnit> ParseTimeUnit(std::string_view name) {
  if (name == "ns" || name == "nsec") return TimeUnit::kNs;
  if (name == "us" || name == "usec") return TimeUnit::kUs;
  if (name == "ms" || name == "msec") return TimeUnit::kMs;
  if (name == "s" || name == "sec") return TimeUnit::kS;
  return Status::InvalidArgument("--timeunit '" + std::string(name) + "': expected ns, us, ms or s");
}

Result<Report> RunReport(sqlite3* db, std::string_view name, KernelNameForm names) {
  using namespace reports;
  if (name == "cuda_api_sum") return CudaApiSum(db);
  if (name == "cuda_gpu_kern_sum") return CudaGpuKernSum(db, names);
  if (name == "cuda_gpu_kern_gb_sum") return CudaGpuKernGbSum(db, names);
  if (name == "cuda_gpu_mem_time_sum") return CudaGpuMemTimeSum(db);
  if (name == "cuda_gpu_mem_size_sum") return CudaGpuMemSizeSum(db);
  if (name == "cuda_gpu_sum") return CudaGpuSum(db, names);
  if (name == "cuda_gpu_trace") return CudaGpuTrace(db, names);
  if (name == "cuda_kern_exec_sum") return CudaKernExecSum(db, names);
  if (name == "nvtx_sum") return NvtxSum(db);
  if (name == "nvtx_pushpop_sum") return NvtxPushPopSum(db);
  if (name == "nvtx_gpu_proj_sum") return NvtxGpuProjSum(db);
  if (name == "nvtx_kern_sum") return NvtxKernSum(db, names);
  std::string known;
  for (std::string_view n : kNames) known += (known.empty() ? "" : ", ") + std::string(n);
  return Status::InvalidArgument("--report '" + std::string(name) + "': expected one of " + known +
                                 " (or kernels, copies, apis, ranges, streams, devices)");
}

Result<std::vector<Report>> CaptureReports(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                                           const std::vector<ReportRequest>& requests, KernelNameForm names,
                                           std::vector<std::string>* warnings) {
  sqlite3* db = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
    sqlite3_close(db);
    return Status::ResourceExhausted("cannot open a database in memory");
  }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> closer(db, sqlite3_close);
  ExportOptions o;
  o.build = options;
  const builder::CaptureIndex* captures[] = {&index};
  auto exported = ExportCaptures(db, captures, o);
  if (!exported.ok()) return exported.status();
  if (warnings != nullptr) *warnings = exported->warnings;
  std::vector<Report> reports;
  for (const ReportRequest& request : requests) {
    auto r = RunReport(db, request.name, request.has_form ? request.form : names);
    if (!r.ok()) return r.status();
    reports.push_back(std::move(r).value());
  }
  return reports;
}

}  // namespace gpucap::tools
