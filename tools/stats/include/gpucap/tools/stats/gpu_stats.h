// GPU time tables in the spirit of `nsys stats`, gathered from the builder's
// joined windows: a StatsCollector is a TraceSink that tallies the slices a
// trace would show instead of writing them, so the numbers are those of the
// trace (names demangled, ops placed in windows as the builder places them,
// ranges attributed through launch- and capture-time annotations) and no
// join is written twice.
#ifndef GPUCAP_TOOLS_GPU_STATS_H_
#define GPUCAP_TOOLS_GPU_STATS_H_

#include <cstdint>
#include <map>
#include <string>
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

struct GpuStats {
  uint64_t windows = 0;
  int64_t window_ns = 0;  // the windows' lengths, summed
  std::map<std::string, Durations> kernels;
  std::map<std::string, CopyStats> copies;  // memcpy and memset, by Kineto's name
  std::map<std::string, Durations> apis;
  std::map<std::string, RangeStats> ranges;
  std::map<std::pair<uint32_t, uint32_t>, StreamStats> streams;  // (device, stream)
  uint64_t gpu_ops_without_launch = 0;
  std::vector<std::string> warnings;  // capture damage and what decoding skipped

  int64_t KernelNs() const;
  void Merge(const GpuStats& other);
};

class StatsCollector : public builder::TraceSink {
 public:
  explicit StatsCollector(GpuStats* out) : out_(*out) {}
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
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<int64_t, int64_t>>> spans_;
  std::vector<std::string_view> stack_;
};

// Joins every window `options` selects and tallies them together.
Result<GpuStats> CollectStats(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                              const builder::ProgressFn& progress);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_GPU_STATS_H_
