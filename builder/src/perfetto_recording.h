// When the recorder recorded, in a Perfetto trace: what the Chrome JSON's
// gpucap.recording object says (TraceHeader::recording: paused, recording
// and sampled intervals, each with why), as a root track of its own,
// "gpucap recording", one slice per interval named by its state with the
// why as an argument. Perfetto UI draws root tracks above every process, so
// a person sees at once which steps were sampled.
//
// The track is on a packet sequence of its own, with absolute timestamps
// and nothing interned: it shares no state with the renderer's sequences.
#ifndef GPUCAP_BUILDER_SRC_PERFETTO_RECORDING_H_
#define GPUCAP_BUILDER_SRC_PERFETTO_RECORDING_H_

#include <cstdint>

#include "gpucap/builder/trace_model.h"
#include "proto_writer.h"

namespace gpucap::builder {

inline constexpr char kRecordingTrackName[] = "gpucap recording";

// Writes nothing when the header has no intervals (a capture recorded
// whole). `uuid` and `sequence_id` must be used by nothing else.
void WriteRecordingTrack(const TraceHeader& header, uint64_t uuid, uint32_t sequence_id, proto::Writer* w);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_PERFETTO_RECORDING_H_
