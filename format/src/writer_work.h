// What the capture writer's thread works on: the units handed to it, the
// batches of small messages it gathers per frame type and the order it
// flushes them in, with the sizes that decide when. Private to
// capture_writer.cc.
#ifndef GPUCAP_FORMAT_SRC_WRITER_WORK_H_
#define GPUCAP_FORMAT_SRC_WRITER_WORK_H_

#include <time.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "gpucap/format/capture_writer.h"  // ActivityBuffer
#include "gpucap/format/frame.h"           // FrameType
#include "gpucap/format/model.h"           // SmallMessage

namespace gpucap::format::writer_internal {

using Clock = std::chrono::steady_clock;

inline int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// Small batches below this size are not worth compressing.
constexpr size_t kCompressMinBytes = 2048;
// Room kept under the size cap for the trailer and footer.
constexpr uint64_t kTrailerReserveBase = 64 << 10;
constexpr uint64_t kTrailerReservePerFrame = 48;

inline std::optional<uint64_t> TimestampOf(const SmallMessage& m) {
  if (auto* r = std::get_if<RangeEvent>(&m)) return r->timestamp_ns;
  if (auto* g = std::get_if<GraphEvent>(&m)) return g->timestamp_ns;
  if (auto* w = std::get_if<WindowMark>(&m)) return w->timestamp_ns;
  if (auto* c = std::get_if<ClockSample>(&m)) return c->cupti_ns;
  if (auto* s = std::get_if<CounterSample>(&m)) return s->timestamp_ns;
  if (auto* b = std::get_if<MetadataBlob>(&m)) return b->timestamp_ns ? b->timestamp_ns : std::optional<uint64_t>();
  return std::nullopt;
}

struct Work {
  enum class Kind { kActivity, kMessages, kDump };
  Kind kind = Kind::kMessages;
  ActivityBuffer buffer;
  std::vector<SmallMessage> messages;
  // kDump (ring mode): what asked for it, and the caller's trailer fields.
  std::string trigger;
  Trailer trailer;
};

// Pending small messages of one frame type.
struct Batch {
  std::vector<SmallMessage> messages;
  size_t bytes = 0;
  Clock::time_point first;
};

// Strings first: chunks written after a flush must find their names defined.
constexpr std::array<FrameType, 12> kBatchOrder = {
    FrameType::kSession, FrameType::kDevices, FrameType::kThreads, FrameType::kStreams, FrameType::kStrings,
    FrameType::kClocks,  FrameType::kGraphs,  FrameType::kRanges,  FrameType::kWindows,
    FrameType::kMetadata, FrameType::kCounters, FrameType::kStats};

}  // namespace gpucap::format::writer_internal

#endif  // GPUCAP_FORMAT_SRC_WRITER_WORK_H_
