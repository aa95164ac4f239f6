// Host nodes of CUDA graphs run a CPU function that the GPU waits for, and
// CUPTI records nothing about the run. At node creation the recorder swaps
// the node's function for a trampoline that takes the time around the
// original call and logs it as a kHostNodeRun graph event. Instantiation
// copies the node's parameters, so every exec made from the node (and every
// clone of its graph) runs the trampoline.
//
// The trampoline's state must outlive every exec, which may outlive the
// node, its graph and even the recorder's stop: it lives in a fixed static
// table that is never freed. When the table is full, or the driver refuses
// the new parameters, the node is left alone and counted.
#ifndef GPUCAP_RECORDER_HOST_NODE_TIMER_H_
#define GPUCAP_RECORDER_HOST_NODE_TIMER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpucap/format/model.h"

namespace gpucap::recorder {

// Wraps the host node of a graph-node-created resource callback
// (`resource_data` is CUPTI's CUpti_ResourceData; `created` the event
// GraphEventFor made of it). Does nothing for other nodes.
void WrapHostNode(const void* resource_data, const format::GraphEvent& created);

// True on a thread inside WrapHostNode: the parameter change it makes comes
// back as a resource callback of its own, which is not the application's.
bool InHostNodeWrap();

// host_nodes_wrapped, host_nodes_not_wrapped_full, host_nodes_not_wrapped_error,
// host_node_runs_unrecorded (runs while the recorder was not recording).
void HostNodeStats(std::vector<std::pair<std::string, uint64_t>>* extra);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_HOST_NODE_TIMER_H_
