// The window's GPU-side slices that are no ops, as rows: NVTX ranges
// projected onto the streams their ops ran on (gpu_annotations), CUPTI's own
// overheads (overheads) and CUDA event records (cuda_events); and the
// opening thread of start/end NVTX ranges, which the trace draws on a track
// of their own.
#include <algorithm>

#include "gpucap/builder/trace_keys.h"
#include "window_rows.h"

namespace gpucap::tools::sqlite {

using builder::Arg;
using builder::Category;
using builder::Slice;
using builder::Track;

void WindowRows::StreamOf(uint32_t track, RowWriter& row) const {
  const Track* t = &tracks_[track];
  if (t->kind == Track::Kind::kLane) t = &tracks_[t->lane_of];
  const builder::Process& p = processes_[t->process];
  // A stream's track, or a graph's lane, which is named after (and stands
  // for) the stream the graph was captured on.
  if (t->stream == Track::kNoStream || p.kind != builder::Process::Kind::kGpu) {
    row.Null().Null();
    return;
  }
  row.Int(p.pid).Int(t->stream);  // a GPU "process" is the device
}

void WindowRows::AddDeviceSpan(const Slice& s) {
  int64_t end = s.ts_ns + std::max<int64_t>(s.dur_ns, 0);
  uint64_t external = 0, event = 0, correlation = 0;
  for (const Arg& a : s.args) {
    if (a.foreign_key || a.type != Arg::Type::kUint) continue;
    if (a.key == builder::trace_keys::kExternalId) external = a.u();
    // A graph event-record node's run (kCudaEventId), or an event drawn as
    // Kineto draws it (kEventId): the same column.
    else if (a.key == builder::trace_keys::kCudaEventId || a.key == builder::trace_keys::kEventId) event = a.u();
    else if (a.key == builder::trace_keys::kCorrelation) correlation = a.u();
  }
  switch (s.category) {
    case Category::kGpuUserAnnotation: {
      RowWriter row(&batch_, TableId::kGpuAnnotations);
      row.Owner(c_.rank).Ref(TableId::kWindows, 0);
      StreamOf(s.track, row);
      row.Int(s.ts_ns).Int(end).String(c_.ids.String(s.name)).NonZero(external);
      break;
    }
    case Category::kOverhead:
      RowWriter(&batch_, TableId::kOverheads)
          .Owner(c_.rank)
          .Ref(TableId::kWindows, 0)
          .Int(s.ts_ns)
          .Int(end)
          .String(c_.ids.String(s.name));
      break;
    default: {  // a CUDA event record: an instant on its stream
      RowWriter row(&batch_, TableId::kCudaEvents);
      row.Owner(c_.rank).Ref(TableId::kWindows, 0);
      StreamOf(s.track, row);
      row.Int(s.ts_ns).Int(static_cast<int64_t>(event)).NonZero(correlation);
      break;
    }
  }
}

// The External id of a range is its start on the capture's clock since the
// recording started, plus 1 (docs/cli.md, "Kineto's arguments"), so the
// range is found again by its start and name among the capture's ranges.
std::pair<int64_t, int64_t> WindowRows::StartEndThreads(uint64_t external_id, std::string_view name) const {
  const format::Capture& capture = c_.index.capture();
  uint64_t origin = capture.session ? capture.session->start_cupti_ns : c_.index.extent().start_ns;
  if (external_id == 0) return {-1, -1};
  uint64_t start = origin + external_id - 1;
  const std::vector<builder::Range>& ranges = c_.index.ranges().ranges();
  auto it = std::lower_bound(ranges.begin(), ranges.end(), start,
                             [](const builder::Range& r, uint64_t t) { return r.start_ns < t; });
  for (; it != ranges.end() && it->start_ns == start; ++it) {
    if (it->push_pop || it->name != name || it->os_tid == 0) continue;
    int64_t end_tid = -1;
    if (it->closed && it->end_event < capture.ranges.size() && capture.ranges[it->end_event].os_tid != 0) {
      end_tid = capture.ranges[it->end_event].os_tid;
    }
    return {it->os_tid, end_tid};
  }
  return {-1, -1};
}

}  // namespace gpucap::tools::sqlite
