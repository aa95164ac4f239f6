// Builder throughput: events/s and peak RSS building gzipped Chrome JSON or
// Perfetto pftrace (by the output's name) from a large synthetic capture (N
// kernels, each with its cudaLaunchKernel record, under NVTX step ranges;
// with --ops-per-kernel N each launch runs inside N nested operator ranges
// named as torch.autograd.profiler.emit_nvtx names them, as an emit_nvtx job
// records about eight operators per kernel).
// Two steps, so the capture's making does not count toward the build's
// memory:
//
//   build_bench make CAPTURE [--kernels N] [--ops-per-kernel N]
//   build_bench build CAPTURE OUT.json.gz|OUT.pftrace.gz [--window SPEC] [--threads N]
//               [--codec isal|libdeflate|zlib] [--level L]
//
// And a renderer alone: the first window's event stream, recorded once from
// the join, rendered again and again into memory (no decode, no join, no
// gzip unless asked):
//
//   build_bench render CAPTURE [--window SPEC] [--format chrome|pftrace] [--repeat N] [--gzip L]
//
// And a synthetic job of N ranks, one capture each plus job.json, its truth
// (builder/testing/synthetic_job.h has the files' contract and the model:
// clocks of 8-rank hosts offset and drifting, collectives that end together,
// a slow rank, a straggling step):
//
//   build_bench job DIR --ranks N [--steps S] [--seed X] [--ranks-per-host N]
//               [--kernels-per-step K] [--collectives-per-step C] [--first-step N]
//               [--slow-rank R] [--slow-factor F] [--straggling-step N]
//               [--straggling-rank R] [--stall-ns N] [--end-jitter-ns N]
//
// See bench/README.md ("builder") for figures.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unordered_set>
#include <vector>

#include "gpucap/builder/builder.h"
#include "synthetic_capture.h"
#include "synthetic_job.h"

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

// The synthetic capture is written by this program: a failure is a bug here.
void Must(const Status& st) {
  if (st.ok()) return;
  std::fprintf(stderr, "build_bench: %s\n", st.message().c_str());
  std::exit(1);
}

