// GPU time tables in the spirit of `nsys stats`, gathered from the builder's
// joined windows: a StatsCollector is a TraceSink that tallies the slices a
// trace would show instead of writing them, so the numbers are those of the
// trace (names demangled, ops placed in windows as the builder places them,
// ranges attributed through launch- and capture-time annotations) and no
// join is written twice.
#ifndef GPUCAP_TOOLS_GPU_STATS_H_
#define GPUCAP_TOOLS_GPU_STATS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpucap/builder/builder.h"

namespace gpucap::tools {

// Durations of one kind of slice, in ns.
struct Durations {
  uint64_t count = 0;
  int64_t total = 0;
  int64_t min = 0;
  int64_t max = 0;
  std::vector<int64_t> samples;  // for the median

  void Add(int64_t ns);
  void Merge(const Durations& other);
  int64_t Mean() const { return count ? total / static_cast<int64_t>(count) : 0; }
  // The middle sample; the mean of the two middle ones for an even count.
  int64_t Median() const;
};

struct CopyStats {
  Durations time;
  uint64_t bytes = 0;
};

// What a range name accounts for: its own spans on CPU threads, and the GPU
// ops launched (or captured into a graph) while it was open.
struct RangeStats {
  Durations cpu;
  uint64_t gpu_ops = 0;
  int64_t gpu_ns = 0;
};

struct StreamStats {
  uint64_t ops = 0;
  int64_t busy_ns = 0;  // the union of its ops' spans
};

// Where one device's time went over the windows: each kind of op's time
// summed over its streams (concurrent streams can make these add up to
// more than the window), the time at least one op of the device ran, and
// the rest of the windows, idle. Communication is NCCL's kernels
// (IsCommunicationKernel); computation every other kernel.
struct DeviceStats {
  int64_t compute_ns = 0, communication_ns = 0, memcpy_ns = 0, memset_ns = 0;
  int64_t busy_ns = 0, idle_ns = 0;
};

// A kernel of a collective library: NCCL's (ncclKernel_*, ncclDevKernel_*).
bool IsCommunicationKernel(std::string_view name);

// Spans [start, end) in ns, sorted and joined where they touch or overlap.
using Spans = std::vector<std::pair<int64_t, int64_t>>;
void JoinSpans(Spans* spans);
int64_t SpansLength(const Spans& joined);

struct GpuStats {
  uint64_t windows = 0;
  int64_t window_ns = 0;  // the windows' lengths, summed
  std::map<std::string, Durations> kernels;
  std::map<std::string, CopyStats> copies;  // memcpy and memset, by Kineto's name
  std::map<std::string, Durations> apis;
  std::map<std::string, RangeStats> ranges;
  std::map<std::pair<uint32_t, uint32_t>, StreamStats> streams;  // (device, stream)
  std::map<uint32_t, DeviceStats> devices;  // every GPU of the windows, also one that ran nothing
  uint64_t gpu_ops_without_launch = 0;
  std::vector<std::string> warnings;  // capture damage and what decoding skipped

  int64_t KernelNs() const;
  void Merge(const GpuStats& other);
};

class StatsCollector : public builder::TraceSink {
 public:
  explicit StatsCollector(GpuStats* out) : out_(*out) {}
  // Called at each window's end with a stream's busy spans, joined: the
  // very spans its busy time is the length of (a report draws them).
  using StreamBusyFn = std::function<void(uint32_t device, uint32_t stream, const Spans& joined)>;
  void OnStreamBusy(StreamBusyFn fn) { on_stream_busy_ = std::move(fn); }
  Status Begin(const builder::TraceHeader& header) override;
  Status AddSlice(const builder::Slice& slice) override;
  Status AddCounter(const builder::CounterPoint&) override { return Status::Ok(); }
  Status End() override;

 private:
  struct TrackInfo {
    bool gpu_stream = false;  // a stream or one of its overflow lanes
    bool cpu = false;
    uint32_t device = 0, stream = 0;
  };
  GpuStats& out_;
  std::vector<TrackInfo> tracks_;
  // Per window: names by the join's name id (hashing a demangled name per
  // op costs more than the rest), and each stream's op spans.
  std::vector<Durations*> kernel_by_id_, api_by_id_;
  std::map<std::pair<uint32_t, uint32_t>, Spans> spans_;
  int64_t window_ns_ = 0;
  std::vector<uint32_t> devices_;  // the window's GPUs
  StreamBusyFn on_stream_busy_;
  std::vector<std::string_view> stack_;
};

// Joins every window `options` selects and tallies them together.
Result<GpuStats> CollectStats(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                              const builder::ProgressFn& progress);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_GPU_STATS_H_
