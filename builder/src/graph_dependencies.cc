// Dependency arrows inside graph replays (docs/semantics.md, "Graph
// replays"): for each replayed op, one arrow from each nearest rendered
// predecessor of its capture-time node, reached through nodes that render no
// op (event records, waits, empty nodes, host functions), in the same replay.
// An arrow leaves where the predecessor ends and arrives where the successor
// starts. An op that gets one is no root of its replay: its launch flow goes,
// the arrows lead to it from the launch's roots.
#include "window_join.h"

namespace gpucap::builder::join_internal {

void WindowJoin::LinkDependencies(std::vector<bool>* has_predecessor) {
  has_predecessor->assign(r_.ops.size(), false);
  if (!options_.graph_dependencies) return;
  // (replay's launch correlation, capture-time node) -> op. A node runs once
  // per replay; a damaged capture repeating one keeps the first.
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> by_node;
  for (uint32_t i = 0; i < r_.ops.size(); ++i) {
    if (r_.ops[i].origin != nullptr) by_node.emplace(std::pair{r_.ops[i].correlation, r_.ops[i].origin->id}, i);
  }
  uint64_t n = 0;
  for (uint32_t v = 0; v < r_.ops.size(); ++v) {
    const GraphIndex::Dependencies* deps = r_.Dependencies(r_.ops[v]);
    if (deps == nullptr) continue;
    for (uint64_t pred : deps->ops) {
      auto it = by_node.find({r_.ops[v].correlation, pred});
      if (it == by_node.end()) continue;
      FlowEnd f{trace_keys::DependencyFlowId(n++), FlowKind::kGraphDependency};
      r_.op_flows_out.Add(it->second, f);
      r_.op_flows_in.Add(v, f);
      (*has_predecessor)[v] = true;
    }
  }
}

}  // namespace gpucap::builder::join_internal
