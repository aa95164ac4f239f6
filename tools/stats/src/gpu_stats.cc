#include "gpucap/tools/stats/gpu_stats.h"
#include "gpucap/builder/trace_keys.h"

#include <algorithm>

namespace gpucap::tools {
namespace {

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

}  // namespace

using builder::Category;

void Durations::Add(int64_t ns) {
  if (count == 0 || ns < min) min = ns;
  if (count == 0 || ns > max) max = ns;
  count++;
  total += ns;
  samples.push_back(ns);
}

void Durations::Merge(const Durations& o) {
  if (o.count == 0) return;
  if (count == 0 || o.min < min) min = o.min;
  if (count == 0 || o.max > max) max = o.max;
  count += o.count;
  total += o.total;
  samples.insert(samples.end(), o.samples.begin(), o.samples.end());
}

int64_t Durations::Median() const {
  if (samples.empty()) return 0;
  std::vector<int64_t> s = samples;
  size_t mid = s.size() / 2;
  std::nth_element(s.begin(), s.begin() + mid, s.end());
  int64_t hi = s[mid];
  if (s.size() % 2 == 1) return hi;
  int64_t lo = *std::max_element(s.begin(), s.begin() + mid);
  return lo + (hi - lo) / 2;
}

bool IsCommunicationKernel(std::string_view name) { return name.starts_with("nccl"); }

void JoinSpans(Spans* spans) {
  std::sort(spans->begin(), spans->end());
  size_t out = 0;
  for (const auto& s : *spans) {
    if (s.second <= s.first) continue;
    if (out > 0 && s.first <= (*spans)[out - 1].second) {
      (*spans)[out - 1].second = std::max((*spans)[out - 1].second, s.second);
    } else {
      (*spans)[out++] = s;
    }
  }
  spans->resize(out);
}

int64_t SpansLength(const Spans& joined) {
  int64_t n = 0;
  for (const auto& [a, b] : joined) n += b - a;
  return n;
}

int64_t GpuStats::KernelNs() const {
  int64_t total = 0;
  for (const auto& [name, d] : kernels) total += d.total;
  return total;
}

void GpuStats::Merge(const GpuStats& o) {
  windows += o.windows;
  window_ns += o.window_ns;
  for (const auto& [k, v] : o.kernels) kernels[k].Merge(v);
  for (const auto& [k, v] : o.apis) apis[k].Merge(v);
  for (const auto& [k, v] : o.copies) {
    copies[k].time.Merge(v.time);
    copies[k].bytes = SaturatingAdd(copies[k].bytes, v.bytes);
  }
  for (const auto& [k, v] : o.ranges) {
    RangeStats& r = ranges[k];
    r.cpu.Merge(v.cpu);
    r.gpu_ops += v.gpu_ops;
    r.gpu_ns += v.gpu_ns;
  }
  for (const auto& [k, v] : o.streams) {
    streams[k].ops += v.ops;
    streams[k].busy_ns += v.busy_ns;
  }
  for (const auto& [k, v] : o.devices) {
    DeviceStats& d = devices[k];
    d.compute_ns += v.compute_ns;
    d.communication_ns += v.communication_ns;
    d.memcpy_ns += v.memcpy_ns;
    d.memset_ns += v.memset_ns;
    d.busy_ns += v.busy_ns;
    d.idle_ns += v.idle_ns;
  }
  gpu_ops_without_launch += o.gpu_ops_without_launch;
  warnings.insert(warnings.end(), o.warnings.begin(), o.warnings.end());
}

Status StatsCollector::Begin(const builder::TraceHeader& h) {
  out_.windows++;
  window_ns_ = h.window_end_ns - h.window_start_ns;
  out_.window_ns += window_ns_;
  for (const builder::Process& p : h.processes) {
    if (p.kind == builder::Process::Kind::kGpu) devices_.push_back(p.pid);
  }
  for (const auto& [name, n] : h.counts) {
    if (name == "gpu ops without launch record") out_.gpu_ops_without_launch += n;
  }
  std::sort(devices_.begin(), devices_.end());
  devices_.erase(std::unique(devices_.begin(), devices_.end()), devices_.end());
  tracks_.assign(h.tracks.size(), TrackInfo{});
  for (const builder::Track& t : h.tracks) {
    const builder::Track& base = t.kind == builder::Track::Kind::kLane ? h.tracks[t.lane_of] : t;
    const builder::Process& p = h.processes[base.process];
    TrackInfo& info = tracks_[t.id];
    info.cpu = p.kind == builder::Process::Kind::kCpu;
    // A stream's track, or a graph's capture-stream lane: graph replays are
    // counted on the stream they were captured on, as the trace draws them.
    info.gpu_stream = p.kind == builder::Process::Kind::kGpu && base.stream != builder::Track::kNoStream;
    info.device = p.pid;
    info.stream = base.stream;
  }
  kernel_by_id_.clear();
  api_by_id_.clear();
  spans_.clear();
  return Status::Ok();
}

namespace {

Durations* Lookup(std::map<std::string, Durations>* table, std::vector<Durations*>* by_id,
                  const builder::Slice& s) {
  if (s.name_id == 0) return &(*table)[std::string(s.name)];
  if (s.name_id >= by_id->size()) by_id->resize(s.name_id + 1, nullptr);
  Durations*& d = (*by_id)[s.name_id];
  if (d == nullptr) d = &(*table)[std::string(s.name)];
  return d;
}

}  // namespace

Status StatsCollector::AddSlice(const builder::Slice& s) {
  if (s.instant() || s.track >= tracks_.size()) return Status::Ok();
  const TrackInfo& track = tracks_[s.track];
  bool gpu_op = false;
  switch (s.category) {
    case Category::kKernel: {
      Lookup(&out_.kernels, &kernel_by_id_, s)->Add(s.dur_ns);
      gpu_op = true;
      if (track.gpu_stream) {
        DeviceStats& d = out_.devices[track.device];
        (IsCommunicationKernel(s.name) ? d.communication_ns : d.compute_ns) += s.dur_ns;
      }
      break;
    }
    case Category::kGpuMemcpy:
    case Category::kGpuMemset: {
      CopyStats& c = out_.copies[std::string(s.name)];
      c.time.Add(s.dur_ns);
      for (const builder::Arg& a : s.args) {
        // Saturating: a hostile capture's byte counts may add past 2^64.
        if (a.key == builder::trace_keys::kBytes && a.type == builder::Arg::Type::kUint) {
          c.bytes = SaturatingAdd(c.bytes, a.u());
        }
      }
      gpu_op = true;
      if (track.gpu_stream) {
        DeviceStats& d = out_.devices[track.device];
        (s.category == Category::kGpuMemcpy ? d.memcpy_ns : d.memset_ns) += s.dur_ns;
      }
      break;
    }
    case Category::kCudaRuntime:
    case Category::kCudaDriver:
      Lookup(&out_.apis, &api_by_id_, s)->Add(s.dur_ns);
      break;
    case Category::kUserAnnotation:
    case Category::kCpuOp:  // a PyTorch operator, by its name without emit_nvtx's suffix
      if (track.cpu) out_.ranges[std::string(s.name)].cpu.Add(s.dur_ns);
      break;
    default:
      break;
  }
  if (!gpu_op) return Status::Ok();
  if (track.gpu_stream) {
    out_.streams[{track.device, track.stream}].ops++;
    spans_[{track.device, track.stream}].emplace_back(s.ts_ns, s.ts_ns + s.dur_ns);
  }
  for (const builder::Arg& a : s.args) {
    if (a.key != builder::trace_keys::kAnnotationStack || a.type != builder::Arg::Type::kStrings) continue;
    // A range nested in one of the same name holds the op once.
    stack_.assign(a.strings().begin(), a.strings().end());
    std::sort(stack_.begin(), stack_.end());
    stack_.erase(std::unique(stack_.begin(), stack_.end()), stack_.end());
    for (std::string_view name : stack_) {
      RangeStats& r = out_.ranges[std::string(name)];
      r.gpu_ops++;
      r.gpu_ns += s.dur_ns;
    }
  }
  return Status::Ok();
}

Status StatsCollector::End() {
  std::map<uint32_t, Spans> by_device;
  for (auto& [stream, spans] : spans_) {
    Spans& device = by_device[stream.first];
    device.insert(device.end(), spans.begin(), spans.end());
    JoinSpans(&spans);
    out_.streams[stream].busy_ns += SpansLength(spans);
    if (on_stream_busy_) on_stream_busy_(stream.first, stream.second, spans);
  }
  for (auto& [device, spans] : by_device) devices_.push_back(device);
  std::sort(devices_.begin(), devices_.end());
  devices_.erase(std::unique(devices_.begin(), devices_.end()), devices_.end());
  for (uint32_t device : devices_) {
    DeviceStats& d = out_.devices[device];
    auto it = by_device.find(device);
    int64_t busy = 0;
    if (it != by_device.end()) {
      JoinSpans(&it->second);
      busy = SpansLength(it->second);
    }
    d.busy_ns += busy;
    // Ops run past the window's end when launched near it; the window
    // itself is never less than idle.
    d.idle_ns += std::max<int64_t>(0, window_ns_ - busy);
  }
  devices_.clear();
  spans_.clear();
  return Status::Ok();
}

Result<GpuStats> CollectStats(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                              const builder::ProgressFn& progress) {
  builder::Builder builder(index, options);
  auto windows = builder.MatchedWindows();
  if (!windows.ok()) return windows.status();
  GpuStats stats;
  stats.warnings = index.capture().report.Describe(index.path());
  StatsCollector collector(&stats);
  for (size_t i = 0; i < windows->size(); ++i) {
    const builder::Window& w = (*windows)[i];
    if (progress) progress(w.label.empty() ? "window" : "window " + w.label, i + 1, windows->size());
    builder::WindowReport report;
    GPUCAP_RETURN_IF_ERROR(builder.BuildWindow(w, &collector, &report));
  }
  for (const std::string& line : index.decoder().Describe(builder.decode_stats())) stats.warnings.push_back(line);
  return stats;
}

}  // namespace gpucap::tools
