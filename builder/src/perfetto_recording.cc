#include "perfetto_recording.h"

#include "gpucap/format/recording_state.h"
#include "perfetto_fields.h"

namespace gpucap::builder {
namespace {

// TrackEvent and DebugAnnotation fields written by value, not interned
// (shared/reference/perfetto-facts.md).
constexpr uint32_t kEventCategories = 22;
constexpr uint32_t kEventName = 23;
constexpr uint32_t kAnnotationName = 10;
constexpr char kCategory[] = "gpucap";
constexpr char kDescription[] =
    "When the recorder recorded in this window: paused, recording (a capture range, trigger file or "
    "SIGUSR2) or sampled (one matching range in N), each with why; the Chrome JSON's gpucap.recording.";

void Descriptor(uint64_t uuid, proto::Writer* w) {
  auto packet = w->Begin(pf::trace::kPacket);
  auto td = w->Begin(pf::packet::kTrackDescriptor);
  w->Varint(pf::track::kUuid, uuid);
  w->String(pf::track::kName, kRecordingTrackName);
  w->String(pf::track::kDescription, kDescription);
  w->End(td);
  w->End(packet);
}

// One BEGIN or END at `ts` (CLOCK_REALTIME ns, the trace's time, given as
// Perfetto's default clock like every other sequence's).
void Event(uint64_t uuid, uint32_t sequence_id, bool first, uint64_t ts, const format::RecordingInterval* begin,
           proto::Writer* w) {
  auto packet = w->Begin(pf::trace::kPacket);
  w->Varint(pf::packet::kTrustedPacketSequenceId, sequence_id);
  w->Varint(pf::packet::kSequenceFlags, first ? pf::packet::kSeqIncrementalStateCleared |
                                                    pf::packet::kSeqNeedsIncrementalState
                                              : pf::packet::kSeqNeedsIncrementalState);
  auto event = w->Begin(pf::packet::kTrackEvent);
  w->Varint(pf::event::kType, begin ? pf::event::kSliceBegin : pf::event::kSliceEnd);
  w->Varint(pf::event::kTrackUuid, uuid);
  if (begin) {
    w->String(kEventName, format::RecordingStateName(begin->state));
    w->String(kEventCategories, kCategory);
    auto a = w->Begin(pf::event::kDebugAnnotations);
    w->String(kAnnotationName, "why");
    w->String(pf::annotation::kStringValue, begin->why);
    w->End(a);
  }
  w->End(event);
  w->Varint(pf::packet::kTimestamp, ts);
  w->End(packet);
}

}  // namespace

void WriteRecordingTrack(const TraceHeader& header, uint64_t uuid, uint32_t sequence_id, proto::Writer* w) {
  if (header.recording.empty()) return;
  Descriptor(uuid, w);
  bool first = true;
  for (const format::RecordingInterval& r : header.recording) {
    // Intervals follow each other: each END comes before the next BEGIN.
    uint64_t end = r.end_ns < r.start_ns ? r.start_ns : r.end_ns;
    Event(uuid, sequence_id, first, r.start_ns, &r, w);
    Event(uuid, sequence_id, false, end, nullptr, w);
    first = false;
  }
}

}  // namespace gpucap::builder
