#include "capture_rows.h"

#include <array>
#include <map>
#include <string_view>

namespace gpucap::tools::sqlite {
namespace {

using format::GraphEventKind;

std::string_view NodeTypeName(uint32_t type) {
  static constexpr std::string_view kNames[] = {"kernel", "memcpy", "memset", "host", "graph", "empty",
                                                "wait_event", "event_record", "ext_semaphore_signal",
                                                "ext_semaphore_wait", "mem_alloc", "mem_free",
                                                "batch_mem_op", "conditional"};
  return type < std::size(kNames) ? kNames[type] : std::string_view("unknown");
}

std::string Hex(const std::array<uint8_t, 16>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

void Meta(RowBatch* out, std::string_view key, int64_t value) {
  RowWriter(out, TableId::kMeta).Process().Text(key).Int(value);
}
void Meta(RowBatch* out, std::string_view key, std::string_view value) {
  RowWriter(out, TableId::kMeta).Process().Text(key).Text(value);
}

void AddProcess(CaptureRows* c, RowBatch* out) {
  const format::Capture& cap = c->index.capture();
  const builder::ClockMap& clock = c->index.clock();
  format::SessionInfo none;
  const format::SessionInfo& s = cap.session ? *cap.session : none;
  std::string command;
  for (const std::string& arg : s.command_line) command += (command.empty() ? "" : " ") + arg;
  const builder::CaptureExtent& e = c->index.extent();
  RowWriter(out, TableId::kProcesses)
      .Int(s.rank)
      .Int(s.local_rank)
      .Int(s.world_size)
      .Int(c->index.pid())
      .Int(s.ppid)
      .Text(c->index.process_name())
      .Text(s.host)
      .Text(command)
      .Text(c->index.path())
      .Text(s.tool_version)
      .Int(s.cupti_runtime_version)
      .Int(s.cuda_driver_version)
      .Int(s.cuda_runtime_version)
      .Int(clock.ToRealtime(e.start_ns))
      .Int(clock.ToRealtime(e.end_ns))
      .Int(cap.trailer && cap.trailer->clean_shutdown ? 1 : 0);
  for (const format::DeviceInfo& d : cap.devices) {
    RowWriter(out, TableId::kDevices)
        .Owner(c->rank)
        .Int(d.id)
        .Text(d.name)
        .Text(Hex(d.uuid))
        .Text(d.pci_bus_id)
        .Int(d.compute_major)
        .Int(d.compute_minor)
        .Int(d.num_sms)
        .Int(static_cast<int64_t>(d.total_global_mem))
        .Int(d.clock_rate_khz)
        .Int(d.memory_clock_rate_khz)
        .Int(d.memory_bus_width)
        .Int(d.l2_cache_size);
  }
  for (const format::ThreadInfo& t : cap.threads) {
    std::string_view name = c->index.ThreadName(t.os_tid);
    RowWriter(out, TableId::kThreads)
        .Owner(c->rank)
        .Int(t.pid)
        .Int(t.os_tid)
        .Int(static_cast<int64_t>(t.cupti_thread_id))
        .Text(name.empty() ? std::string_view(t.name) : name);
  }
}

void AddGraphs(CaptureRows* c, RowBatch* out) {
  const format::Capture& cap = c->index.capture();
  const builder::ClockMap& clock = c->index.clock();
  const builder::GraphIndex& graphs = c->index.graphs();
  std::map<std::pair<uint64_t, uint64_t>, int64_t> removed;  // edge -> when
  struct Exec {
    uint32_t graph = 0, tid = 0;
    int64_t created = 0, destroyed = -1, updates = 0;
  };
  std::map<uint32_t, Exec> execs;
  for (const format::GraphEvent& e : cap.graphs) {
    int64_t ts = clock.ToRealtime(e.timestamp_ns);
    switch (e.kind) {
      case GraphEventKind::kNodeCreated:
      case GraphEventKind::kNodeCloned: {
        bool clone = e.kind == GraphEventKind::kNodeCloned;
        const builder::GraphNode* origin = graphs.Origin(e.node_id);
        uint32_t type = origin != nullptr && clone ? origin->type : e.node_type;
        std::string_view function = origin != nullptr ? origin->function_name : std::string_view(e.function_name);
        RowWriter row(out, TableId::kGraphNodes);
        row.Owner(c->rank).Int(e.graph_id).Int(static_cast<int64_t>(e.node_id)).Int(type).Text(NodeTypeName(type));
        row.Int(e.os_tid).Int(ts).String(function.empty() ? 0 : c->ids.String(function));
        if (clone) row.Int(static_cast<int64_t>(e.original_node_id));
        else row.Null();
        if (origin != nullptr) row.Int(static_cast<int64_t>(origin->id));
        else row.Null();
        break;
      }
      case GraphEventKind::kDependencyRemoved:
        removed[{e.node_id, e.peer_node_id}] = ts;
        break;
      case GraphEventKind::kExecCreated:
        execs[e.exec_id] = {e.graph_id, e.os_tid, ts, -1, 0};
        break;
      case GraphEventKind::kExecUpdated:
        execs[e.exec_id].updates++;
        break;
      case GraphEventKind::kExecDestroyed:
        execs[e.exec_id].destroyed = ts;
        break;
      default:
        break;
    }
  }
  for (const format::GraphEvent& e : cap.graphs) {
    if (e.kind != GraphEventKind::kDependencyAdded) continue;
    RowWriter row(out, TableId::kGraphEdges);
    row.Owner(c->rank).Int(e.graph_id).Int(static_cast<int64_t>(e.node_id)).Int(static_cast<int64_t>(e.peer_node_id));
    row.Int(clock.ToRealtime(e.timestamp_ns));
    auto it = removed.find({e.node_id, e.peer_node_id});
    if (it != removed.end()) row.Int(it->second);
    else row.Null();
  }
  for (const auto& [id, x] : execs) {
    RowWriter row(out, TableId::kGraphExecs);
    row.Owner(c->rank).Int(id).Int(x.graph).Int(x.tid).Int(x.created).Int(x.updates);
    if (x.destroyed >= 0) row.Int(x.destroyed);
    else row.Null();
  }
}

}  // namespace

void AddCaptureFacts(CaptureRows* c, RowBatch* out) {
  AddProcess(c, out);
  AddGraphs(c, out);
  const format::Capture& cap = c->index.capture();
  const format::RecorderStats* rs = nullptr;
  if (cap.trailer) rs = &cap.trailer->stats;
  else if (!cap.stats.empty()) rs = &cap.stats.back();
  if (cap.session) {
    Meta(out, "format_version",
         std::to_string(cap.session->format_major) + "." + std::to_string(cap.session->format_minor));
  }
  Meta(out, "file_bytes", static_cast<int64_t>(cap.report.file_bytes));
  Meta(out, "frames", static_cast<int64_t>(cap.report.frames));
  Meta(out, "activity_chunks", static_cast<int64_t>(cap.chunks.size()));
  Meta(out, "clean_shutdown", cap.trailer && cap.trailer->clean_shutdown ? 1 : 0);
  if (cap.trailer && !cap.trailer->stop_reason.empty()) Meta(out, "stop_reason", cap.trailer->stop_reason);
  if (rs != nullptr) {
    Meta(out, "cupti_dropped_records", static_cast<int64_t>(rs->cupti_dropped_records));
    Meta(out, "buffers_dropped_pool_empty", static_cast<int64_t>(rs->buffers_dropped_pool_empty));
    Meta(out, "buffers_dropped_queue_full", static_cast<int64_t>(rs->buffers_dropped_queue_full));
    Meta(out, "bytes_dropped", static_cast<int64_t>(rs->bytes_dropped));
    Meta(out, "messages_dropped", static_cast<int64_t>(rs->messages_dropped));
    if (!rs->writer_error.empty()) Meta(out, "writer_error", rs->writer_error);
  }
  Meta(out, "damaged_regions", static_cast<int64_t>(cap.report.damage.size()));
  Meta(out, "tail_bytes_lost", static_cast<int64_t>(cap.report.tail_bytes_lost));
  Meta(out, "frames_missing", static_cast<int64_t>(cap.report.sequence_gaps));
  Meta(out, "clock_calibrated", c->index.clock().calibrated() ? 1 : 0);
  c->ids.TakePending(&out->new_strings, &out->new_stacks);
}

void AddDecodeFacts(CaptureRows* c, const builder::DecodeStats& d, const std::vector<std::string>& warnings,
                    RowBatch* out) {
  uint64_t skipped = 0;
  for (auto [kind, n] : d.skipped_kinds) skipped += n;
  Meta(out, "records_decoded", static_cast<int64_t>(d.records));
  Meta(out, "records_skipped_no_layout", static_cast<int64_t>(skipped));
  Meta(out, "unwalkable_bytes", static_cast<int64_t>(d.unwalkable_bytes));
  Meta(out, "corrupt_chunks", static_cast<int64_t>(d.corrupt_chunks));
  Meta(out, "unresolved_kernel_names", static_cast<int64_t>(d.unresolved_names));
  for (const std::string& w : warnings) Meta(out, "warning", w);
  c->ids.TakePending(&out->new_strings, &out->new_stacks);
}

}  // namespace gpucap::tools::sqlite
