#include "gpucap/format/frame_ring.h"

#include <algorithm>

namespace gpucap::format {

bool IsDefinitionFrame(FrameType type) {
  switch (type) {
    case FrameType::kSession:
    case FrameType::kDevices:
    case FrameType::kThreads:
    case FrameType::kStreams:
    case FrameType::kStrings:
    case FrameType::kGraphs:
    case FrameType::kClocks:
      return true;
    default:
      return false;
  }
}

void FrameRing::Add(const FrameHeader& header, std::span<const ByteSpan> pieces, uint64_t min_ts,
                    uint64_t max_ts, uint64_t now_ns, uint64_t activity_records,
                    std::vector<KindCount> kind_counts) {
  RingFrame f;
  f.order = next_order_++;
  f.header = header;
  f.min_ts = min_ts;
  f.max_ts = max_ts;
  f.added_ns = now_ns;
  f.activity_records = activity_records;
  f.kind_counts = std::move(kind_counts);
  size_t size = 0;
  for (const ByteSpan& p : pieces) size += p.size();
  ++counters_.frames_added;
  bool definition = IsDefinitionFrame(static_cast<FrameType>(header.type));
  if (!definition && sizeof(FrameHeader) + size > limits_.max_span_bytes) {
    // Keeping it would mean dropping everything else and still be over.
    ++counters_.frames_dropped;
    counters_.bytes_dropped += sizeof(FrameHeader) + size;
    counters_.records_dropped += activity_records;
    Age(now_ns);
    return;
  }
  f.payload.reserve(size);
  for (const ByteSpan& p : pieces) f.payload.insert(f.payload.end(), p.begin(), p.end());
  if (definition) {
    ++counters_.definition_frames;
    counters_.definition_bytes += f.bytes();
    definitions_.push_back(std::move(f));
    Age(now_ns);
    return;
  }
  uint64_t bytes = f.bytes();
  while (!spans_.empty() && counters_.span_bytes + bytes > limits_.max_span_bytes) DropOldestSpan();
  counters_.span_bytes += bytes;
  ++counters_.span_frames;
  counters_.span_bytes_high = std::max(counters_.span_bytes_high, counters_.span_bytes);
  spans_.push_back(std::move(f));
  Age(now_ns);
}

void FrameRing::Age(uint64_t now_ns) {
  if (limits_.max_age_ns == 0) return;
  while (!spans_.empty() && now_ns > spans_.front().added_ns &&
         now_ns - spans_.front().added_ns > limits_.max_age_ns) {
    DropOldestSpan();
  }
}

void FrameRing::DropOldestSpan() {
  const RingFrame& f = spans_.front();
  counters_.span_bytes -= f.bytes();
  --counters_.span_frames;
  ++counters_.frames_dropped;
  counters_.bytes_dropped += f.bytes();
  counters_.records_dropped += f.activity_records;
  spans_.pop_front();
}

void FrameRing::ForEach(const std::function<void(const RingFrame&)>& fn) const {
  size_t d = 0, s = 0;
  while (d < definitions_.size() || s < spans_.size()) {
    bool take_definition =
        s == spans_.size() || (d < definitions_.size() && definitions_[d].order < spans_[s].order);
    fn(take_definition ? definitions_[d++] : spans_[s++]);
  }
}

}  // namespace gpucap::format
