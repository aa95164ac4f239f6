// SQLite export throughput: rows/s (wall and per CPU second) and the
// database's bytes per kernel, exporting captures made by `build_bench make`
// (N kernels, each with its cudaLaunchKernel record, under NVTX steps):
//
//   build_bench make CAPTURE [--kernels N]
//   export_bench OUT.sqlite CAPTURE... [--window SPEC] [--parallel N] [--threads N] [--join-only]
//                [--no-indexes]
//
// --join-only runs the same builder windows into a sink that drops every
// slice: what the export costs above the join it reuses.
// bench/export/compare.py measures two gpucap binaries' exports side by side
// instead (what bench/README.md's "Export" figures come from).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpucap/builder/builder.h"
#include "gpucap/tools/export/sqlite_export.h"

using namespace gpucap;

namespace {

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

class NullSink : public builder::TraceSink {
 public:
  Status Begin(const builder::TraceHeader&) override { return Status::Ok(); }
  Status AddSlice(const builder::Slice&) override {
    slices++;
    return Status::Ok();
  }
  Status AddCounter(const builder::CounterPoint&) override { return Status::Ok(); }
  Status End() override { return Status::Ok(); }
  uint64_t slices = 0;
};

int JoinOnly(const std::vector<std::string>& captures, const builder::BuildOptions& o) {
  double cpu0 = CpuSeconds();
  auto t0 = std::chrono::steady_clock::now();
  uint64_t slices = 0;
  for (const std::string& path : captures) {
    auto index = builder::CaptureIndex::Open(path);
    if (!index.ok()) return std::fprintf(stderr, "%s\n", index.status().message().c_str()), 1;
    builder::Builder b(**index, o);
    auto windows = b.Windows();
    if (!windows.ok()) return 1;
    NullSink sink;
    for (const builder::Window& w : *windows) {
      builder::WindowReport r;
      if (!b.BuildWindow(w, &sink, &r).ok()) return 1;
    }
    slices += sink.slices;
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("join only: %llu slices in %.3f s wall, %.3f s CPU\n", static_cast<unsigned long long>(slices), wall,
              CpuSeconds() - cpu0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: export_bench OUT.sqlite CAPTURE... [--window SPEC] [--parallel N] [--threads N] "
                         "[--join-only] [--no-indexes]\n");
    return 2;
  }
  std::string out = argv[1];
  std::vector<std::string> captures;
  tools::ExportOptions o;
  o.build.window = "every:1s";
  bool join_only = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--window" && i + 1 < argc) o.build.window = argv[++i];
    else if (a == "--parallel" && i + 1 < argc) o.jobs = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) o.build.threads = std::atoi(argv[++i]);
    else if (a == "--join-only") join_only = true;
    else if (a == "--no-indexes") o.indexes = false;
    else captures.push_back(a);
  }
  if (join_only) return JoinOnly(captures, o.build);
  double cpu0 = CpuSeconds();
  auto report = tools::ExportToFile(captures, out, o);
  double cpu = CpuSeconds() - cpu0;
  if (!report.ok()) {
    std::fprintf(stderr, "%s\n", report.status().message().c_str());
    return 1;
  }
  uint64_t kernels = report->table_rows[static_cast<size_t>(tools::sqlite::TableId::kKernels)];
  uint64_t apis = report->table_rows[static_cast<size_t>(tools::sqlite::TableId::kApiCalls)];
  std::printf("%s: %llu rows (%llu kernels, %llu API calls) in %.3f s wall (%.3f s of it indexing), %.3f s CPU: "
              "%.0f rows/s wall, %.0f rows per CPU second; %llu bytes, %.1f bytes per kernel\n",
              out.c_str(), static_cast<unsigned long long>(report->rows), static_cast<unsigned long long>(kernels),
              static_cast<unsigned long long>(apis), report->seconds, report->index_seconds, cpu, report->rows / report->seconds,
              report->rows / cpu, static_cast<unsigned long long>(report->bytes),
              kernels ? static_cast<double>(report->bytes) / static_cast<double>(kernels) : 0.0);
  return 0;
}
