// CUDA graph topology from the capture's graph events. Replayed ops carry the
// id of a node instantiation cloned; the index follows clones back to the
// node created at capture time (where and when it was created, and so under
// which ranges), and collapses dependencies through nodes that run nothing
// the trace shows (events, empty nodes, host functions) into edges between
// ops that do.
#ifndef GPUCAP_BUILDER_GRAPH_H_
#define GPUCAP_BUILDER_GRAPH_H_

#include <cstdint>
#include <string_view>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "gpucap/format/capture.h"

namespace gpucap::builder {

// CUgraphNodeType values.
enum class GraphNodeType : uint32_t {
  kKernel = 0,
  kMemcpy = 1,
  kMemset = 2,
  kHost = 3,
  kGraph = 4,
  kEmpty = 5,
  kWaitEvent = 6,
  kEventRecord = 7,
};

struct GraphNode {
  uint64_t id = 0;
  uint32_t graph_id = 0;
  uint32_t type = 0;
  uint32_t os_tid = 0;
  uint64_t created_ns = 0;
  std::string_view function_name;  // kernel and host nodes
  uint64_t event_handle = 0;
  // CUPTI's id of the stream the node was captured on (format::GraphEvent);
  // kNoCaptureStream when the capture does not say.
  uint32_t capture_stream = format::kNoCaptureStream;
};

class GraphIndex {
 public:
  explicit GraphIndex(const format::Capture& capture);

  // The node created at capture time that `node` was (transitively) cloned
  // from, or `node` itself; null when the capture never saw it created.
  const GraphNode* Origin(uint64_t node) const;

  // Predecessors of capture-time node `origin` that render as ops (kernel,
  // memcpy, memset nodes), reached through any chain of nodes that do not;
  // host functions on those chains are added to `host_functions`.
  struct Dependencies {
    std::vector<uint64_t> ops;                  // origin node ids
    std::vector<std::string_view> host_functions;
  };
  const Dependencies& RenderedPredecessors(uint64_t origin) const;

  size_t nodes() const { return nodes_.size(); }
  // Capture-time nodes of graph `graph_id` that render as ops: how many ops
  // one launch of it runs (child graphs aside).
  uint32_t OpNodes(uint32_t graph_id) const {
    auto it = op_nodes_.find(graph_id);
    return it == op_nodes_.end() ? 0 : it->second;
  }

  // Every capture-time node that `origin` depends on (upward, through any
  // node type) or that depends on it (downward): what bounds a node whose
  // run CUPTI gave no time for (an event record's).
  std::vector<uint64_t> Ancestors(uint64_t origin) const;
  std::vector<uint64_t> Descendants(uint64_t origin) const;
  // Capture-time event-record nodes of graph `graph_id`, in creation order.
  const std::vector<uint64_t>& EventRecordNodes(uint32_t graph_id) const;

  // The recorder's timed runs of host-node functions (kHostNodeRun), by
  // start time: events of the capture, which outlives the index.
  const std::vector<const format::GraphEvent*>& host_node_runs() const { return host_node_runs_; }

 private:
  std::unordered_map<uint64_t, GraphNode> nodes_;       // created nodes
  std::unordered_map<uint64_t, uint64_t> cloned_from_;  // clone -> original
  std::unordered_map<uint32_t, uint32_t> op_nodes_;     // graph -> op node count
  std::unordered_map<uint64_t, std::vector<uint64_t>> predecessors_;
  // Memo, filled on demand by whichever thread asks first: windows (and a
  // window's pieces) are described on several threads at once. Entries
  // never move (a node-based map), so a reference outlives the lock.
  mutable std::mutex collapsed_mu_;
  mutable std::unordered_map<uint64_t, Dependencies> collapsed_;
  std::vector<const format::GraphEvent*> host_node_runs_;
  std::unordered_map<uint32_t, std::vector<uint64_t>> event_records_;  // graph -> capture-time nodes
  std::unordered_map<uint64_t, std::vector<uint64_t>> successors_;
};

// True for node types whose execution appears as an activity record.
bool RendersAsOp(uint32_t node_type);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_GRAPH_H_
