#include "gpucap/format/recording_state.h"

#include <algorithm>
#include <cstring>

namespace gpucap::format {

const char* RecordingStateName(RecordingState state) {
  switch (state) {
    case RecordingState::kPaused: return "paused";
    case RecordingState::kRecording: return "recording";
    case RecordingState::kSampled: return "sampled";
  }
  return "unknown";
}

MetadataBlob RecordingChangeBlob(const RecordingChange& change) {
  MetadataBlob b;
  b.key_kind = MetadataKey::kGlobal;
  b.name = kRecordingStateBlob;
  b.content_type = "text/plain";
  std::string why = change.why;
  std::replace(why.begin(), why.end(), '\t', ' ');
  b.data = std::string(RecordingStateName(change.state)) + "\t" + why;
  b.timestamp_ns = change.timestamp_ns;
  b.os_tid = change.os_tid;
  return b;
}

std::optional<RecordingChange> ParseRecordingChange(const MetadataBlob& blob) {
  if (blob.key_kind != MetadataKey::kGlobal || blob.name != kRecordingStateBlob) return std::nullopt;
  size_t tab = blob.data.find('\t');
  std::string state = blob.data.substr(0, tab);
  RecordingChange c;
  if (state == "paused") {
    c.state = RecordingState::kPaused;
  } else if (state == "recording") {
    c.state = RecordingState::kRecording;
  } else if (state == "sampled") {
    c.state = RecordingState::kSampled;
  } else {
    return std::nullopt;
  }
  if (tab != std::string::npos) c.why = blob.data.substr(tab + 1);
  c.timestamp_ns = blob.timestamp_ns;
  c.os_tid = blob.os_tid;
  return c;
}

std::vector<RecordingInterval> RecordingIntervals(const std::vector<MetadataBlob>& metadata,
                                                  uint64_t end_ns) {
  std::vector<RecordingChange> changes;
  for (const MetadataBlob& b : metadata) {
    if (auto c = ParseRecordingChange(b)) changes.push_back(std::move(*c));
  }
  // Blobs come batched per thread: the app thread's switches and the control
  // thread's may interleave out of order in the file.
  std::stable_sort(changes.begin(), changes.end(),
                   [](const RecordingChange& a, const RecordingChange& b) {
                     return a.timestamp_ns < b.timestamp_ns;
                   });
  std::vector<RecordingInterval> out;
  for (size_t i = 0; i < changes.size(); ++i) {
    uint64_t end = i + 1 < changes.size() ? changes[i + 1].timestamp_ns
                                          : std::max(end_ns, changes[i].timestamp_ns);
    // A repeated state stays an interval of its own: an early-armed sample
    // and its range's start say different things.
    out.push_back({changes[i].state, changes[i].why, changes[i].timestamp_ns, end});
  }
  return out;
}

}  // namespace gpucap::format
