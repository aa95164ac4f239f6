#include "gpucap/format/frame.h"

namespace gpucap::format {

const char* FrameTypeName(uint16_t type) {
  switch (static_cast<FrameType>(type)) {
    case FrameType::kSession: return "session";
    case FrameType::kDevices: return "devices";
    case FrameType::kClocks: return "clocks";
    case FrameType::kActivityChunk: return "activity-chunk";
    case FrameType::kStrings: return "strings";
    case FrameType::kRanges: return "ranges";
    case FrameType::kGraphs: return "graphs";
    case FrameType::kWindows: return "windows";
    case FrameType::kThreads: return "threads";
    case FrameType::kMetadata: return "metadata";
    case FrameType::kStats: return "stats";
    case FrameType::kTrailer: return "trailer";
    case FrameType::kCounters: return "counters";
    case FrameType::kStreams: return "streams";
  }
  return "unknown";
}

bool IsKnownFrameType(uint16_t type) {
  return type >= static_cast<uint16_t>(FrameType::kSession) &&
         type <= static_cast<uint16_t>(FrameType::kStreams);
}

}  // namespace gpucap::format
