#include "gpucap/builder/graph_components.h"

namespace gpucap::builder {

GraphComponents::GraphComponents(const std::vector<format::GraphEvent>& events) {
  for (const format::GraphEvent& e : events) {
    using K = format::GraphEventKind;
    switch (e.kind) {
      case K::kGraphCloned: Union(G(e.graph_id), G(e.original_graph_id)); break;
      case K::kNodeCreated: Union(N(e.node_id), G(e.graph_id)); break;
      case K::kNodeCloned:
        Union(N(e.node_id), N(e.original_node_id));
        if (e.graph_id != 0) Union(N(e.node_id), G(e.graph_id));
        break;
      case K::kDependencyAdded:
      case K::kDependencyRemoved: Union(N(e.node_id), N(e.peer_node_id)); break;
      case K::kExecCreated:
      case K::kExecDestroyed:
      case K::kExecUpdated:
        if (e.graph_id != 0) Union(E(e.exec_id), G(e.graph_id));
        break;
      default: break;
    }
  }
}

uint64_t GraphComponents::NodeRoot(uint64_t node) { return Find(N(node)); }

uint64_t GraphComponents::EventRoot(const format::GraphEvent& e) {
  using K = format::GraphEventKind;
  switch (e.kind) {
    case K::kGraphCreated:
    case K::kGraphCloned:
    case K::kGraphDestroyed: return Find(G(e.graph_id));
    case K::kExecCreated:
    case K::kExecDestroyed:
    case K::kExecUpdated: return e.graph_id != 0 ? Find(G(e.graph_id)) : Find(E(e.exec_id));
    default: return Find(N(e.node_id));
  }
}

uint64_t GraphComponents::Find(uint64_t x) {
  auto it = parent_.find(x);
  if (it == parent_.end()) return x;
  uint64_t root = Find(it->second);
  it->second = root;  // path compression
  return root;
}

void GraphComponents::Union(uint64_t a, uint64_t b) {
  a = Find(a);
  b = Find(b);
  if (a != b) parent_[a] = b;
}

}  // namespace gpucap::builder
