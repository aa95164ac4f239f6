// Graph-mode captures (gpucap record --cuda-graph-trace graph): CUPTI writes
// one GRAPH_TRACE record per graph launch instead of a record per node, so
// the join draws one span per launch, on the stream the graph was launched
// into, from its first node's start to its last node's end. The span is an
// op like a kernel (OpKind::kGraph): it takes the launch's "ac2g" flow (the
// record carries the cudaGraphLaunch call's correlation id), its External
// id, and the NVTX stack open at the launch, by the same code as every op.
//
// What the record does not carry: the graph exec handle (only the graph id
// CUPTI gives the executable graph), any name, and the nodes' own times.
//
// Graph mode also changes the capture's graph events: CUPTI inserts two
// nodes of its own into the executable graph (one ahead of the first node,
// one after the last; node mode adds only the first) and, inside every
// cudaGraphLaunch, sends a node-update callback for the closing one, which
// the recorder stores as kExecUpdated (torch_graph: 70 updates for 70
// launches, tests/fixtures/graph_mode_fixture_test.cc). They are CUPTI's
// bookkeeping, not the program updating its graph, and nothing here or in
// the rest of the join draws exec updates.
#include "slice_describer.h"

namespace gpucap::builder::join_internal {

std::pair<uint32_t, std::string_view> SliceDescriber::GraphLaunchName(const Op& op) {
  // Graphs have no names in CUDA; the id is what tells two graphs apart.
  char buf[32];
  std::snprintf(buf, sizeof(buf), "Graph %u", Part(r_.parts, op.part).graph_traces.graph_id[op.row]);
  return names_.Intern(buf);
}

void SliceDescriber::GraphLaunchArgs(const Op& op) {
  const GraphTraceTable& g = Part(r_.parts, op.part).graph_traces;
  uint32_t r = op.row;
  args_.push_back(Arg::Uint(trace_keys::kGraphId, g.graph_id[r]));
  args_.push_back(Arg::Uint(trace_keys::kDevice, g.device[r]));
  args_.push_back(Arg::Uint(trace_keys::kContext, g.context[r]));
  args_.push_back(Arg::Uint(trace_keys::kStream, g.stream[r]));
  args_.push_back(Arg::Uint(trace_keys::kCorrelation, g.correlation[r]));
  // A graph may end on another device than it started on (multi-device
  // graphs): said only when it does.
  if (g.end_device[r] != g.device[r]) args_.push_back(Arg::Uint(trace_keys::kEndDevice, g.end_device[r]));
}

}  // namespace gpucap::builder::join_internal
