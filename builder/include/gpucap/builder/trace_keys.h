// The trace's contract with its readers, named once: the argument keys and
// categories Kineto writes (torch.profiler, HTA and Perfetto UI match them by
// text), and the layout of flow ids. The join writes them; merge and splice
// read them back from the join's output, so a change here changes all three.
#ifndef GPUCAP_BUILDER_TRACE_KEYS_H_
#define GPUCAP_BUILDER_TRACE_KEYS_H_

#include <cstdint>
#include <string_view>

namespace gpucap::builder::trace_keys {

// A GPU op's stream as CUPTI reports it (for a graph replay, the stream
// CUPTI ran the node on, which the program may never have created). Kineto's
// key, which HTA and torch.profiler readers group by.
inline constexpr std::string_view kStream = "stream";
// A graph-replayed op's stream at capture time (CUPTI's id of the stream
// the program captured its node on), and the lane drawn for it: a track
// named "stream <id>" + kCaptureLaneSuffix in the device's process.
inline constexpr std::string_view kCaptureStream = "capture stream";
inline constexpr std::string_view kCaptureLaneSuffix = " (graph)";

// A GPU op's place and size, with Kineto's keys: where it ran (device,
// context), when its launch queued it ("queued", in us), and its payload.
inline constexpr std::string_view kDevice = "device";
inline constexpr std::string_view kContext = "context";
inline constexpr std::string_view kQueued = "queued";
inline constexpr std::string_view kBytes = "bytes";
inline constexpr std::string_view kMemoryBandwidth = "memory bandwidth (GB/s)";
// A peer copy's ends (Kineto's keys for a copy between devices).
inline constexpr std::string_view kFromDevice = "fromDevice";
inline constexpr std::string_view kInDevice = "inDevice";
inline constexpr std::string_view kToDevice = "toDevice";
inline constexpr std::string_view kFromContext = "fromContext";
inline constexpr std::string_view kInContext = "inContext";
inline constexpr std::string_view kToContext = "toContext";
// A kernel's launch shape and resources, with Kineto's keys.
inline constexpr std::string_view kGrid = "grid";
inline constexpr std::string_view kBlock = "block";
inline constexpr std::string_view kRegistersPerThread = "registers per thread";
inline constexpr std::string_view kSharedMemory = "shared memory";
inline constexpr std::string_view kEstAchievedOccupancy = "est. achieved occupancy %";
// The NVTX ranges open around a GPU op's launch: the innermost, and all of
// them outermost first.
inline constexpr std::string_view kAnnotation = "annotation";
inline constexpr std::string_view kAnnotationStack = "annotation stack";
// A synchronization (Kineto's cuda_sync keys): its kind, and for a stream
// waiting on an event, the stream, event and event record it waits on.
inline constexpr std::string_view kCudaSyncKind = "cuda_sync_kind";
inline constexpr std::string_view kWaitOnStream = "wait_on_stream";
inline constexpr std::string_view kWaitOnCudaEventId = "wait_on_cuda_event_id";
inline constexpr std::string_view kWaitOnCudaEventRecordCorrId = "wait_on_cuda_event_record_corr_id";
// A CUDA API call's callback id (Kineto's key).
inline constexpr std::string_view kCbid = "cbid";
// An NVTX range or marker: its domain, category and payload as the program
// gave them, and why its end is missing where it is.
inline constexpr std::string_view kDomain = "domain";
inline constexpr std::string_view kCategory = "category";
inline constexpr std::string_view kPayload = "payload";
inline constexpr std::string_view kEnd = "end";
// A whole graph launch (GRAPH_TRACE): the device it ended on, where that is
// not the one it started on.
inline constexpr std::string_view kEndDevice = "end device";
// A graph-replayed op's node: CUPTI's id of the node it ran as, the graph
// and node the program captured it from, and the host functions it waited on.
inline constexpr std::string_view kGraphNode = "graph node";
inline constexpr std::string_view kGraph = "graph";
inline constexpr std::string_view kCaptureNode = "capture node";
inline constexpr std::string_view kAfterHostFunctions = "after host functions";

// Argument keys that tie events together.
inline constexpr std::string_view kExternalId = "External id";  // a GPU op or launch -> its CPU op
inline constexpr std::string_view kCorrelation = "correlation";  // a GPU op -> its launch (CUPTI's id)

// Launch details Kineto does not write (it names no key for them): the
// hardware channel CUPTI says a kernel ran on.
inline constexpr std::string_view kChannelId = "channel id";
inline constexpr std::string_view kChannelType = "channel type";
// A kernel's static and dynamic shared memory per block, bytes, apart
// (Kineto's "shared memory" is their sum): nsys's StcSMem and DymSMem.
inline constexpr std::string_view kStaticSharedMemory = "static shared memory";
inline constexpr std::string_view kDynamicSharedMemory = "dynamic shared memory";
// The priority of the stream a GPU op ran on (cuStreamGetPriority; lower
// runs first), where the recorder saw the stream made.
inline constexpr std::string_view kStreamPriority = "stream priority";

// A collective's kernel, with the keys HTA reads (hta/common/trace_parser and
// its comm analyses) and torch.profiler writes on its record_param_comms.
inline constexpr std::string_view kCollectiveName = "Collective name";
inline constexpr std::string_view kInMsgNelems = "In msg nelems";
inline constexpr std::string_view kOutMsgNelems = "Out msg nelems";
inline constexpr std::string_view kInMsgSize = "In msg size";
inline constexpr std::string_view kOutMsgSize = "Out msg size";
inline constexpr std::string_view kDtype = "dtype";
inline constexpr std::string_view kGroupSize = "Group size";

// A CUDA graph host node's run, timed by the recorder around the function
// (Kineto has no such slice): "HostNode: <function>" on the thread that ran it.
inline constexpr std::string_view kHostNodePrefix = "HostNode: ";
inline constexpr std::string_view kHostFunction = "function";
inline constexpr std::string_view kHostFunctionAddress = "function address";
inline constexpr std::string_view kHostThread = "host thread";
inline constexpr std::string_view kGraphNodeId = "graph node id";
inline constexpr std::string_view kGraphId = "graph id";
// A graph event-record node's run: CUPTI's CUDA_EVENT record, drawn between
// its graph neighbours where CUPTI gave no device timestamp ("timing" says so).
inline constexpr std::string_view kEventRecordName = "EventRecord";
inline constexpr std::string_view kCudaEventId = "cuda_event_id";
inline constexpr std::string_view kEventRecordTiming = "timing";
inline constexpr std::string_view kTimingBetweenNeighbours = "between its graph neighbours (no device timestamp)";
inline constexpr std::string_view kTimingInReplay = "within its graph replay (no device timestamp)";
// A CUDA_EVENT record with CUPTI's device timestamp, drawn as Kineto draws
// it: "cudaEvent", 1 ns at the timestamp, with Kineto's keys.
inline constexpr std::string_view kCudaEventName = "cudaEvent";
inline constexpr std::string_view kEventId = "event_id";

// Categories ("cat") of the GPU side, as Kineto names them.
inline constexpr std::string_view kCatKernel = "kernel";
inline constexpr std::string_view kCatGpuMemcpy = "gpu_memcpy";
inline constexpr std::string_view kCatGpuMemset = "gpu_memset";
inline constexpr std::string_view kCatCudaRuntime = "cuda_runtime";
inline constexpr std::string_view kCatCudaDriver = "cuda_driver";
inline constexpr std::string_view kCatCudaSync = "cuda_sync";
inline constexpr std::string_view kCatGpuUserAnnotation = "gpu_user_annotation";
inline constexpr std::string_view kCatOverhead = "overhead";
inline constexpr std::string_view kCatCpuInstant = "cpu_instant_event";
inline constexpr std::string_view kCatCudaEvent = "cuda_event";
// gpucap's own: a whole graph launch as GRAPH_TRACE records it
// (--cuda-graph-trace graph), which Kineto has no name for.
inline constexpr std::string_view kCatCudaGraph = "cuda_graph";
// gpucap's own: a graph host node's function run (the recorder's trampoline).
inline constexpr std::string_view kCatHostNode = "cuda_graph_host_node";
// Categories of the CPU side: ranges the join draws from NVTX, and the
// profiler's own operators a splice ties launches to.
inline constexpr std::string_view kCatUserAnnotation = "user_annotation";
inline constexpr std::string_view kCatCpuOp = "cpu_op";
// Flow categories.
inline constexpr std::string_view kFlowLaunch = "ac2g";
inline constexpr std::string_view kFlowGraphDependency = "graph_dependency";
inline constexpr std::string_view kFlowForwardBackward = "fwdbwd";

// A PyTorch operator's keys (cpu_op, from an emit_nvtx range), as Kineto
// writes them: autograd's sequence number; on a backward node, the thread
// of the forward op it runs for (Kineto numbers threads its own way; gpucap
// writes the OS tid, 0 on forward ops as Kineto does); the input shapes.
inline constexpr std::string_view kSequenceNumber = "Sequence number";
inline constexpr std::string_view kFwdThreadId = "Fwd thread id";
inline constexpr std::string_view kInputDims = "Input Dims";
inline constexpr std::string_view kInputType = "Input type";

// Flow ids. Ids are unique per flow kind within one capture's trace, and
// stay below 2^53 (the integers a JSON reader holds exactly). The bits above
// kFlowIdBits say the kind; the bits below, the id within it, so a merge can
// spread several captures' ids over the low bits without mixing kinds.
inline constexpr int kFlowIdBits = 50;
// Launch -> op: the launch's correlation id, plus the op's place among the
// launch's ops (a graph launch starts one flow per op) from bit 32 on
// (below 2^18 per launch).
inline constexpr uint64_t kLaunchFlowBase = 0;
inline constexpr int kLaunchFlowOrdinalShift = 32;
// Op -> op inside a graph replay (predecessor's end -> successor's start):
// numbered from this base, in the window's order of successors.
inline constexpr uint64_t kDependencyFlowBase = uint64_t{1} << kFlowIdBits;

// Forward op -> backward node: the backward node's stand-in External id
// (its start since the recording began: the same in a trimmed copy), in
// the kind's low bits.
inline constexpr uint64_t kForwardBackwardFlowBase = uint64_t{2} << kFlowIdBits;

constexpr uint64_t LaunchFlowId(uint32_t correlation, uint64_t ordinal) {
  return kLaunchFlowBase + correlation + (ordinal << kLaunchFlowOrdinalShift);
}
constexpr uint64_t DependencyFlowId(uint64_t n) { return kDependencyFlowBase + n; }
constexpr uint64_t ForwardBackwardFlowId(uint64_t backward_id) {
  return kForwardBackwardFlowBase + (backward_id & ((uint64_t{1} << kFlowIdBits) - 1));
}
// The kind's base of a flow id, and the id within the kind.
constexpr uint64_t FlowIdBase(uint64_t id) { return id >> kFlowIdBits << kFlowIdBits; }
constexpr uint64_t FlowIdLowMax() { return (uint64_t{1} << kFlowIdBits) - 1; }

}  // namespace gpucap::builder::trace_keys

#endif  // GPUCAP_BUILDER_TRACE_KEYS_H_
