#include "gpucap/tools/stats/timeline.h"

#include <algorithm>
#include <cstdint>

namespace gpucap::tools {

using builder::Category;
using builder::FlowKind;

void TimelineCollector::AddBusy(uint32_t device, uint32_t stream, const Spans& joined) {
  Spans& all = out_.busy[{device, stream}];
  all.insert(all.end(), joined.begin(), joined.end());
}

Status TimelineCollector::Begin(const builder::TraceHeader& h) {
  stream_of_.assign(h.tracks.size(), {kNoStream, 0});
  counter_of_.assign(h.tracks.size(), nullptr);
  work_of_.assign(h.tracks.size(), nullptr);
  for (const builder::Track& t : h.tracks) {
    const builder::Track& base = t.kind == builder::Track::Kind::kLane ? h.tracks[t.lane_of] : t;
    const builder::Process& p = h.processes[base.process];
    if (p.kind == builder::Process::Kind::kGpu && base.stream != builder::Track::kNoStream) {
      stream_of_[t.id] = {p.pid, base.stream};  // a stream's track or a graph's capture-stream lane
    }
    if (t.kind == builder::Track::Kind::kCounter) {
      CounterSeries& c = out_.counters[t.name];
      c.name = t.name;
      c.unit = t.unit;
      counter_of_[t.id] = &c;
    }
  }
  launches_.clear();
  ops_.clear();
  return Status::Ok();
}

Status TimelineCollector::AddSlice(const builder::Slice& s) {
  if (s.instant() || s.track >= stream_of_.size()) return Status::Ok();
  switch (s.category) {
    case Category::kCudaRuntime:
    case Category::kCudaDriver:
      for (const builder::FlowEnd& f : s.flows_out) {
        if (f.kind == FlowKind::kLaunch) launches_.push_back({f.id, s.ts_ns, s.ts_ns + s.dur_ns});
      }
      return Status::Ok();
    case Category::kKernel:
    case Category::kGpuMemcpy:
    case Category::kGpuMemset: {
      StreamKey stream = stream_of_[s.track];
      if (stream.first == kNoStream) return Status::Ok();
      StreamWork*& slot = work_of_[s.track];  // a map lookup per track, not per op
      if (slot == nullptr) slot = &out_.work[stream];
      StreamWork& w = *slot;
      int64_t& sum = s.category == Category::kKernel
                         ? (IsCommunicationKernel(s.name) ? w.communication_ns : w.compute_ns)
                         : (s.category == Category::kGpuMemcpy ? w.memcpy_ns : w.memset_ns);
      // Saturating: a capture's durations are its writer's word.
      if (__builtin_add_overflow(sum, s.dur_ns, &sum)) sum = s.dur_ns > 0 ? INT64_MAX : INT64_MIN;
      for (const builder::FlowEnd& f : s.flows_in) {
        if (f.kind == FlowKind::kLaunch) ops_.push_back({stream, s.ts_ns, f.id});
      }
      return Status::Ok();
    }
    default:
      return Status::Ok();
  }
}

Status TimelineCollector::AddCounter(const builder::CounterPoint& p) {
  if (p.track < counter_of_.size() && counter_of_[p.track] != nullptr) {
    counter_of_[p.track]->points.emplace_back(p.ts_ns, p.value);
  }
  return Status::Ok();
}

Status TimelineCollector::End() {
  // Millions of launches a window: a sorted vector, not a map.
  std::sort(launches_.begin(), launches_.end(), [](const Launch& a, const Launch& b) { return a.flow < b.flow; });
  LaunchDelays* d = nullptr;
  StreamKey last{kNoStream, 0};
  for (const Op& op : ops_) {
    auto it = std::lower_bound(launches_.begin(), launches_.end(), op.flow,
                               [](const Launch& l, uint64_t flow) { return l.flow < flow; });
    if (it == launches_.end() || it->flow != op.flow) continue;
    if (d == nullptr || op.stream != last) {
      d = &out_.delays[op.stream];
      last = op.stream;
    }
    d->launch_to_start.push_back(op.start_ns - it->start_ns);
    d->return_to_start.push_back(op.start_ns - it->end_ns);
  }
  launches_.clear();
  ops_.clear();
  return Status::Ok();
}

}  // namespace gpucap::tools
