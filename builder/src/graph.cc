#include "gpucap/builder/graph.h"

#include <algorithm>
#include <tuple>
#include <unordered_set>

namespace gpucap::builder {

using format::GraphEventKind;

bool RendersAsOp(uint32_t type) {
  auto t = static_cast<GraphNodeType>(type);
  return t == GraphNodeType::kKernel || t == GraphNodeType::kMemcpy || t == GraphNodeType::kMemset;
}

GraphIndex::GraphIndex(const format::Capture& capture) {
  // (from, to, added): in the order recorded. Instantiation and updates
  // remove an edge and add it back; applied out of order, the removal would
  // win and drop an edge the graph has.
  std::vector<std::tuple<uint64_t, uint64_t, bool>> edges;
  for (const format::GraphEvent& e : capture.graphs) {
    switch (e.kind) {
      case GraphEventKind::kNodeCreated: {
        GraphNode n;
        n.id = e.node_id;
        n.graph_id = e.graph_id;
        n.type = e.node_type;
        n.os_tid = e.os_tid;
        n.created_ns = e.timestamp_ns;
        n.function_name = e.function_name;
        n.event_handle = e.event_handle;
        n.capture_stream = e.capture_stream;
        if (nodes_.emplace(e.node_id, n).second && RendersAsOp(n.type)) op_nodes_[n.graph_id]++;  // the first creation wins
        break;
      }
      case GraphEventKind::kNodeCloned:
        if (e.node_id != e.original_node_id) cloned_from_[e.node_id] = e.original_node_id;
        break;
      case GraphEventKind::kDependencyAdded:
        edges.emplace_back(e.node_id, e.peer_node_id, true);
        break;
      case GraphEventKind::kDependencyRemoved:
        edges.emplace_back(e.node_id, e.peer_node_id, false);
        break;
      case GraphEventKind::kHostNodeRun:
        host_node_runs_.push_back(&e);
        break;
      default:
        break;
    }
  }
  // Per-thread batches reach the file in any order.
  std::stable_sort(host_node_runs_.begin(), host_node_runs_.end(),
                   [](const format::GraphEvent* a, const format::GraphEvent* b) { return a->timestamp_ns < b->timestamp_ns; });
  // Edges may be reported between clones; topology is kept between the
  // capture-time nodes, which is what replayed ops map back to.
  auto origin_id = [&](uint64_t n) {
    const GraphNode* o = Origin(n);
    return o == nullptr ? n : o->id;
  };
  for (auto [from, to, add] : edges) {
    uint64_t f = origin_id(from);
    if (add) {
      auto& preds = predecessors_[origin_id(to)];
      if (std::find(preds.begin(), preds.end(), f) == preds.end()) preds.push_back(f);
    } else if (auto it = predecessors_.find(origin_id(to)); it != predecessors_.end()) {
      std::erase(it->second, f);
    }
  }
  for (const auto& [to, preds] : predecessors_) {
    for (uint64_t from : preds) successors_[from].push_back(to);
  }
  // Capture-time event records: created, not cloned (instantiation reports
  // the exec's copies as created too, each with its clone event).
  for (const format::GraphEvent& e : capture.graphs) {
    if (e.kind != GraphEventKind::kNodeCreated || e.node_type != static_cast<uint32_t>(GraphNodeType::kEventRecord)) {
      continue;
    }
    const GraphNode* o = Origin(e.node_id);
    if (o == nullptr || o->id != e.node_id) continue;
    auto& list = event_records_[e.graph_id];
    if (std::find(list.begin(), list.end(), e.node_id) == list.end()) list.push_back(e.node_id);
  }
}

namespace {

std::vector<uint64_t> Closure(uint64_t start, const std::unordered_map<uint64_t, std::vector<uint64_t>>& next) {
  std::vector<uint64_t> out, todo{start};
  std::unordered_set<uint64_t> seen{start};
  while (!todo.empty()) {
    uint64_t n = todo.back();
    todo.pop_back();
    auto it = next.find(n);
    if (it == next.end()) continue;
    for (uint64_t m : it->second) {
      if (seen.insert(m).second) {
        out.push_back(m);
        todo.push_back(m);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<uint64_t> GraphIndex::Ancestors(uint64_t origin) const { return Closure(origin, predecessors_); }
std::vector<uint64_t> GraphIndex::Descendants(uint64_t origin) const { return Closure(origin, successors_); }

const std::vector<uint64_t>& GraphIndex::EventRecordNodes(uint32_t graph_id) const {
  static const std::vector<uint64_t> kNone;
  auto it = event_records_.find(graph_id);
  return it == event_records_.end() ? kNone : it->second;
}

const GraphNode* GraphIndex::Origin(uint64_t node) const {
  // Clones of clones (a graph cloned, then instantiated) chain back; the
  // bound guards against a cycle in a damaged capture.
  for (int hops = 0; hops < 64; ++hops) {
    auto created = nodes_.find(node);
    auto parent = cloned_from_.find(node);
    if (parent == cloned_from_.end()) return created == nodes_.end() ? nullptr : &created->second;
    node = parent->second;
  }
  return nullptr;
}

const GraphIndex::Dependencies& GraphIndex::RenderedPredecessors(uint64_t origin) const {
  {
    std::lock_guard<std::mutex> lock(collapsed_mu_);
    auto memo = collapsed_.find(origin);
    if (memo != collapsed_.end()) return memo->second;
  }
  Dependencies deps;
  std::vector<uint64_t> todo;
  std::unordered_set<uint64_t> seen;
  auto push_preds = [&](uint64_t n) {
    auto it = predecessors_.find(n);
    if (it == predecessors_.end()) return;
    for (uint64_t p : it->second) {
      if (seen.insert(p).second) todo.push_back(p);
    }
  };
  push_preds(origin);
  while (!todo.empty()) {
    uint64_t p = todo.back();
    todo.pop_back();
    auto node = nodes_.find(p);
    uint32_t type = node == nodes_.end() ? static_cast<uint32_t>(GraphNodeType::kEmpty) : node->second.type;
    if (RendersAsOp(type)) {
      deps.ops.push_back(p);
      continue;
    }
    if (type == static_cast<uint32_t>(GraphNodeType::kHost) && node != nodes_.end() &&
        !node->second.function_name.empty()) {
      deps.host_functions.push_back(node->second.function_name);
    }
    push_preds(p);
  }
  std::sort(deps.ops.begin(), deps.ops.end());
  std::sort(deps.host_functions.begin(), deps.host_functions.end());
  deps.host_functions.erase(std::unique(deps.host_functions.begin(), deps.host_functions.end()),
                            deps.host_functions.end());
  std::lock_guard<std::mutex> lock(collapsed_mu_);
  return collapsed_.emplace(origin, std::move(deps)).first->second;  // the first made, if another thread won
}

}  // namespace gpucap::builder
