#include "graph_events.h"

#include <cuda.h>
#include <cupti.h>

#include "symbolize.h"

namespace gpucap::recorder {
namespace {

using format::GraphEvent;
using format::GraphEventKind;

uint32_t GraphId(CUgraph g) {
  uint32_t id = 0;
  if (g) cuptiGetGraphId(g, &id);
  return id;
}

uint64_t NodeId(CUgraphNode n) {
  uint64_t id = 0;
  if (n) cuptiGetGraphNodeId(n, &id);
  return id;
}

// Host nodes: the function's symbol, since their activity records carry no
// name. Event nodes: the event, to tie record and wait together.
void Describe(CUgraphNode node, CUgraphNodeType type, GraphEvent* e) {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_HOST: {
      CUDA_HOST_NODE_PARAMS params{};
      if (cuGraphHostNodeGetParams(node, &params) == CUDA_SUCCESS && params.fn) {
        e->function_address = reinterpret_cast<uint64_t>(params.fn);
        e->function_name = SymbolFor(e->function_address);
      }
      break;
    }
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: {
      CUevent ev = nullptr;
      if (cuGraphEventRecordNodeGetEvent(node, &ev) == CUDA_SUCCESS) {
        e->event_handle = reinterpret_cast<uint64_t>(ev);
      }
      break;
    }
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
      CUevent ev = nullptr;
      if (cuGraphEventWaitNodeGetEvent(node, &ev) == CUDA_SUCCESS) {
        e->event_handle = reinterpret_cast<uint64_t>(ev);
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace

std::optional<GraphEvent> GraphEventFor(uint32_t cbid, const void* resource_data,
                                        uint64_t timestamp_ns, uint32_t os_tid) {
  const auto* rd = static_cast<const CUpti_ResourceData*>(resource_data);
  if (!rd || !rd->resourceDescriptor) return std::nullopt;
  const auto* g = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
  GraphEvent e;
  e.timestamp_ns = timestamp_ns;
  e.os_tid = os_tid;
  if (rd->context) cuptiGetContextId(rd->context, &e.context_id);
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPH_CREATED:
      e.kind = GraphEventKind::kGraphCreated;
      e.graph_id = GraphId(g->graph);
      break;
    case CUPTI_CBID_RESOURCE_GRAPH_CLONED:
      e.kind = GraphEventKind::kGraphCloned;
      e.graph_id = GraphId(g->graph);
      e.original_graph_id = GraphId(g->originalGraph);
      break;
    case CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING:
      e.kind = GraphEventKind::kGraphDestroyed;
      e.graph_id = GraphId(g->graph);
      break;
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED: {
      e.kind = GraphEventKind::kNodeCreated;
      e.graph_id = GraphId(g->graph);
      e.node_id = NodeId(g->node);
      // CUPTI 13.0 leaves nodeType 0 (kernel) here whatever the node is.
      CUgraphNodeType type = g->nodeType;
      if (g->node && cuGraphNodeGetType(g->node, &type) != CUDA_SUCCESS) type = g->nodeType;
      e.node_type = static_cast<uint32_t>(type);
      Describe(g->node, type, &e);
      break;
    }
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: {
      e.kind = GraphEventKind::kNodeCloned;
      e.graph_id = GraphId(g->graph);
      e.node_id = NodeId(g->node);
      e.original_node_id = NodeId(g->originalNode);
      CUgraphNodeType type = g->nodeType;
      if (g->node && cuGraphNodeGetType(g->node, &type) != CUDA_SUCCESS) type = g->nodeType;
      e.node_type = static_cast<uint32_t>(type);
      break;
    }
    case CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING:
      e.kind = GraphEventKind::kNodeDestroyed;
      e.graph_id = GraphId(g->graph);
      e.node_id = NodeId(g->node);
      break;
    case CUPTI_CBID_RESOURCE_GRAPHNODE_DEPENDENCY_CREATED:
    case CUPTI_CBID_RESOURCE_GRAPHNODE_DEPENDENCY_DESTROY_STARTING:
      e.kind = cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_DEPENDENCY_CREATED
                   ? GraphEventKind::kDependencyAdded
                   : GraphEventKind::kDependencyRemoved;
      // CUPTI passes the node that waits as `node` and the one it waits
      // for as `dependency`; the capture stores the edge in run order.
      e.graph_id = GraphId(g->graph);
      e.node_id = NodeId(g->dependency);
      e.peer_node_id = NodeId(g->node);
      break;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED:
      e.kind = GraphEventKind::kExecCreated;
      e.graph_id = GraphId(g->graph);
      if (g->graphExec) cuptiGetGraphExecId(g->graphExec, &e.exec_id);
      break;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING:
      e.kind = GraphEventKind::kExecDestroyed;
      if (g->graphExec) cuptiGetGraphExecId(g->graphExec, &e.exec_id);
      break;
    case CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED:
    case CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS:
      e.kind = GraphEventKind::kExecUpdated;
      e.graph_id = GraphId(g->graph);
      e.node_id = NodeId(g->node);
      if (g->graphExec) cuptiGetGraphExecId(g->graphExec, &e.exec_id);
      break;
    default:
      return std::nullopt;
  }
  return e;
}

}  // namespace gpucap::recorder
