// Builder throughput: events/s and peak RSS building gzipped Chrome JSON from
// a large synthetic capture (N kernels, each with its cudaLaunchKernel
// record, under NVTX step ranges). Two steps, so the capture's making does
// not count toward the build's memory:
//
//   build_bench make CAPTURE [--kernels N]
//   build_bench build CAPTURE OUT.json.gz [--window SPEC] [--threads N] [--codec isal|libdeflate|zlib] [--level L]
//
// See bench/README.md ("builder") for figures.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "gpucap/builder/builder.h"
#include "synthetic_capture.h"

using namespace gpucap;
using namespace gpucap::builder;

namespace {

constexpr uint64_t kT0 = 1'790'857'026'000'000'000ull;

const char* Flag(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 0; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return fallback;
}

int Make(const std::string& path, uint64_t kernels) {
  format::SessionInfo session = testing::DefaultSession();
  auto c = testing::SyntheticCapture::Create(path, session, {testing::H200(0)});
  if (!c.ok()) {
    std::fprintf(stderr, "%s\n", c.status().message().c_str());
    return 1;
  }
  testing::SyntheticCapture& s = **c;
  format::ClockSample clock;
  clock.cupti_ns = kT0;
  clock.realtime_ns = static_cast<int64_t>(kT0);
  s.Message(clock);
  const int kNames = 64;
  for (int i = 0; i < kNames; ++i) {
    s.String(0x10000 + i * 64, "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi" +
                                   std::to_string(i) + "EEEEEviT0_T1_");
  }
  const uint32_t tid = 4243;
  const uint64_t spacing = 2000;          // a launch every 2 us: 5M kernels = 10 s
  const uint64_t per_step = 10000;        // kernels per ProfilerStep
  const uint64_t per_chunk = 16384;       // ~4 MB CUPTI buffers
  uint64_t step = 0;
  for (uint64_t i = 0; i < kernels; ++i) {
    uint64_t t = kT0 + 1000 + i * spacing;
    if (i % per_step == 0) {
      if (i) s.Pop(tid, t - 100);
      s.Push(tid, t - 50, "ProfilerStep#" + std::to_string(step++));
    }
    testing::ApiRecord a;
    a.start = t;
    a.end = t + 1500;
    a.pid = session.pid;
    a.tid = tid;
    a.correlation = static_cast<uint32_t>(i + 1);
    s.Api(a);
    testing::KernelRecord k;
    k.start = t + 40'000;
    k.end = k.start + 1800;
    k.correlation = a.correlation;
    k.stream = 7;
    k.name_pointer = 0x10000 + (i % kNames) * 64;
    k.grid_x = 1 + static_cast<int32_t>(i % 1024);
    k.block_x = 256;
    k.registers_per_thread = 32;
    s.Kernel(k);
    if (s.pending_records() >= 2 * per_chunk) {
      Status st = s.EndChunk();
      if (!st.ok()) {
        std::fprintf(stderr, "%s\n", st.message().c_str());
        return 1;
      }
    }
  }
  s.Pop(tid, kT0 + 1000 + kernels * spacing + 100'000);
  Status st = s.Close();
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  std::printf("wrote %s: %llu kernels, %llu bytes\n", path.c_str(), static_cast<unsigned long long>(kernels),
              static_cast<unsigned long long>(std::filesystem::file_size(path)));
  return 0;
}

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

int Build(const std::string& capture, const std::string& out, int argc, char** argv) {
  auto wall0 = std::chrono::steady_clock::now();
  double cpu0 = CpuSeconds();
  auto index = CaptureIndex::Open(capture);
  if (!index.ok()) {
    std::fprintf(stderr, "%s\n", index.status().message().c_str());
    return 1;
  }
  BuildOptions o;
  o.window = Flag(argc, argv, "--window", "every:1s");
  o.output = out;
  o.format = FormatForPath(out);  // t.json.gz or t.pftrace.gz
  o.threads = std::atoi(Flag(argc, argv, "--threads", "0"));
  o.output_options.threads = o.threads;
  o.output_options.gzip_level = std::atoi(Flag(argc, argv, "--level", "1"));
  std::string codec = Flag(argc, argv, "--codec", "default");
  o.output_options.codec = codec == "zlib" ? GzipCodec::kZlib
                           : codec == "libdeflate" ? GzipCodec::kLibdeflate
                           : codec == "isal" ? GzipCodec::kIsal : GzipCodec::kDefault;
  auto report = BuildTraces(**index, o);
  if (!report.ok()) {
    std::fprintf(stderr, "%s\n", report.status().message().c_str());
    return 1;
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  double cpu = CpuSeconds() - cpu0;
  uint64_t events = 0, ops = 0, bytes = 0;
  for (const WindowReport& w : report->windows) {
    events += w.join.slices + 2 * w.join.flows + w.join.counters;
    ops += w.join.gpu_ops;
    bytes += std::filesystem::file_size(w.path);
  }
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  std::printf("windows %zu (%s), GPU ops %llu, trace events %llu, gzip %.1f MB\n", report->windows.size(),
              o.window.c_str(), static_cast<unsigned long long>(ops), static_cast<unsigned long long>(events),
              bytes / 1e6);
  std::printf("wall %.2f s, cpu %.2f s: %.2f M events/s wall, %.2f M events/s per cpu-second\n", wall, cpu,
              events / wall / 1e6, events / cpu / 1e6);
  std::printf("peak RSS %.0f MB, largest window's decoded rows %.0f MB\n", u.ru_maxrss / 1024.0,
              report->peak_table_bytes / 1e6);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "make") == 0) {
    return Make(argv[2], std::strtoull(Flag(argc, argv, "--kernels", "5000000"), nullptr, 10));
  }
  if (argc >= 4 && std::strcmp(argv[1], "build") == 0) return Build(argv[2], argv[3], argc, argv);
  std::fprintf(stderr,
               "usage: build_bench make CAPTURE [--kernels N]\n"
               "       build_bench build CAPTURE OUT.json.gz [--window SPEC] [--threads N] "
               "[--codec isal|libdeflate|zlib] [--level L]\n");
  return 2;
}
