// Graph events that belong together: a graph, its nodes, their clones, the
// graphs cloned from it and the execs made of them. GraphIndex (graph.h)
// answers a node's capture-time origin and its dependencies from the events
// of the node's component only, so a capture keeping the whole components
// of some nodes answers the same for them.
#ifndef GPUCAP_BUILDER_GRAPH_COMPONENTS_H_
#define GPUCAP_BUILDER_GRAPH_COMPONENTS_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "gpucap/format/capture.h"

namespace gpucap::builder {

class GraphComponents {
 public:
  explicit GraphComponents(const std::vector<format::GraphEvent>& events);

  // Component ids: equal for events and nodes of one component.
  uint64_t NodeRoot(uint64_t node);
  uint64_t EventRoot(const format::GraphEvent& e);

 private:
  static uint64_t N(uint64_t node) { return node & ~(3ull << 62); }
  static uint64_t G(uint64_t graph) { return (1ull << 63) | graph; }
  static uint64_t E(uint64_t exec) { return (1ull << 62) | exec; }
  uint64_t Find(uint64_t x);
  void Union(uint64_t a, uint64_t b);

  std::unordered_map<uint64_t, uint64_t> parent_;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_GRAPH_COMPONENTS_H_
