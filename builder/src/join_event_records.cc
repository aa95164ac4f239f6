// Event-record nodes of graph replays. CUPTI writes a CUDA_EVENT record for
// each run of one (the replay's correlation, its stream, the CUDA event) but,
// in CUPTI 13.0 on the H200, no device timestamp: the run is known only to lie
// after every node it depends on and before every node that depends on it.
// The join draws it as "EventRecord" spanning that interval on the replay's
// stream: from the last end among the replay's ops and host-node runs it
// depends on to the first start among the replay's ops that depend on it
// (docs/semantics.md, "Graph host nodes and event-record nodes"). Records
// with a device timestamp are drawn at it (join_refs.cc); eager records
// without one are not drawn.
#include <unordered_set>

#include "slice_describer.h"
#include "window_join.h"

namespace gpucap::builder::join_internal {
namespace {

bool In(const std::vector<uint64_t>& sorted, uint64_t id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

}  // namespace

void WindowJoin::CollectGraphEventRecords() {
  // Correlations of untimed records, then the replay ops of those.
  std::unordered_map<uint32_t, std::vector<uint32_t>> replay_ops;
  for (uint16_t pi = 0; pi < parts_.size(); ++pi) {
    const CudaEventTable& ev = parts_[pi]->cuda_events;
    for (uint32_t r = 0; r < ev.size(); ++r) {
      if (ev.device_timestamp[r] == 0) replay_ops.try_emplace(ev.correlation[r]);
    }
  }
  if (replay_ops.empty()) return;
  for (uint32_t i = 0; i < r_.ops.size(); ++i) {
    if (r_.ops[i].origin == nullptr) continue;
    auto it = replay_ops.find(r_.ops[i].correlation);
    if (it != replay_ops.end()) it->second.push_back(i);
  }
  const auto& runs = idx_.graphs().host_node_runs();
  // A node's ancestors and descendants, once per window however many replays.
  std::unordered_map<uint64_t, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> neighbours;
  for (uint16_t pi = 0; pi < parts_.size(); ++pi) {
    const CudaEventTable& ev = parts_[pi]->cuda_events;
    for (uint32_t r = 0; r < ev.size(); ++r) {
      if (ev.device_timestamp[r] != 0) continue;
      const std::vector<uint32_t>& ops = replay_ops[ev.correlation[r]];
      if (ops.empty()) continue;  // not a replay of this window
      uint64_t first = UINT64_MAX, last = 0;
      for (uint32_t i : ops) {
        first = std::min(first, r_.ops[i].start);
        last = std::max(last, r_.ops[i].end);
      }
      // The node it ran: certain only when the graph has one event record.
      const auto& nodes = idx_.graphs().EventRecordNodes(r_.ops[ops.front()].origin->graph_id);
      uint64_t node = nodes.size() == 1 ? nodes.front() : 0;
      uint64_t lower = first, upper = last;
      if (node != 0) {
        auto [cached, fresh] = neighbours.try_emplace(node);
        if (fresh) cached->second = {idx_.graphs().Ancestors(node), idx_.graphs().Descendants(node)};
        const std::vector<uint64_t>& before = cached->second.first;
        const std::vector<uint64_t>& after = cached->second.second;
        uint64_t dep_end = 0, next_start = UINT64_MAX;
        for (uint32_t i : ops) {
          if (In(before, r_.ops[i].origin->id)) dep_end = std::max(dep_end, r_.ops[i].end);
          if (In(after, r_.ops[i].origin->id)) next_start = std::min(next_start, r_.ops[i].start);
        }
        if (dep_end != 0) lower = dep_end;
        upper = next_start != UINT64_MAX ? next_start : std::max(lower, last);
        // Host-node runs it waits on: those of this replay, between its ops.
        auto run = std::lower_bound(runs.begin(), runs.end(), lower, [](const format::GraphEvent* e, uint64_t t) {
          return e->timestamp_ns < t;
        });
        for (; run != runs.end() && (*run)->timestamp_ns <= upper; ++run) {
          if ((*run)->end_ns <= upper && In(before, (*run)->node_id)) lower = std::max(lower, (*run)->end_ns);
        }

      }
      if (upper < lower) upper = lower;
      if (!w_.Contains(lower)) continue;
      r_.graph_records.push_back({pi, r, node});
      if (use_ != nullptr) use_->Use(pi, kCudaEvents, r);
      int64_t ts = r_.Real(lower);
      // With its neighbours: on the lane of the stream it was captured on.
      const GraphNode* record_node = node != 0 ? idx_.graphs().Origin(node) : nullptr;
      uint32_t track = TrackOf(r_.TrackKeyOfNode(record_node, r_.ops[ops.front()].device, ev.stream[r]));
      AddSlice(ts, r_.Real(upper) - ts, track, static_cast<uint32_t>(r_.graph_records.size() - 1),
               RefKind::kGraphEventRecord, 0, ev.correlation[r]);
    }
  }
}

void SliceDescriber::DescribeGraphEventRecord(const SliceRef& r, Slice& s) {
  const GraphRecord& g = r_.graph_records[r.index];
  const CudaEventTable& ev = r_.parts[g.part]->cuda_events;
  auto name = names_.Intern(std::string(trace_keys::kEventRecordName));
  s.name_id = name.first;
  s.name = name.second;
  s.category = Category::kCudaEvent;
  args_.clear();
  args_.push_back(Arg::Uint(trace_keys::kCudaEventId, ev.event_id[g.row]));
  args_.push_back(Arg::Uint(trace_keys::kStream, ev.stream[g.row]));
  args_.push_back(Arg::Uint(trace_keys::kCorrelation, ev.correlation[g.row]));
  if (g.node != 0) args_.push_back(Arg::Uint(trace_keys::kGraphNodeId, g.node));
  args_.push_back(Arg::String(trace_keys::kEventRecordTiming, g.node != 0 ? trace_keys::kTimingBetweenNeighbours
                                                                          : trace_keys::kTimingInReplay));
}

}  // namespace gpucap::builder::join_internal
