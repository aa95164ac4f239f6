// What a join produces, independent of any output format: processes, tracks
// (lanes), slices on tracks with arguments and flow ends, counter points, and
// the trace's metadata. A renderer (Chrome JSON, Perfetto) is a TraceSink:
// the join announces every process and track in Begin, then streams slices
// track by track, each track's slices by start time (enclosing slice first),
// then counters, then End. Slices on one track nest properly; the join moves
// slices that would partially overlap to sibling lanes first.
//
// Every string_view handed to a sink lives until the call returns; a sink
// that needs one later copies it.
#ifndef GPUCAP_BUILDER_TRACE_MODEL_H_
#define GPUCAP_BUILDER_TRACE_MODEL_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpucap/builder/output.h"
#include "gpucap/format/model.h"
#include "gpucap/format/recording_state.h"
#include "gpucap/status.h"

namespace gpucap::builder {

// Kineto's categories, plus gpucap's own for what Kineto does not show.
enum class Category : uint8_t {
  kKernel,
  kGpuMemcpy,
  kGpuMemset,
  kCudaRuntime,
  kCudaDriver,
  kCudaSync,
  kGpuUserAnnotation,
  kUserAnnotation,
  kCpuOp,      // a PyTorch operator (an emit_nvtx range, torch_operators.h)
  kOverhead,
  kCpuInstant,
  kCudaEvent,
  kHostNode,   // a graph host node's function run
  kCudaGraph,  // the last: renderers size tables by it
};
std::string_view CategoryName(Category c);

enum class FlowKind : uint8_t {
  kLaunch,           // CPU launch -> GPU op: Kineto's "ac2g"
  kGraphDependency,  // graph node -> dependent node
  kForwardBackward,  // forward op -> its backward node: Kineto's "fwdbwd"
};
std::string_view FlowKindName(FlowKind k);

struct FlowEnd {
  uint64_t id = 0;  // unique per kind within a trace, below 2^53
  FlowKind kind = FlowKind::kLaunch;
};

// A slice argument. Keys and values live as long as the call. Keys are
// gpucap's own plain-ASCII literals, written as they are, unless marked
// foreign (names from the application), which renderers escape. A tagged union:
// slices carry a dozen of these and are made by the million.
struct Arg {
  // kJson: a JSON value the builder composed and checked (Kineto's nested
  // "Input Dims"), written as it is in JSON and as text elsewhere.
  enum class Type : uint8_t { kInt, kUint, kDouble, kFloat6, kString, kInts, kStrings, kJson };
  std::string_view key;
  Type type = Type::kInt;
  bool foreign_key = false;

  Arg() : Arg({}, Type::kInt) {}
  // The key came from the recorded process and needs escaping.
  Arg Foreign() const {
    Arg a = *this;
    a.foreign_key = true;
    return a;
  }
  int64_t i() const { return v_.i; }
  uint64_t u() const { return v_.u; }
  double d() const { return v_.d; }
  std::string_view s() const { return {static_cast<const char*>(v_.p), n_}; }
  std::span<const int64_t> ints() const { return {static_cast<const int64_t*>(v_.p), n_}; }
  std::span<const std::string_view> strings() const { return {static_cast<const std::string_view*>(v_.p), n_}; }

  static Arg Int(std::string_view k, int64_t v) { Arg a(k, Type::kInt); a.v_.i = v; return a; }
  static Arg Uint(std::string_view k, uint64_t v) { Arg a(k, Type::kUint); a.v_.u = v; return a; }
  static Arg Double(std::string_view k, double v) { Arg a(k, Type::kDouble); a.v_.d = v; return a; }
  // A float shown with 6 significant digits, as Kineto prints its floats.
  static Arg Float6(std::string_view k, double v) { Arg a(k, Type::kFloat6); a.v_.d = v; return a; }
  static Arg String(std::string_view k, std::string_view v) { return Arg(k, Type::kString, v.data(), v.size()); }
  static Arg Ints(std::string_view k, std::span<const int64_t> v) { return Arg(k, Type::kInts, v.data(), v.size()); }
  static Arg Json(std::string_view k, std::string_view v) { return Arg(k, Type::kJson, v.data(), v.size()); }
  static Arg Strings(std::string_view k, std::span<const std::string_view> v) {
    return Arg(k, Type::kStrings, v.data(), v.size());
  }

