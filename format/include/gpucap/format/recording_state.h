// When the recorder was recording, and why: a capture that is paused most of
// the time (capture ranges, sampled steps, trigger files, SIGUSR2) says so in
// global metadata blobs named kRecordingStateBlob, one per change. The
// recorder writes them, `gpucap info` and the builder's trace header read
// them. The blob's data is "STATE\tWHY" (WHY free text, no tab).
#ifndef GPUCAP_FORMAT_RECORDING_STATE_H_
#define GPUCAP_FORMAT_RECORDING_STATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpucap/format/model.h"

namespace gpucap::format {

inline constexpr char kRecordingStateBlob[] = "gpucap.recording";

enum class RecordingState : uint8_t {
  kPaused = 0,     // nothing of the GPU recorded (graph topology still is)
  kRecording = 1,  // a capture range, a trigger or SIGUSR2 asked for it
  kSampled = 2,    // one matching range in N (--sample N)
};

const char* RecordingStateName(RecordingState state);

struct RecordingChange {
  RecordingState state = RecordingState::kPaused;
  std::string why;  // e.g. "nvtx range 'step#199' (sample 2, 1 in 100)"
  uint64_t timestamp_ns = 0;
  uint32_t os_tid = 0;
};

MetadataBlob RecordingChangeBlob(const RecordingChange& change);
// nullopt when the blob is not a recording change (other name or key kind,
// unknown state).
std::optional<RecordingChange> ParseRecordingChange(const MetadataBlob& blob);

// One stretch between two changes; the last ends at end_ns.
struct RecordingInterval {
  RecordingState state = RecordingState::kPaused;
  std::string why;
  uint64_t start_ns = 0, end_ns = 0;
};

// The capture's changes in time order as intervals. A capture without any
// (recorded whole) gives none.
std::vector<RecordingInterval> RecordingIntervals(const std::vector<MetadataBlob>& metadata,
                                                  uint64_t end_ns);

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_RECORDING_STATE_H_
