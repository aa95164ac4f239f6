// Field numbers of the Perfetto trace format that gpucap writes: a subset of
// the public protos, written down from their published field numbers
// (../../builder/proto/perfetto_trace.proto says the same in .proto form, for
// protoc --decode in the tests).
#ifndef GPUCAP_BUILDER_SRC_PERFETTO_FIELDS_H_
#define GPUCAP_BUILDER_SRC_PERFETTO_FIELDS_H_

#include <cstdint>

namespace gpucap::builder::pf {

namespace trace {
inline constexpr uint32_t kPacket = 1;
}

namespace packet {
inline constexpr uint32_t kClockSnapshot = 6;
inline constexpr uint32_t kTimestamp = 8;
inline constexpr uint32_t kTrustedPacketSequenceId = 10;
inline constexpr uint32_t kTrackEvent = 11;
inline constexpr uint32_t kInternedData = 12;
inline constexpr uint32_t kSequenceFlags = 13;
inline constexpr uint32_t kTimestampClockId = 58;
inline constexpr uint32_t kTracePacketDefaults = 59;
inline constexpr uint32_t kTrackDescriptor = 60;
inline constexpr uint32_t kFirstPacketOnSequence = 87;

inline constexpr uint32_t kSeqIncrementalStateCleared = 1;
inline constexpr uint32_t kSeqNeedsIncrementalState = 2;
}  // namespace packet

namespace defaults {  // TracePacketDefaults
inline constexpr uint32_t kTimestampClockId = 58;
inline constexpr uint32_t kTrackEventDefaults = 11;
inline constexpr uint32_t kTrackUuid = 11;  // in TrackEventDefaults
}  // namespace defaults

namespace clock {  // ClockSnapshot and its Clock
inline constexpr uint32_t kClocks = 1;
inline constexpr uint32_t kClockId = 1;
inline constexpr uint32_t kTimestamp = 2;
inline constexpr uint32_t kIsIncremental = 3;

inline constexpr uint32_t kRealtime = 1;
inline constexpr uint32_t kBoottime = 6;
// Sequence-scoped clocks are 64-127.
inline constexpr uint32_t kIncremental = 64;
}  // namespace clock

namespace track {  // TrackDescriptor
inline constexpr uint32_t kUuid = 1;
inline constexpr uint32_t kName = 2;
inline constexpr uint32_t kProcess = 3;
inline constexpr uint32_t kThread = 4;
inline constexpr uint32_t kParentUuid = 5;
inline constexpr uint32_t kCounter = 8;
inline constexpr uint32_t kChildOrdering = 11;
inline constexpr uint32_t kSiblingOrderRank = 12;
inline constexpr uint32_t kDescription = 14;
inline constexpr uint32_t kSiblingMergeBehavior = 15;

inline constexpr uint32_t kOrderingExplicit = 3;
inline constexpr uint32_t kMergeNone = 2;
}  // namespace track

namespace process {  // ProcessDescriptor
inline constexpr uint32_t kPid = 1;
inline constexpr uint32_t kProcessName = 6;
inline constexpr uint32_t kProcessLabels = 8;
}  // namespace process

namespace thread {  // ThreadDescriptor
inline constexpr uint32_t kPid = 1;
inline constexpr uint32_t kTid = 2;
inline constexpr uint32_t kThreadName = 5;
}  // namespace thread

namespace counter {  // CounterDescriptor
inline constexpr uint32_t kUnit = 3;
inline constexpr uint32_t kUnitName = 6;

inline constexpr uint32_t kUnitSizeBytes = 3;
}  // namespace counter

namespace event {  // TrackEvent
inline constexpr uint32_t kCategoryIids = 3;
inline constexpr uint32_t kDebugAnnotations = 4;
inline constexpr uint32_t kType = 9;
inline constexpr uint32_t kNameIid = 10;
inline constexpr uint32_t kTrackUuid = 11;
inline constexpr uint32_t kCounterValue = 30;
inline constexpr uint32_t kDoubleCounterValue = 44;
// Flow ids: Perfetto's current fields, repeated fixed64 (track_event.proto:
// flow_ids = 47, terminating_flow_ids = 48). The varint fields before them
// (flow_ids_old = 36, terminating_flow_ids_old = 42) are deprecated, kept
// only for old traces, and not written.
inline constexpr uint32_t kFlowIds = 47;
inline constexpr uint32_t kTerminatingFlowIds = 48;

inline constexpr uint32_t kSliceBegin = 1;
inline constexpr uint32_t kSliceEnd = 2;
inline constexpr uint32_t kInstant = 3;
inline constexpr uint32_t kCounter = 4;
}  // namespace event

namespace annotation {  // DebugAnnotation
inline constexpr uint32_t kNameIid = 1;
inline constexpr uint32_t kBoolValue = 2;
inline constexpr uint32_t kUintValue = 3;
inline constexpr uint32_t kIntValue = 4;
inline constexpr uint32_t kDoubleValue = 5;
inline constexpr uint32_t kStringValue = 6;
inline constexpr uint32_t kArrayValues = 12;
inline constexpr uint32_t kStringValueIid = 17;
}  // namespace annotation

namespace interned {  // InternedData; each entry is {iid=1, name or str=2}
inline constexpr uint32_t kEventCategories = 1;
inline constexpr uint32_t kEventNames = 2;
inline constexpr uint32_t kDebugAnnotationNames = 3;
inline constexpr uint32_t kDebugAnnotationStringValues = 29;
inline constexpr uint32_t kIid = 1;
inline constexpr uint32_t kName = 2;
}  // namespace interned

}  // namespace gpucap::builder::pf

#endif  // GPUCAP_BUILDER_SRC_PERFETTO_FIELDS_H_
