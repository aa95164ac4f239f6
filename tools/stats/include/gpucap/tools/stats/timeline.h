// What happened when, beside the tallies of gpu_stats.h: each stream's busy
// spans (the ones its busy time is the length of), how long each GPU op
// waited after its launch, and counter samples. A report draws these; a
// TimelineCollector gathers them from the same joined windows, in the same
// pass, as a StatsCollector (CollectWindowStats in window_stats.h).
#ifndef GPUCAP_TOOLS_TIMELINE_H_
#define GPUCAP_TOOLS_TIMELINE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpucap/builder/trace_model.h"
#include "gpucap/tools/stats/gpu_stats.h"

namespace gpucap::tools {

using StreamKey = std::pair<uint32_t, uint32_t>;  // (device, stream)

struct LaunchDelays {
  // Per GPU op with a launch record, in ns: from the launching call's start
  // to the op's start, and from the call's return to the op's start (nsys's
  // "Q" in cuda_kern_exec_sum: the time it sat queued behind earlier work).
  std::vector<int64_t> launch_to_start, return_to_start;
};

struct CounterSeries {
  std::string name, unit;
  std::vector<std::pair<int64_t, double>> points;  // realtime ns, value
};

// What ran on a stream, by kind, in ns of op time: what the stream is for
// (a report names it compute, NCCL or copy by these).
struct StreamWork {
  int64_t compute_ns = 0, communication_ns = 0, memcpy_ns = 0, memset_ns = 0;
};

struct Timeline {
  std::map<StreamKey, Spans> busy;  // joined per window, windows in order
  std::map<StreamKey, StreamWork> work;
  std::map<StreamKey, LaunchDelays> delays;
  std::map<std::string, CounterSeries> counters;  // by track name
};

class TimelineCollector : public builder::TraceSink {
 public:
  explicit TimelineCollector(Timeline* out) : out_(*out) {}
  // For StatsCollector::OnStreamBusy.
  void AddBusy(uint32_t device, uint32_t stream, const Spans& joined);

  Status Begin(const builder::TraceHeader& header) override;
  Status AddSlice(const builder::Slice& slice) override;
  Status AddCounter(const builder::CounterPoint& point) override;
  Status End() override;

 private:
  struct Op {
    StreamKey stream;
    int64_t start_ns;
    uint64_t flow;
  };
  Timeline& out_;
  static constexpr uint32_t kNoStream = UINT32_MAX;
  std::vector<StreamKey> stream_of_;         // by track; device kNoStream: no GPU stream
  std::vector<CounterSeries*> counter_of_;   // by track; null: no counter
  std::vector<StreamWork*> work_of_;         // by track; null: none yet
  // The window's launches by flow id (start, end) and its ops, matched at
  // its end: the join does not promise which of the two comes first.
  struct Launch {
    uint64_t flow;
    int64_t start_ns, end_ns;
  };
  std::vector<Launch> launches_;  // sorted by flow at the window's end
  std::vector<Op> ops_;
};

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_TIMELINE_H_
