#include "host_node_timer.h"

#include <cuda.h>
#include <cupti.h>

#include <atomic>

#include "process_recorder.h"
#include "recorder.h"

namespace gpucap::recorder {
namespace {

// One wrapped node. Written once before the driver sees the trampoline,
// read only by the trampoline; never freed (an exec may run it after the
// node, the graph and the recorder are gone).
struct Slot {
  CUhostFn fn;
  void* user_data;
  uint64_t node_id;
  uint32_t graph_id;
};

// Bounded: a process that builds more host nodes than this gets the rest
// unwrapped (counted), never unbounded memory. 64 K slots = 1.5 MiB of
// zero-initialized static storage (bss: no page is touched until used).
constexpr uint32_t kSlots = 65536;
Slot g_slots[kSlots];
std::atomic<uint32_t> g_used{0};
std::atomic<uint64_t> g_wrapped{0};
std::atomic<uint64_t> g_not_wrapped_full{0};
std::atomic<uint64_t> g_not_wrapped_error{0};
std::atomic<uint64_t> g_runs_unrecorded{0};
thread_local bool t_in_wrap = false;

void CUDA_CB Trampoline(void* p) {
  const Slot* slot = static_cast<const Slot*>(p);
  Recorder* r = ProcessRecorder();
  if (r == nullptr || !r->accepting()) {
    g_runs_unrecorded.fetch_add(1, std::memory_order_relaxed);
    slot->fn(slot->user_data);
    return;
  }
  uint64_t begin = r->Now();
  slot->fn(slot->user_data);
  uint64_t end = r->Now();
  format::GraphEvent e;
  e.kind = format::GraphEventKind::kHostNodeRun;
  e.timestamp_ns = begin;
  e.end_ns = end;
  e.os_tid = CurrentOsTid();
  e.graph_id = slot->graph_id;
  e.node_id = slot->node_id;
  e.function_address = reinterpret_cast<uint64_t>(slot->fn);
  // The per-thread event log: its own lock, contended only by the
  // collector; a full queue drops (and counts), never waits.
  r->AddEvent(std::move(e));
}

}  // namespace

bool InHostNodeWrap() { return t_in_wrap; }

void WrapHostNode(const void* resource_data, const format::GraphEvent& created) {
  if (created.kind != format::GraphEventKind::kNodeCreated ||
      created.node_type != static_cast<uint32_t>(CU_GRAPH_NODE_TYPE_HOST)) {
    return;
  }
  const auto* rd = static_cast<const CUpti_ResourceData*>(resource_data);
  const auto* g = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
  CUDA_HOST_NODE_PARAMS params{};
  if (g->node == nullptr || cuGraphHostNodeGetParams(g->node, &params) != CUDA_SUCCESS ||
      params.fn == nullptr || params.fn == &Trampoline) {
    if (params.fn != &Trampoline) g_not_wrapped_error.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // A slot is taken for good, even if the driver refuses it below: slots are
  // never handed back, so none can be reused while an exec still points at it.
  uint32_t i = g_used.fetch_add(1, std::memory_order_relaxed);
  if (i >= kSlots) {
    g_used.store(kSlots, std::memory_order_relaxed);
    g_not_wrapped_full.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  g_slots[i] = Slot{params.fn, params.userData, created.node_id, created.graph_id};
  CUDA_HOST_NODE_PARAMS wrapped{&Trampoline, &g_slots[i]};
  t_in_wrap = true;
  CUresult rc = cuGraphHostNodeSetParams(g->node, &wrapped);
  t_in_wrap = false;
  (rc == CUDA_SUCCESS ? g_wrapped : g_not_wrapped_error).fetch_add(1, std::memory_order_relaxed);
}

void HostNodeStats(std::vector<std::pair<std::string, uint64_t>>* extra) {
  uint64_t wrapped = g_wrapped.load(std::memory_order_relaxed);
  uint64_t full = g_not_wrapped_full.load(std::memory_order_relaxed);
  uint64_t error = g_not_wrapped_error.load(std::memory_order_relaxed);
  if (wrapped == 0 && full == 0 && error == 0) return;
  extra->emplace_back("host_nodes_wrapped", wrapped);
  extra->emplace_back("host_nodes_not_wrapped_full", full);
  extra->emplace_back("host_nodes_not_wrapped_error", error);
  extra->emplace_back("host_node_runs_unrecorded", g_runs_unrecorded.load(std::memory_order_relaxed));
}

}  // namespace gpucap::recorder
