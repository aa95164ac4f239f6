// Graph host nodes: CUPTI records nothing of their runs, so the recorder
// times each call of a host node's function (recorder/src/host_node_timer.h)
// and the join draws it as "HostNode: <function>" on the thread that ran it
// (CUDA's own host-callback thread, not the one that launched the graph).
// The function's name comes from the node as created; a run of a node the
// capture never saw created is named by its address.
#include <cinttypes>
#include <cstdio>

#include "slice_describer.h"
#include "window_join.h"

namespace gpucap::builder::join_internal {

void WindowJoin::CollectHostNodes() {
  const auto& runs = idx_.graphs().host_node_runs();
  auto first = std::lower_bound(runs.begin(), runs.end(), w_.start_ns,
                                [](const format::GraphEvent* e, uint64_t t) { return e->timestamp_ns < t; });
  uint32_t pid = idx_.pid();
  const format::GraphEvent* base = idx_.capture().graphs.data();
  for (auto it = first; it != runs.end() && (*it)->timestamp_ns < w_.end_ns; ++it) {
    const format::GraphEvent& e = **it;
    int64_t ts = r_.Real(e.timestamp_ns);
    int64_t dur = e.end_ns >= e.timestamp_ns ? r_.Real(e.end_ns) - ts : 0;
    auto index = static_cast<uint32_t>(&e - base);
    AddSlice(ts, std::max<int64_t>(dur, 0), r_.tracks.ThreadTrack(pid, e.os_tid), index, RefKind::kHostNode, 0,
             index);
    stats_.host_node_runs++;
    if (use_ != nullptr) use_->Time(e.end_ns);
  }
}

void SliceDescriber::DescribeHostNode(const SliceRef& r, Slice& s) {
  const format::GraphEvent& e = r_.index.capture().graphs[r.index];
  std::snprintf(host_address_, sizeof(host_address_), "0x%" PRIx64, e.function_address);
  const GraphNode* node = r_.index.graphs().Origin(e.node_id);
  std::string function = node != nullptr && !node->function_name.empty() ? Demangle(node->function_name)
                                                                          : std::string(host_address_);
  auto name = names_.Intern(std::string(trace_keys::kHostNodePrefix) + function);
  s.name_id = name.first;
  s.name = name.second;
  s.category = Category::kHostNode;
  args_.clear();
  // The function's name without the prefix: the slice name's tail.
  args_.push_back(Arg::String(trace_keys::kHostFunction, name.second.substr(trace_keys::kHostNodePrefix.size())));
  args_.push_back(Arg::String(trace_keys::kHostFunctionAddress, host_address_));
  args_.push_back(Arg::Uint(trace_keys::kHostThread, e.os_tid));
  args_.push_back(Arg::Uint(trace_keys::kGraphNodeId, e.node_id));
  args_.push_back(Arg::Uint(trace_keys::kGraphId, e.graph_id));
}

}  // namespace gpucap::builder::join_internal
