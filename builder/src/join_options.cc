#include "gpucap/builder/join_options.h"

namespace gpucap::builder {

Result<GraphLanes> ParseGraphLanes(std::string_view name) {
  if (name == "capture") return GraphLanes::kCapture;
  if (name == "cupti") return GraphLanes::kCupti;
  return Status::InvalidArgument("--graph-lanes '" + std::string(name) + "': expected capture or cupti");
}

Result<GpuRanges> ParseGpuRanges(std::string_view name) {
  if (name == "launching") return GpuRanges::kLaunching;
  if (name == "all") return GpuRanges::kAll;
  return Status::InvalidArgument("--gpu-ranges '" + std::string(name) + "': expected launching or all");
}

std::vector<std::pair<std::string, uint64_t>> JoinStats::Named() const {
  std::vector<std::pair<std::string, uint64_t>> named = {
      {"gpu ops", gpu_ops},
      {"api calls", api_calls},
      {"ranges", ranges},
      {"flows", flows},
      {"gpu ops without launch record", ops_without_launch},
      {"gpu ops launched in another window", launches_in_other_windows},
      {"gpu ops without timestamps", ops_without_timestamps},
      {"gpu ops without end", ops_without_end},
      {"graph ops", graph_ops},
      {"graph ops without capture-time node", graph_ops_without_node},
      {"annotated gpu ops", annotated_ops},
      {"overflow lanes", overflow_lanes},
  };
  // Only flight-recorder dumps have any: every other trace keeps its header.
  if (ops_before_span != 0) named.emplace_back("gpu ops launched before the dump's span, left out", ops_before_span);
  // Only captures whose pauses kept CUPTI's kinds on until a detach have any.
  if (calls_while_paused != 0 || ops_while_paused != 0) {
    named.emplace_back("api calls made while paused, left out", calls_while_paused);
    named.emplace_back("gpu ops launched while paused, left out", ops_while_paused);
  }
  // Only captures whose recorder timed host nodes have any: older traces keep their header.
  if (host_node_runs != 0) named.emplace_back("host node runs", host_node_runs);
  if (graph_ops_with_capture_stream != 0) {
    named.emplace_back("graph ops with capture stream", graph_ops_with_capture_stream);
    named.emplace_back("graph ops on capture-stream lanes", graph_ops_on_capture_lanes);
  }
  return named;
}

}  // namespace gpucap::builder