 private:
  Arg(std::string_view k, Type t, const void* p = nullptr, size_t n = 0) : key(k), type(t), n_(n) { v_.p = p; }
  union {
    int64_t i;
    uint64_t u;
    double d;
    const void* p;
  } v_;
  size_t n_ = 0;
};
static_assert(sizeof(Arg) <= 40);

struct Process {
  enum class Kind : uint8_t { kCpu, kGpu, kOverhead };
  Kind kind = Kind::kCpu;
  uint32_t pid = 0;       // OS pid for CPU processes, device id for GPUs (as Kineto)
  std::string name;
  std::string label;      // "CPU", "GPU 0"
  int64_t sort_index = 0;
  uint32_t os_pid = 0;    // CPU processes: the OS pid, also when `pid` had to move off a device's
};

struct Track {
  // kSynthetic: a track of its own that is no OS thread or stream (NVTX
  // start/end ranges, a device's context syncs).
  enum class Kind : uint8_t { kThread, kStream, kLane, kCounter, kSynthetic };
  Kind kind = Kind::kThread;
  uint32_t id = 0;        // index in TraceHeader::tracks
  uint32_t process = 0;   // index in TraceHeader::processes
  uint32_t tid = 0;       // unique within the process: OS tid, stream id, or synthetic
  uint32_t lane_of = 0;   // for kLane: the track whose overlapping slices it takes
  // The CUDA stream whose work the track draws: a kStream track's stream, a
  // graph's capture-stream lane's capture-time stream (kSynthetic, named
  // after it); kNoStream for every other track.
  static constexpr uint32_t kNoStream = UINT32_MAX;
  uint32_t stream = kNoStream;
  std::string name;
  int64_t sort_index = 0;
  std::string unit;       // counters
};

struct Slice {
  uint32_t track = 0;
  int64_t ts_ns = 0;      // CLOCK_REALTIME ns
  int64_t dur_ns = 0;     // < 0: an instant
  std::string_view name;
  uint32_t name_id = 0;   // equal names share an id (for interning); 0: none
  Category category = Category::kKernel;
  std::span<const Arg> args;
  // args[shared_first, shared_first + shared_count) are the same, key for
  // key and value for value, on every slice of this trace with the same
  // nonzero shared_id: a kernel's launch shape and annotation stack repeat
  // across the thousands of launches of one step. A renderer may write them
  // once and repeat the bytes; every arg is still in `args`. Ids count up,
  // and the ids in use at one time lie within kSharedIdsLive of each other:
  // once an id is followed by one kSharedIdsLive or more above it, it is
  // not seen again, so a cache of the last kSharedIdsLive ids (a slot per
  // id modulo it) serves as well as one of every id, in bounded memory.
  uint32_t shared_id = 0;
  uint8_t shared_first = 0, shared_count = 0;
  std::span<const FlowEnd> flows_out;  // flows this slice starts
  std::span<const FlowEnd> flows_in;   // flows this slice ends
  bool instant() const { return dur_ns < 0; }
};

struct CounterPoint {
  uint32_t track = 0;
  int64_t ts_ns = 0;
  double value = 0;
};

struct TraceHeader {
  int64_t base_time_ns = 0;     // timestamps are written relative to it
  std::string trace_name;
  // What Kineto writes at the top.
  std::vector<format::DeviceInfo> devices;
  int32_t cuda_driver_version = 0;
  int32_t cuda_runtime_version = 0;
  uint32_t cupti_version = 0;
  int32_t rank = -1, local_rank = -1, world_size = -1;
  std::string distributed_backend;  // "nccl" when the process used NCCL; empty: not seen
  // The window this trace is, in realtime ns.
  uint32_t window_index = 0;
  std::string window_label;
  int64_t window_start_ns = 0, window_end_ns = 0;
  std::string capture_path;
  std::string host;
  // Counts for a person judging the trace: drops, damage, joins that failed.
  std::vector<std::pair<std::string, uint64_t>> counts;
  std::vector<std::string> warnings;
  // When the recorder recorded, within the window (realtime ns): empty for a
  // capture recorded whole; sampled steps say which and why.
  std::vector<format::RecordingInterval> recording;
  std::vector<Process> processes;
  std::vector<Track> tracks;
};

// Slice::shared_id: how many consecutive ids may be in use at once. Few:
// a describer's runs and a renderer's texts start over in the memory they
// had (1 << 16 of them took memory new to the process, a page fault per
// 4 KB, for runs the bench capture uses ~8 times each: -7% of a
// one-thread build of a 2M-event window with 1 << 12, bench/README.md).
inline constexpr uint32_t kSharedIdsLive = 1u << 12;

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual Status Begin(const TraceHeader& header) = 0;
  virtual Status AddSlice(const Slice& slice) = 0;
  virtual Status AddCounter(const CounterPoint& point) = 0;
  // Flushes and closes the output; nothing may follow.
  virtual Status End() = 0;

  // Pieces: a renderer whose slices can be rendered apart, a run of them at
  // a time on other threads, gives a renderer of runs (called after Begin,
  // on the thread that calls AddPiece). That renderer takes a run's
  // AddSlice calls, then End, on one thread at a time, and leaves the run's
  // bytes in `out`; after End it takes the next run's the same way, its
  // caches kept. AddPiece then writes a run's bytes where AddSlice would
  // have written them, so the trace reads the same as one rendered slice
  // by slice. Null (the default): this sink takes its slices one by one.
  virtual std::unique_ptr<TraceSink> NewPiece(RenderedPiece* out) {
    (void)out;
    return nullptr;
  }
  virtual Status AddPiece(RenderedPiece* piece) {
    (void)piece;
    return Status::Internal("this trace's renderer renders no pieces");
  }
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_TRACE_MODEL_H_
