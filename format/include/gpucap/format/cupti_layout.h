// Where the fields gpucap reads sit inside CUPTI activity records, per CUPTI
// version, and the names of runtime and driver API callback ids. The tables
// are generated from the CUPTI headers (format/layouts/gen_cupti_layout.cc)
// and checked in, so readers of captures never include a CUPTI header.
//
// A capture's records are in the layout of the CUPTI that wrote them. Pick a
// table with LayoutForVersion; when a capture comes from a CUPTI version
// gpucap has no table for, MatchLayoutBySize finds a known layout of the
// same kind and record size, which is the best evidence left that the bytes
// mean the same.
#ifndef GPUCAP_FORMAT_CUPTI_LAYOUT_H_
#define GPUCAP_FORMAT_CUPTI_LAYOUT_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace gpucap::format {

// Every field any record layout can name. Each layout holds the subset its
// struct has; the others read as zero.
enum class Field : uint8_t {
  // Shared by several records.
  kStart, kEnd, kCorrelationId, kDeviceId, kContextId, kStreamId,
  kGraphNodeId, kGraphId, kChannelId, kChannelType, kIsDeviceLaunched,
  kFlags, kName, kTimestamp, kReturnValue,
  // CUpti_ActivityKernel*.
  kRegistersPerThread, kCompleted, kQueued, kSubmitted,
  kGridX, kGridY, kGridZ, kBlockX, kBlockY, kBlockZ,
  kStaticSharedMemory, kDynamicSharedMemory, kLocalMemoryPerThread,
  kGridId, kLaunchType, kSharedMemoryExecuted, kClusterX, kClusterY, kClusterZ,
  // Memcpy, peer memcpy, memset.
  kCopyKind, kSrcKind, kDstKind, kBytes, kRuntimeCorrelationId, kCopyCount,
  kSrcDeviceId, kSrcContextId, kDstDeviceId, kDstContextId, kValue, kMemoryKind,
  // CUpti_ActivityAPI.
  kCbid, kProcessId, kThreadId,
  // External correlation.
  kExternalKind, kExternalId,
  // Overhead and marker object ids.
  kOverheadKind, kObjectKind, kObjectProcessId, kObjectThreadId,
  kObjectDeviceId, kObjectContextId, kObjectStreamId,
  // Synchronization and CUDA events.
  kSyncType, kCudaEventId, kCudaEventSyncId, kDeviceTimestamp,
  // Marker.
  kMarkerId, kDomain,
  // Environment.
  kEnvironmentKind, kSmClock, kMemoryClock, kPcieLinkGen, kPcieLinkWidth,
  kClocksThrottleReasons, kGpuTemperature, kPower, kPowerLimit, kFanSpeed,
  // Graph trace (one record per graph launch).
  kEndDeviceId, kEndContextId,
  kCount  // not a field
};
inline constexpr size_t kFieldCount = static_cast<size_t>(Field::kCount);

// A field's place in a record; size 0 means the record has no such field.
struct FieldLoc {
  uint16_t offset = 0;
  uint8_t size = 0;
  bool present() const { return size != 0; }
};

struct RecordLayout {
  uint32_t kind = 0;                 // CUpti_ActivityKind
  std::string_view struct_name;      // e.g. "CUpti_ActivityKernel10"
  uint32_t size = 0;                 // sizeof the struct
  uint32_t cupti_version = 0;        // of the table it comes from
  std::array<FieldLoc, kFieldCount> fields{};

  const FieldLoc& at(Field f) const { return fields[static_cast<size_t>(f)]; }
};

struct LayoutTable {
  uint32_t cupti_version = 0;  // CUPTI_API_VERSION of the headers, e.g. 130001
  std::span<const RecordLayout> records;

  const RecordLayout* Find(uint32_t kind) const;
};

// Every table gpucap knows, newest first.
std::span<const LayoutTable> KnownLayoutTables();

// The table for records written by CUPTI `version`: the exact version, or one
// of the same major.minor release (layouts change between releases, not
// within one). Null when gpucap knows none.
const LayoutTable* LayoutForVersion(uint32_t version);

// A known layout of `kind` whose struct is exactly `size` bytes, newest table
// first; null when none.
const RecordLayout* MatchLayoutBySize(uint32_t kind, uint32_t size);

// "cudaLaunchKernel" for runtime cbid 211, "cuLaunchKernel" for driver cbid
// 307; empty when the id is unknown.
std::string_view RuntimeApiName(uint32_t cbid);
std::string_view DriverApiName(uint32_t cbid);

// Reads a field of a record that is at least `layout.size` bytes long.
// Integers of any width widen to 64 bits; Signed sign-extends.
inline uint64_t ReadUnsigned(const uint8_t* record, FieldLoc loc) {
  switch (loc.size) {
    case 1: return record[loc.offset];
    case 2: { uint16_t v; std::memcpy(&v, record + loc.offset, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, record + loc.offset, 4); return v; }
    case 8: { uint64_t v; std::memcpy(&v, record + loc.offset, 8); return v; }
    default: return 0;
  }
}
inline int64_t ReadSigned(const uint8_t* record, FieldLoc loc) {
  switch (loc.size) {
    case 1: return static_cast<int8_t>(record[loc.offset]);
    case 2: { int16_t v; std::memcpy(&v, record + loc.offset, 2); return v; }
    case 4: { int32_t v; std::memcpy(&v, record + loc.offset, 4); return v; }
    case 8: { int64_t v; std::memcpy(&v, record + loc.offset, 8); return v; }
    default: return 0;
  }
}
// Writes a field: the inverse of ReadUnsigned, for tools and tests that make
// CUPTI-shaped records without CUPTI.
inline void WriteField(uint8_t* record, FieldLoc loc, uint64_t value) {
  switch (loc.size) {
    case 1: record[loc.offset] = static_cast<uint8_t>(value); break;
    case 2: { uint16_t v = static_cast<uint16_t>(value); std::memcpy(record + loc.offset, &v, 2); break; }
    case 4: { uint32_t v = static_cast<uint32_t>(value); std::memcpy(record + loc.offset, &v, 4); break; }
    case 8: std::memcpy(record + loc.offset, &value, 8); break;
    default: break;
  }
}

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_CUPTI_LAYOUT_H_
