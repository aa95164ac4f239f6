// What a window draws: one ref per slice (ops, API calls, annotation spans,
// ranges, marks, CUPTI markers, overheads, CUDA events) and the counters.
#include "window_join.h"

namespace gpucap::builder::join_internal {

namespace {
// Down to a whole microsecond (the header's base time is a whole second).
int64_t FloorMicros(int64_t ns) { return ns >= 0 ? ns / 1000 * 1000 : -((999 - ns) / 1000 * 1000); }
}  // namespace

void WindowJoin::AddSlice(int64_t ts, int64_t dur, uint32_t track, uint32_t index, RefKind kind,
                          uint8_t depth, uint32_t tie) {
  if (options_.whole_microseconds) {
    // Start and end each floored: nesting and order are kept.
    int64_t start = FloorMicros(ts);
    if (dur >= 0) dur = FloorMicros(ts + dur) - start;
    ts = start;
  }
  r_.refs.push_back(SliceRef{ts, dur, track, index, kind, depth, tie});
}

// Refs are reserved up front, to a bound rather than by doubling: a window
// of millions of slices overshooting its reserve by a few ranges would
// double a vector of 32-byte refs (the 20M-event bench window: 320 MB more,
// and both copies held while it moves).
size_t WindowJoin::SliceBound() const {
  size_t n = r_.ops.size() + r_.spans.size();
  for (const ApiRef& a : r_.apis) n += a.in_window ? 1 : 0;
  const std::vector<Range>& ranges = idx_.ranges().ranges();
  auto by_start = [](const Range& r, uint64_t t) { return r.start_ns < t; };
  n += std::lower_bound(ranges.begin(), ranges.end(), w_.end_ns, by_start) -
       std::lower_bound(ranges.begin(), ranges.end(), w_.start_ns, by_start);
  n += idx_.ranges().marks().size() + idx_.graphs().host_node_runs().size();
  for (const ActivityTables* p : parts_) {
    n += p->overheads.size() + 2 * p->cuda_events.size() + p->markers.size();  // events: as themselves and as graph records
  }
  return n;
}

void WindowJoin::CollectRefs() {
  r_.refs.reserve(SliceBound());
  for (uint32_t i = 0; i < r_.ops.size(); ++i) {
    const Op& op = r_.ops[i];
    int64_t ts = r_.Real(op.start);
    OpTrackKey key = r_.TrackKeyOf(op);
    if (op.origin != nullptr && op.origin->capture_stream != format::kNoCaptureStream) {
      stats_.graph_ops_with_capture_stream++;
      if (key.capture_lane) stats_.graph_ops_on_capture_lanes++;
    }
    AddSlice(ts, std::max<int64_t>(r_.Real(op.end) - ts, 0), TrackOf(key), i, RefKind::kOp, 0, op.correlation);
  }
  for (uint32_t i = 0; i < r_.apis.size(); ++i) {
    const ApiRef& a = r_.apis[i];
    if (!a.in_window) continue;
    const ApiTable& t = Part(parts_, a.part).apis;
    stats_.api_calls++;
    uint32_t pid = t.pid[a.row] != 0 ? t.pid[a.row] : idx_.pid();
    int64_t ts = r_.Real(t.start[a.row]);
    int64_t dur = t.end[a.row] >= t.start[a.row] ? r_.Real(t.end[a.row]) - ts : 0;
    // A driver call made inside a runtime call nests inside it.
    AddSlice(ts, std::max<int64_t>(dur, 0), r_.tracks.ThreadTrack(pid, t.tid[a.row]), i, RefKind::kApi,
             t.domain[a.row] == ApiDomain::kDriver ? 1 : 0, t.correlation[a.row]);
  }
  for (uint32_t i = 0; i < r_.spans.size(); ++i) {
    const AnnotationSpan& s = r_.spans[i];
    int64_t ts = r_.Real(s.start);
    AddSlice(ts, r_.Real(s.end) - ts, TrackOf({s.device, s.stream, s.capture_lane}), i, RefKind::kAnnotationSpan,
             s.depth, s.range);
  }
  // Ranges starting in the window: push/pop on their thread, start/end (which
  // need not nest) on a track of their own.
  const std::vector<Range>& ranges = idx_.ranges().ranges();
  auto first = std::lower_bound(ranges.begin(), ranges.end(), w_.start_ns,
                                [](const Range& r, uint64_t t) { return r.start_ns < t; });
  uint32_t pid = idx_.pid();
  uint32_t start_end_track = kNone;
  for (auto it = first; it != ranges.end() && it->start_ns < w_.end_ns; ++it) {
    uint32_t i = static_cast<uint32_t>(it - ranges.begin());
    uint32_t track;
    if (it->push_pop) {
      track = r_.tracks.ThreadTrack(pid, it->os_tid);
    } else {
      if (start_end_track == kNone) {
        start_end_track = r_.tracks.SyntheticTrack(r_.tracks.CpuProcess(pid), "NVTX start/end ranges", 0x7ffffff0);
      }
      track = start_end_track;
    }
    int64_t ts = r_.Real(it->start_ns);
    AddSlice(ts, r_.Real(it->end_ns) - ts, track, i, RefKind::kRange, 0, i);
    stats_.ranges++;
    uint32_t backward = r_.operators.BackwardOf(i);
    if (backward != TorchOperators::kNone && r_.DrawsRange(backward)) stats_.flows++;
    if (use_ != nullptr) {
      use_->ranges.push_back(i);
      use_->Time(it->end_ns);
    }
  }
  const auto& events = idx_.capture().ranges;
  for (uint32_t e : idx_.ranges().marks()) {
    const format::RangeEvent& m = events[e];
    if (!w_.Contains(m.timestamp_ns)) continue;
    AddSlice(r_.Real(m.timestamp_ns), -1, r_.tracks.ThreadTrack(pid, m.os_tid), e, RefKind::kMark, 0, e);
    if (use_ != nullptr) use_->range_events.push_back(e);
  }
  CollectDeviceRefs();
  CollectHostNodes();
  CollectGraphEventRecords();
  stats_.counters = r_.counters.size();
}

// CUPTI's overheads and CUDA event records in the window, and its counters:
// environment readings and the recorder's own samples (NVML).
void WindowJoin::CollectDeviceRefs() {
  for (uint16_t pi = 0; pi < parts_.size(); ++pi) {
    const OverheadTable& o = parts_[pi]->overheads;
    for (uint32_t r = 0; r < o.size(); ++r) {
      if (!w_.Contains(o.start[r])) continue;
      int64_t ts = r_.Real(o.start[r]);
      r_.row_refs.push_back({pi, r});
      if (use_ != nullptr) use_->Use(pi, kOverheads, r);
      AddSlice(ts, std::max<int64_t>(r_.Real(o.end[r]) - ts, 0), r_.tracks.OverheadTrack(),
               static_cast<uint32_t>(r_.row_refs.size() - 1), RefKind::kOverhead, 0, o.overhead_kind[r]);
    }
    const CudaEventTable& ev = parts_[pi]->cuda_events;
    for (uint32_t r = 0; r < ev.size(); ++r) {
      uint64_t t = ev.device_timestamp[r];
      if (t == 0 || !w_.Contains(t)) continue;
      uint32_t device = ev.device[r] != 0 ? ev.device[r] : r_.DeviceOfContext(ev.context[r]);
      r_.row_refs.push_back({pi, r});
      if (use_ != nullptr) {
        use_->Use(pi, kCudaEvents, r);
        if (ev.device[r] == 0) UseContextOwner(ev.context[r]);
      }
      // 1 ns, as Kineto draws it, so that readers see it.
      AddSlice(r_.Real(t), 1, r_.tracks.StreamTrack(device, ev.stream[r]),
               static_cast<uint32_t>(r_.row_refs.size() - 1), RefKind::kCudaEvent, 0, ev.correlation[r]);
    }
    const EnvironmentTable& env = parts_[pi]->environment;
    for (uint32_t r = 0; r < env.size(); ++r) {
      if (!w_.Contains(env.timestamp[r])) continue;
      if (use_ != nullptr) use_->Use(pi, kEnvironment, r);
      int64_t ts = r_.Real(env.timestamp[r]);
      uint32_t d = env.device[r];
      switch (static_cast<format::EnvironmentKind>(env.kind[r])) {
        case format::EnvironmentKind::kSpeed:
          r_.counters.push_back({r_.tracks.CounterTrack(d, "SM clock", "MHz"), ts, double(env.sm_clock[r])});
          r_.counters.push_back({r_.tracks.CounterTrack(d, "memory clock", "MHz"), ts, double(env.memory_clock[r])});
          break;
        case format::EnvironmentKind::kTemperature:
          r_.counters.push_back({r_.tracks.CounterTrack(d, "GPU temperature", "C"), ts, double(env.temperature[r])});
          break;
        case format::EnvironmentKind::kPower:
          r_.counters.push_back({r_.tracks.CounterTrack(d, "power", "W"), ts, env.power[r] / 1000.0});
          break;
        case format::EnvironmentKind::kCooling:
          r_.counters.push_back({r_.tracks.CounterTrack(d, "fan speed", "%"), ts, double(env.fan_speed[r])});
          break;
        default:
          break;
      }
    }
  }
  // Counters the recorder sampled itself (NVML: power, clocks).
  std::map<uint32_t, const format::CounterDef*> defs;
  for (const format::CounterDef& d : idx_.capture().counter_defs) defs[d.id] = &d;
  for (const format::CounterSample& s : idx_.capture().counter_samples) {
    if (!w_.Contains(s.timestamp_ns)) continue;
    auto it = defs.find(s.id);
    if (it == defs.end()) continue;
    if (use_ != nullptr) use_->counter_samples.push_back(static_cast<uint32_t>(&s - idx_.capture().counter_samples.data()));
    r_.counters.push_back({r_.tracks.CounterTrack(it->second->device_id, it->second->name, it->second->unit),
                         r_.Real(s.timestamp_ns), s.value});
  }
}

void WindowJoin::CollectMarkers() {
  constexpr uint32_t kInstant = 1u << 0, kStart = 1u << 1, kEnd = 1u << 2;  // CUpti_ActivityFlag
  std::map<uint32_t, size_t> open;  // marker id -> r_.markers index
  std::vector<std::tuple<uint64_t, uint16_t, uint32_t>> rows;  // by time: starts before their ends
  for (uint16_t pi = 0; pi < parts_.size(); ++pi) {
    const MarkerTable& m = parts_[pi]->markers;
    for (uint32_t r = 0; r < m.size(); ++r) rows.emplace_back(m.timestamp[r], pi, r);
  }
  std::sort(rows.begin(), rows.end());
  for (auto [ts, pi, r] : rows) {
    const MarkerTable& m = parts_[pi]->markers;
    uint32_t pid = m.pid[r] != 0 ? m.pid[r] : idx_.pid();
    if (m.flags[r] & kEnd) {
      auto it = open.find(m.id[r]);
      if (it == open.end()) continue;
      r_.markers[it->second].end = std::max(ts, r_.markers[it->second].start);
      r_.markers[it->second].closed = true;
      r_.markers[it->second].end_part = pi;
      r_.markers[it->second].end_row = r;
      open.erase(it);
    } else if (m.flags[r] & (kStart | kInstant)) {
      bool instant = (m.flags[r] & kInstant) != 0;
      r_.markers.push_back({ts, ts, pid, m.tid[r], m.name[r], m.domain[r], instant, instant, pi, 0, r, 0});
      if (!instant) open[m.id[r]] = r_.markers.size() - 1;
    }
  }
  for (uint32_t i = 0; i < r_.markers.size(); ++i) {
    MarkerRange& mk = r_.markers[i];
    if (!w_.Contains(mk.start)) continue;
    if (!mk.closed) mk.end = std::max(mk.start, w_.end_ns);  // ends after what was decoded
    if (use_ != nullptr) {
      use_->Use(mk.part, kMarkers, mk.row);
      if (mk.closed && !mk.instant) use_->Use(mk.end_part, kMarkers, mk.end_row);
      use_->Time(mk.end);
    }
    int64_t ts = r_.Real(mk.start);
    AddSlice(ts, mk.instant ? -1 : r_.Real(mk.end) - ts, r_.tracks.ThreadTrack(mk.pid, mk.tid), i, RefKind::kMarker,
             0, i);
  }
}

}  // namespace gpucap::builder::join_internal