int Make(const std::string& path, uint64_t kernels, uint64_t ops_per_kernel) {
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
  Must(s.Message(clock));
  const int kNames = 64;
  for (int i = 0; i < kNames; ++i) {
    Must(s.String(0x10000 + i * 64, "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi" +
                                        std::to_string(i) + "EEEEEviT0_T1_"));
  }
  const uint32_t tid = 4243;
  const uint64_t op_gap = 20;             // between an operator range's push (pop) and the next
  const uint64_t spacing = 2000 + 2 * op_gap * ops_per_kernel;  // a launch every 2 us: 5M kernels = 10 s
  const uint64_t lead = op_gap * ops_per_kernel;  // the operator pushes before a launch
  const uint64_t per_step = 10000;        // kernels per ProfilerStep
  const uint64_t per_chunk = 16384;       // ~4 MB CUPTI buffers
  uint64_t step = 0;
  for (uint64_t i = 0; i < kernels; ++i) {
    uint64_t t = kT0 + 1000 + i * spacing;
    if (i % per_step == 0) {
      if (i) Must(s.Pop(tid, t - lead - 100));
      Must(s.Push(tid, t - lead - 50, "ProfilerStep#" + std::to_string(step++)));
    }
    for (uint64_t j = 0; j < ops_per_kernel; ++j) {
      Must(s.Push(tid, t - op_gap * (ops_per_kernel - j),
                  "aten::op" + std::to_string(j) + ", seq = " + std::to_string(i) + ", op_id = " +
                      std::to_string(i * ops_per_kernel + j) + ", sizes = [[" + std::to_string(64 << (j % 4)) +
                      ", 1024], [1024], []]"));
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
    for (uint64_t j = 0; j < ops_per_kernel; ++j) Must(s.Pop(tid, t + 1500 + op_gap * (j + 1)));
    if (s.pending_records() >= 2 * per_chunk) {
      Status st = s.EndChunk();
      if (!st.ok()) {
        std::fprintf(stderr, "%s\n", st.message().c_str());
        return 1;
      }
    }
  }
  Must(s.Pop(tid, kT0 + 1000 + kernels * spacing + 100'000));
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
  int64_t epoch_ns = BuildClockNs();
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
  o.output_options.gzip_level = std::atoi(Flag(argc, argv, "--level", "-1"));
  auto codec = ParseGzipCodec(Flag(argc, argv, "--codec", "default"));
  if (!codec.ok()) {
    std::fprintf(stderr, "%s\n", codec.status().message().c_str());
    return 2;
  }
  o.output_options.codec = *codec;
  const char* times = std::getenv(kBuildTimesEnv);  // when each phase ran (build_times.h)
  o.phase_times = times != nullptr && std::string_view(times) == "1";
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
  if (o.phase_times) {
    for (const std::string& line : DescribeBuildTimes(*report, epoch_ns)) std::fprintf(stderr, "%s\n", line.c_str());
  }
  return 0;
}

// A window's event stream held in memory, with copies of everything the
// sink's string_views and spans point at, to be replayed into renderers.
// Arguments, arrays and flows lie in contiguous arrays in stream order, as
// a join's scratch would be warm in cache: the replay measures the
// renderer, not cache misses of its own.
class Recording : public TraceSink {
 public:
  Status Begin(const TraceHeader& h) override {
    header_ = h;
    return Status::Ok();
  }
  Status AddSlice(const Slice& s) override {
    Stored x;
    x.slice = s;
    x.slice.name = Keep(s.name);
    x.args = args_.size();
    x.nargs = s.args.size();
    for (const Arg& a : s.args) {
      Arg b = a;
      std::string_view key = Keep(a.key);
      switch (a.type) {
        case Arg::Type::kString: b = Arg::String(key, Keep(a.s())); break;
        case Arg::Type::kJson: b = Arg::Json(key, Keep(a.s())); break;
        case Arg::Type::kInts:
          fixups_.push_back({args_.size(), ints_.size(), a.ints().size(), false});
          ints_.insert(ints_.end(), a.ints().begin(), a.ints().end());
          b = Arg::Ints(key, {});
          break;
        case Arg::Type::kStrings:
          fixups_.push_back({args_.size(), lists_.size(), a.strings().size(), true});
          for (std::string_view t : a.strings()) lists_.push_back(Keep(t));
          b = Arg::Strings(key, {});
          break;
        case Arg::Type::kInt: b = Arg::Int(key, a.i()); break;
        case Arg::Type::kUint: b = Arg::Uint(key, a.u()); break;
        case Arg::Type::kDouble: b = Arg::Double(key, a.d()); break;
        case Arg::Type::kFloat6: b = Arg::Float6(key, a.d()); break;
      }
      args_.push_back(a.foreign_key ? b.Foreign() : b);
    }
    x.flows = flows_.size();
    x.out = s.flows_out.size();
    x.in = s.flows_in.size();
    flows_.insert(flows_.end(), s.flows_out.begin(), s.flows_out.end());
    flows_.insert(flows_.end(), s.flows_in.begin(), s.flows_in.end());
    slices_.push_back(x);
    events_ += 1 + x.out + x.in;
    return Status::Ok();
  }
  Status AddCounter(const CounterPoint& c) override {
    counters_.push_back(c);
    events_++;
    return Status::Ok();
  }
  // The arrays are complete: point array arguments into them.
  Status End() override {
    for (const Fixup& f : fixups_) {
      Arg& a = args_[f.arg];
      bool foreign = a.foreign_key;
      a = f.strings ? Arg::Strings(a.key, std::span(lists_).subspan(f.at, f.n))
                    : Arg::Ints(a.key, std::span(ints_).subspan(f.at, f.n));
      if (foreign) a = a.Foreign();
    }
    return Status::Ok();
  }

  Status ReplayInto(TraceSink* sink) const {
    GPUCAP_RETURN_IF_ERROR(sink->Begin(header_));
    for (const Stored& x : slices_) {
      Slice s = x.slice;
      s.args = std::span(args_).subspan(x.args, x.nargs);
      s.flows_out = std::span(flows_).subspan(x.flows, x.out);
      s.flows_in = std::span(flows_).subspan(x.flows + x.out, x.in);
      GPUCAP_RETURN_IF_ERROR(sink->AddSlice(s));
    }
    for (const CounterPoint& c : counters_) GPUCAP_RETURN_IF_ERROR(sink->AddCounter(c));
    return sink->End();
  }
  uint64_t events() const { return events_; }

 private:
  struct Stored {
    Slice slice;
    size_t args, nargs, flows, out, in;
  };
  struct Fixup {
    size_t arg, at, n;
    bool strings;
  };
  // Equal strings kept once, as the join hands out names and keys from
  // one place each (renderers cache by address).
  std::string_view Keep(std::string_view s) { return *strings_.emplace(s).first; }

  TraceHeader header_;
  std::vector<Stored> slices_;
  std::vector<Arg> args_;
  std::vector<int64_t> ints_;
  std::vector<std::string_view> lists_;
  std::vector<Fixup> fixups_;
  std::vector<FlowEnd> flows_;
  std::vector<CounterPoint> counters_;
  std::unordered_set<std::string> strings_;
  uint64_t events_ = 0;
};

// Counts bytes and drops them.
class CountingSink : public ByteSink {
 public:
  explicit CountingSink(uint64_t* bytes) : bytes_(bytes) {}
  Status Append(std::string_view b) override {
    *bytes_ += b.size();
    return Status::Ok();
  }
  Status Close() override { return Status::Ok(); }

 private:
  uint64_t* bytes_;
};

int Render(const std::string& capture, int argc, char** argv) {
  auto index = CaptureIndex::Open(capture);
  if (!index.ok()) {
    std::fprintf(stderr, "%s\n", index.status().message().c_str());
    return 1;
  }
  BuildOptions o;
  o.window = Flag(argc, argv, "--window", "every:100ms");
  Builder builder(**index, o);
  auto windows = builder.Windows();
  if (!windows.ok() || windows->empty()) {
    std::fprintf(stderr, "no window\n");
    return 1;
  }
  Recording rec;
  WindowReport report;
  Status st = builder.BuildWindow((*windows)[0], &rec, &report);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  auto format = ParseOutputFormat(Flag(argc, argv, "--format", "pftrace"));
  if (!format.ok()) {
    std::fprintf(stderr, "%s\n", format.status().message().c_str());
    return 1;
  }
  int repeat = std::atoi(Flag(argc, argv, "--repeat", "5"));
  int gzip = std::atoi(Flag(argc, argv, "--gzip", "0"));
  uint64_t bytes = 0;
  double cpu0 = CpuSeconds();
  auto wall0 = std::chrono::steady_clock::now();
  for (int i = 0; i < repeat; ++i) {
    std::unique_ptr<ByteSink> out = std::make_unique<CountingSink>(&bytes);
    if (gzip > 0) {
      OutputOptions g;  // the default codec at its default level
      g.threads = 1;
      out = NewGzipSink(std::move(out), g);
    }
    std::unique_ptr<TraceSink> sink = MakeRenderer(*format, std::move(out));
    st = rec.ReplayInto(sink.get());
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      return 1;
    }
  }
  double cpu = CpuSeconds() - cpu0;
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  double events = static_cast<double>(rec.events()) * repeat;
  std::printf("window 0 of %s: %llu events, rendered %d times: %.1f bytes/event%s\n", o.window.c_str(),
              static_cast<unsigned long long>(rec.events()), repeat, bytes / events, gzip ? " (gzipped)" : "");
  std::printf("cpu %.2f s, wall %.2f s: %.2f M events/s per cpu-second\n", cpu, wall, events / cpu / 1e6);
  return 0;
}

bool HasFlag(int argc, char** argv, const char* name) { return Flag(argc, argv, name, nullptr) != nullptr; }

uint64_t UintFlag(int argc, char** argv, const char* name, uint64_t fallback) {
  const char* v = Flag(argc, argv, name, nullptr);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

int Job(const std::string& dir, int argc, char** argv) {
  testing::JobSpec spec;
  spec.ranks = static_cast<uint32_t>(UintFlag(argc, argv, "--ranks", spec.ranks));
  spec.steps = static_cast<uint32_t>(UintFlag(argc, argv, "--steps", spec.steps));
  spec.seed = UintFlag(argc, argv, "--seed", spec.seed);
  spec.ranks_per_host = static_cast<uint32_t>(UintFlag(argc, argv, "--ranks-per-host", spec.ranks_per_host));
  spec.kernels_per_step = static_cast<uint32_t>(UintFlag(argc, argv, "--kernels-per-step", spec.kernels_per_step));
  spec.collectives_per_step =
      static_cast<uint32_t>(UintFlag(argc, argv, "--collectives-per-step", spec.collectives_per_step));
  spec.first_step = static_cast<int64_t>(UintFlag(argc, argv, "--first-step", 0));
  spec.slow_factor = std::strtod(Flag(argc, argv, "--slow-factor", "1.3"), nullptr);
  spec.end_jitter_ns = static_cast<int64_t>(UintFlag(argc, argv, "--end-jitter-ns", spec.end_jitter_ns));
  if (HasFlag(argc, argv, "--slow-rank")) spec.slow_rank = static_cast<uint32_t>(UintFlag(argc, argv, "--slow-rank", 0));
  if (HasFlag(argc, argv, "--straggling-rank")) {
    spec.straggling_rank = static_cast<uint32_t>(UintFlag(argc, argv, "--straggling-rank", 0));
  }
  if (HasFlag(argc, argv, "--straggling-step")) {
    spec.straggling_step = static_cast<int64_t>(UintFlag(argc, argv, "--straggling-step", 0));
  }
  if (HasFlag(argc, argv, "--stall-ns")) spec.stall_ns = static_cast<int64_t>(UintFlag(argc, argv, "--stall-ns", 0));
  auto wall0 = std::chrono::steady_clock::now();
  double cpu0 = CpuSeconds();
  Status st = testing::MakeSyntheticJob(dir, spec);
  if (!st.ok()) {
    std::fprintf(stderr, "build_bench: %s\n", st.message().c_str());
    return 1;
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  double cpu = CpuSeconds() - cpu0;
  uint64_t bytes = 0;
  for (uint32_t r = 0; r < spec.ranks; ++r) {
    bytes += std::filesystem::file_size(std::filesystem::path(dir) / testing::RankFileName(r));
  }
  std::printf("wrote %s: %u ranks, %.1f MB of captures (%.0f KB a rank) and job.json\n", dir.c_str(), spec.ranks,
              bytes / 1e6, bytes / 1e3 / spec.ranks);
  std::printf("wall %.2f s, cpu %.2f s\n", wall, cpu);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "make") == 0) {
    return Make(argv[2], std::strtoull(Flag(argc, argv, "--kernels", "5000000"), nullptr, 10),
                std::strtoull(Flag(argc, argv, "--ops-per-kernel", "0"), nullptr, 10));
  }
  if (argc >= 4 && std::strcmp(argv[1], "build") == 0) return Build(argv[2], argv[3], argc, argv);
  if (argc >= 3 && std::strcmp(argv[1], "render") == 0) return Render(argv[2], argc, argv);
  if (argc >= 3 && std::strcmp(argv[1], "job") == 0) return Job(argv[2], argc, argv);
  std::fprintf(stderr,
               "usage: build_bench make CAPTURE [--kernels N] [--ops-per-kernel N]\n"
               "       build_bench build CAPTURE OUT.json.gz|OUT.pftrace.gz [--window SPEC] [--threads N] "
               "[--codec isal|libdeflate|zlib] [--level L]\n"
               "       build_bench render CAPTURE [--window SPEC] [--format chrome|pftrace] [--repeat N] [--gzip L]\n"
               "       build_bench job DIR --ranks N [--steps S] [--seed X] [--ranks-per-host N] [--kernels-per-step K]\n"
               "                   [--collectives-per-step C] [--first-step N] [--slow-rank R] [--slow-factor F]\n"
               "                   [--straggling-step N] [--straggling-rank R] [--stall-ns N] [--end-jitter-ns N]\n");
  return 2;
}
