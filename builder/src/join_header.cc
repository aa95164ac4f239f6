// The trace header of a window: process, devices, and what decoding skipped.
#include "window_join.h"

#include <algorithm>

namespace gpucap::builder::join_internal {

TraceHeader WindowJoin::MakeHeader(const DecodeStats& decode) {
  TraceHeader h;
  const format::Capture& c = idx_.capture();
  int64_t start = r_.Real(w_.start_ns);
  // Whole seconds, like Kineto's base: readable, and small relative times
  // keep their nanoseconds as doubles.
  h.base_time_ns = start >= 0 ? start / 1'000'000'000 * 1'000'000'000 : 0;
  h.trace_name = options_.trace_name;
  h.devices = c.devices;
  if (c.session) {
    h.cuda_driver_version = c.session->cuda_driver_version;
    h.cuda_runtime_version = c.session->cuda_runtime_version;
    h.cupti_version = c.session->cupti_runtime_version;
    h.rank = c.session->rank;
    h.local_rank = c.session->local_rank;
    h.world_size = c.session->world_size;
    h.host = c.session->host;
  }
  // NCCL's kernels name it (mangled or not); no other backend is told apart.
  for (const auto& str : c.strings) {
    std::string_view text = str.def.text;
    if (text.find("ncclDevKernel") != std::string_view::npos || text.find("ncclKernel") != std::string_view::npos) {
      h.distributed_backend = "nccl";
      break;
    }
  }
  h.window_index = w_.index;
  h.window_label = w_.label;
  h.window_start_ns = start;
  h.window_end_ns = r_.Real(w_.end_ns);
  h.capture_path = idx_.path();
  // Drops and damage: the recorder's last word on them.
  const format::RecorderStats* rs = nullptr;
  if (c.trailer) rs = &c.trailer->stats;
  else if (!c.stats.empty()) rs = &c.stats.back();
  if (rs != nullptr) {
    h.counts.push_back({"cupti dropped records", rs->cupti_dropped_records});
    h.counts.push_back({"buffers dropped (pool empty)", rs->buffers_dropped_pool_empty});
    h.counts.push_back({"buffers dropped (queue full)", rs->buffers_dropped_queue_full});
    h.counts.push_back({"bytes dropped", rs->bytes_dropped});
    h.counts.push_back({"messages dropped", rs->messages_dropped});
    if (!rs->writer_error.empty()) h.warnings.push_back("recorder writer error: " + rs->writer_error);
  }
  h.counts.push_back({"damaged regions", c.report.damage.size()});
  h.counts.push_back({"bytes lost at the tail", c.report.tail_bytes_lost});
  h.counts.push_back({"frames missing", c.report.sequence_gaps});
  h.counts.push_back({"clean shutdown", c.trailer && c.trailer->clean_shutdown ? 1 : 0});
  uint64_t skipped = 0;
  for (auto [k, n] : decode.skipped_kinds) skipped += n;
  h.counts.push_back({"records skipped (no layout)", skipped});
  h.counts.push_back({"corrupt chunks", decode.corrupt_chunks});
  h.counts.push_back({"unresolved kernel names", decode.unresolved_names});
  for (auto& kv : stats_.Named()) h.counts.push_back(kv);
  for (const std::string& line : c.report.Describe(idx_.path())) h.warnings.push_back(line);
  for (const std::string& line : idx_.decoder().Describe(decode)) h.warnings.push_back(line);
  if (r_.duplicate_correlations != 0) {
    h.warnings.push_back(std::to_string(r_.duplicate_correlations) +
                         " API records repeat the correlation id of an earlier one: their ops join the first");
  }
  for (format::RecordingInterval r : format::RecordingIntervals(c.metadata, w_.end_ns)) {
    if (r.end_ns < w_.start_ns || r.start_ns > w_.end_ns) continue;
    r.start_ns = static_cast<uint64_t>(r_.Real(std::max(r.start_ns, w_.start_ns)));
    r.end_ns = static_cast<uint64_t>(r_.Real(std::min(r.end_ns, w_.end_ns)));
    h.recording.push_back(std::move(r));
  }
  if (!idx_.clock().calibrated()) {
    h.warnings.push_back("no clock samples: CUPTI timestamps taken as CLOCK_REALTIME");
  }
  return h;
}

}  // namespace gpucap::builder::join_internal
