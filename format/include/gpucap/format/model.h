// What a capture holds, as plain C++ values. The writer serialises these and
// the reader hands them back; Cap'n Proto stays an implementation detail of
// the format library. Field meanings are documented in format/capture.capnp.
#ifndef GPUCAP_FORMAT_MODEL_H_
#define GPUCAP_FORMAT_MODEL_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "gpucap/format/boxed.h"

namespace gpucap::format {

struct KindSize {
  uint32_t kind = 0;
  uint32_t size = 0;
  bool operator==(const KindSize&) const = default;
};

struct KindCount {
  uint32_t kind = 0;
  uint64_t count = 0;
  bool operator==(const KindCount&) const = default;
};

struct SessionInfo {
  uint16_t format_major = 0;  // filled by the writer
  uint16_t format_minor = 0;
  std::string tool_version;
  std::string host;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string process_name;
  std::vector<std::string> command_line;
  int64_t start_realtime_ns = 0;
  int64_t start_monotonic_ns = 0;
  uint64_t start_cupti_ns = 0;
  uint32_t cupti_runtime_version = 0;
  uint32_t cupti_header_version = 0;
  int32_t cuda_driver_version = 0;
  int32_t cuda_runtime_version = 0;
  std::vector<uint32_t> enabled_kinds;
  std::vector<KindSize> record_sizes;  // CUPTI record size per activity kind, as delivered
  int32_t rank = -1;
  int32_t local_rank = -1;
  int32_t world_size = -1;
  std::vector<std::pair<std::string, std::string>> options;
  bool operator==(const SessionInfo&) const = default;
};

struct DeviceInfo {
  uint32_t id = 0;
  std::array<uint8_t, 16> uuid{};
  std::string name;
  uint64_t total_global_mem = 0;
  int32_t compute_major = 0;
  int32_t compute_minor = 0;
  int32_t max_threads_per_block = 0;
  int32_t max_threads_per_multiprocessor = 0;
  int32_t regs_per_block = 0;
  int32_t regs_per_multiprocessor = 0;
  int32_t warp_size = 0;
  int32_t shared_mem_per_block = 0;
  int32_t shared_mem_per_multiprocessor = 0;
  int32_t shared_mem_per_block_optin = 0;
  int32_t num_sms = 0;
  int32_t l2_cache_size = 0;
  int32_t clock_rate_khz = 0;
  int32_t memory_clock_rate_khz = 0;
  int32_t memory_bus_width = 0;
  std::string pci_bus_id;
  bool operator==(const DeviceInfo&) const = default;
};

enum class ClockKind : uint8_t { kStart = 0, kPeriodic = 1, kEnd = 2 };

// One reading of the three clocks, taken back to back.
struct ClockSample {
  ClockKind kind = ClockKind::kPeriodic;
  uint64_t cupti_ns = 0;
  int64_t monotonic_ns = 0;
  int64_t realtime_ns = 0;
  bool operator==(const ClockSample&) const = default;
};

enum class Codec : uint8_t { kNone = 0, kLz4Block = 1 };

// Everything about an activity chunk except its bytes.
struct ChunkInfo {
  uint32_t raw_size = 0;
  uint32_t record_count = 0;
  std::vector<KindCount> kind_counts;
  uint64_t min_start_ns = 0;
  uint64_t max_start_ns = 0;
  uint64_t max_end_ns = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  // Record size per kind as the recorder walked this buffer: the builder steps
  // through raw records with these, whatever CUPTI version wrote them.
  std::vector<KindSize> record_sizes;
  bool operator==(const ChunkInfo&) const = default;
};

struct StringDef {
  uint64_t pointer = 0;
  std::string text;
  bool operator==(const StringDef&) const = default;
};

enum class RangeKind : uint8_t {
  kPush = 0,
  kPop = 1,
  kStart = 2,
  kEnd = 3,
  kMark = 4,
  kNameThread = 5,
  kNameDomain = 6,
  kNameCategory = 7,
  kPayloadSchema = 8,  // an NVTX payload schema: id = schema id, in `domain`
  kPayloadEnum = 9,    // an NVTX payload enum: id = schema id, in `domain`
};
enum class RangeSource : uint8_t { kNvtx = 0, kApi = 1 };

// One NVTX extended payload: bytes to be read with the schema of `schema_id`
// registered in the event's domain. Pointers inside are not followed.
struct ExtPayload {
  uint64_t schema_id = 0;
  std::string data;
  bool truncated = false;  // longer than the recorder keeps: `data` is the head
  bool operator==(const ExtPayload&) const = default;
};

struct PayloadSchemaEntry {
  uint64_t flags = 0;
  uint64_t type = 0;  // NVTX_PAYLOAD_ENTRY_TYPE_* or another schema's id
  std::string name;
  std::string description;
  uint64_t array_or_union_detail = 0;
  uint64_t offset = 0;
  bool operator==(const PayloadSchemaEntry&) const = default;
};

struct PayloadEnumEntry {
  std::string name;
  uint64_t value = 0;
  bool is_flag = false;
  bool operator==(const PayloadEnumEntry&) const = default;
};

// An NVTX payload schema or enum as registered (nvtxPayloadSchemaAttr_t,
// nvtxPayloadEnumAttr_t); fields outside `field_mask` are 0.
struct PayloadSchema {
  uint64_t field_mask = 0;
  uint64_t schema_type = 0;  // NVTX_PAYLOAD_SCHEMA_TYPE_*
  uint64_t flags = 0;
  uint64_t static_size = 0;  // schemas: payloadStaticSize; enums: sizeOfEnum
  uint64_t pack_align = 0;
  std::vector<PayloadSchemaEntry> entries;
  std::vector<PayloadEnumEntry> enum_entries;
  bool operator==(const PayloadSchema&) const = default;
};

struct RangeEvent {
  // Millions decode at once: the small fields first, packed, and the
  // payload schema boxed (sizeof 120 bytes, not 208).
  RangeKind kind = RangeKind::kPush;
  RangeSource source = RangeSource::kNvtx;
  uint32_t os_tid = 0;
  uint32_t category = 0;
  uint32_t color = 0;
  uint64_t timestamp_ns = 0;
  uint64_t id = 0;
  uint64_t domain = 0;
  std::string name;
  std::variant<std::monostate, uint64_t, int64_t, double> payload;
  std::vector<ExtPayload> ext_payloads;
  Boxed<PayloadSchema> schema;  // kPayloadSchema and kPayloadEnum only
  bool operator==(const RangeEvent&) const = default;
};

enum class GraphEventKind : uint8_t {
  kGraphCreated = 0,
  kGraphCloned = 1,
  kGraphDestroyed = 2,
  kNodeCreated = 3,
  kNodeCloned = 4,
  kNodeDestroyed = 5,
  kDependencyAdded = 6,
  kDependencyRemoved = 7,
  kExecCreated = 8,
  kExecDestroyed = 9,
  kExecUpdated = 10,
  // One run of a host node's function, timed by the recorder's trampoline:
  // timestamp_ns..end_ns on thread os_tid; graph_id/node_id name the node
  // as created (every exec cloned from it shares the trampoline).
  kHostNodeRun = 11,
  // A stream capture began / ended (recorder's capture-stream tracking):
  // capture_stream is the origin stream, capture_id CUDA's capture id;
  // graph_id the graph being captured into.
  kCaptureBegan = 12,
  kCaptureEnded = 13,
};

// GraphEvent::capture_stream when the event names no stream.
inline constexpr uint32_t kNoCaptureStream = UINT32_MAX;

struct GraphEvent {
  GraphEventKind kind = GraphEventKind::kGraphCreated;
  uint64_t timestamp_ns = 0;
  uint32_t os_tid = 0;
  uint32_t graph_id = 0;
  uint64_t node_id = 0;
  uint32_t node_type = 0;
  uint32_t original_graph_id = 0;
  uint64_t original_node_id = 0;
  uint64_t peer_node_id = 0;
  uint32_t exec_id = 0;
  std::string function_name;
  uint64_t function_address = 0;
  uint64_t event_handle = 0;
  uint32_t context_id = 0;
  uint32_t device_id = 0;
  uint64_t end_ns = 0;  // kHostNodeRun only
  // kNodeCreated under a stream capture: CUPTI's id (the activity records'
  // streamId space) of the stream the creating call was made on; the
  // CUstream value the program passed; that call's correlation id.
  // Captures recorded without it read kNoCaptureStream.
  uint32_t capture_stream = kNoCaptureStream;
  uint64_t capture_stream_handle = 0;
  uint32_t api_correlation_id = 0;
  uint64_t capture_id = 0;    // kCaptureBegan / kCaptureEnded
  uint32_t capture_mode = 0;  // kCaptureBegan: CUstreamCaptureMode
  bool operator==(const GraphEvent&) const = default;
};

enum class WindowMarkKind : uint8_t { kOpen = 0, kClose = 1, kInstant = 2 };

struct WindowMark {
  WindowMarkKind kind = WindowMarkKind::kInstant;
  uint64_t timestamp_ns = 0;
  uint32_t os_tid = 0;
  uint64_t id = 0;
  std::string label;
  bool operator==(const WindowMark&) const = default;
};

struct ThreadInfo {
  uint32_t pid = 0;
  uint64_t cupti_thread_id = 0;
  uint32_t os_tid = 0;
  std::string name;
  bool operator==(const ThreadInfo&) const = default;
};

// A stream the program created: its priority and flags (capture.capnp).
struct StreamInfo {
  uint32_t device = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  int32_t priority = 0;
  uint32_t flags = 0;
  uint64_t timestamp_ns = 0;
  uint32_t os_tid = 0;
  bool operator==(const StreamInfo&) const = default;
};

enum class MetadataKey : uint8_t {
  kGlobal = 0,
  kExternalId = 1,
  kCorrelationId = 2,
  kGraphNode = 3,
  kRange = 4,
};

struct MetadataBlob {
  MetadataKey key_kind = MetadataKey::kGlobal;
  uint64_t key = 0;
  std::string name;
  std::string content_type;
  std::string data;
  uint64_t timestamp_ns = 0;
  uint32_t os_tid = 0;
  bool operator==(const MetadataBlob&) const = default;
};

struct RecorderStats {
  uint64_t timestamp_ns = 0;
  uint64_t cupti_dropped_records = 0;
  uint64_t buffers_dropped_pool_empty = 0;
  uint64_t buffers_dropped_queue_full = 0;
  uint64_t bytes_dropped = 0;
  uint64_t messages_dropped = 0;
  uint64_t queue_high_water = 0;
  uint64_t frames_written = 0;
  uint64_t bytes_written = 0;
  std::string writer_error;
  std::vector<std::pair<std::string, uint64_t>> extra;
  bool operator==(const RecorderStats&) const = default;
};

struct CounterDef {
  uint32_t id = 0;
  std::string name;
  std::string unit;
  uint32_t device_id = 0;
  bool operator==(const CounterDef&) const = default;
};

struct CounterSample {
  uint32_t id = 0;
  uint64_t timestamp_ns = 0;
  double value = 0;
  bool operator==(const CounterSample&) const = default;
};

struct IndexEntry {
  uint64_t offset = 0;
  uint16_t type = 0;
  uint32_t length = 0;
  uint64_t min_timestamp_ns = 0;
  uint64_t max_timestamp_ns = 0;
  bool operator==(const IndexEntry&) const = default;
};

struct Trailer {
  bool clean_shutdown = false;
  uint64_t end_cupti_ns = 0;
  uint64_t frames = 0;
  uint64_t activity_records = 0;
  std::vector<KindCount> records_per_kind;
  RecorderStats stats;
  std::vector<IndexEntry> index;
  std::string stop_reason;
  // A flight-recorder dump's trigger ("signal", "api: <why>", "exit"); empty otherwise.
  std::string trigger;
  bool operator==(const Trailer&) const = default;
};

// Every small message a producer can hand to the writer. The writer batches
// them by type into frames.
using SmallMessage = std::variant<SessionInfo, DeviceInfo, ClockSample, StringDef, RangeEvent,
                                  GraphEvent, WindowMark, ThreadInfo, MetadataBlob,
                                  RecorderStats, CounterDef, CounterSample, StreamInfo>;

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_MODEL_H_
