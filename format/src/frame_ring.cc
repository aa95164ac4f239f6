#include "gpucap/format/frame_ring.h"

#include <capnp/message.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>

#include "capture.capnp.h"
#include "crc32c.h"
#include "frame_codec.h"
#include "message_codec.h"

namespace gpucap::format {

namespace {

size_t TotalSize(std::span<const ByteSpan> pieces) {
  size_t size = 0;
  for (const ByteSpan& p : pieces) size += p.size();
  return size;
}

// The pieces one after the other, as a frame's payload.
std::vector<uint8_t> Joined(std::span<const ByteSpan> pieces) {
  std::vector<uint8_t> payload;
  payload.reserve(TotalSize(pieces));
  for (const ByteSpan& p : pieces) payload.insert(payload.end(), p.begin(), p.end());
  return payload;
}

}  // namespace

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
                    std::vector<KindCount> kind_counts, bool keep) {
  RingFrame f;
  f.order = next_order_++;
  f.header = header;
  f.min_ts = min_ts;
  f.max_ts = max_ts;
  f.added_ns = now_ns;
  f.activity_records = activity_records;
  f.kind_counts = std::move(kind_counts);
  size_t size = TotalSize(pieces);
  ++counters_.frames_added;
  bool definition = keep || IsDefinitionFrame(static_cast<FrameType>(header.type));
  if (!definition && sizeof(FrameHeader) + size > limits_.max_span_bytes) {
    // Keeping it would mean dropping everything else and still be over.
    ++counters_.frames_dropped;
    counters_.bytes_dropped += sizeof(FrameHeader) + size;
    counters_.records_dropped += activity_records;
    Age(now_ns);
    return;
  }
  f.payload = Joined(pieces);
  Count(f, +1);
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

void FrameRing::Count(const RingFrame& f, int sign) {
  if (sign > 0) {
    held_records_ += f.activity_records;
    for (const KindCount& kc : f.kind_counts) held_per_kind_[kc.kind] += kc.count;
    return;
  }
  held_records_ -= f.activity_records;
  for (const KindCount& kc : f.kind_counts) {
    auto it = held_per_kind_.find(kc.kind);
    if (it == held_per_kind_.end()) continue;
    it->second -= std::min(it->second, kc.count);
    if (it->second == 0) held_per_kind_.erase(it);
  }
}

void FrameRing::DropOldestSpan() {
  const RingFrame& f = spans_.front();
  Count(f, -1);
  counters_.span_bytes -= f.bytes();
  --counters_.span_frames;
  ++counters_.frames_dropped;
  counters_.bytes_dropped += f.bytes();
  counters_.records_dropped += f.activity_records;
  if (hold_dropped_) retired_.push_back(std::move(spans_.front().payload));
  spans_.pop_front();
}

uint64_t* FrameRing::CarriedCounter(FrameType type) {
  return type == FrameType::kWindows ? &counters_.open_marks_carried : &counters_.open_ranges_carried;
}

void FrameRing::SetLead(const FrameHeader& header, std::span<const ByteSpan> pieces, uint64_t min_ts,
                        uint64_t max_ts, uint64_t carried) {
  auto type = static_cast<FrameType>(header.type);
  ClearLead(type);
  RingFrame lead;
  lead.header = header;
  lead.min_ts = min_ts;
  lead.max_ts = max_ts;
  lead.payload = Joined(pieces);
  auto at = std::find_if(leads_.begin(), leads_.end(), [&](const RingFrame& f) { return f.header.type > header.type; });
  leads_.insert(at, std::move(lead));
  *CarriedCounter(type) = carried;
}

void FrameRing::ClearLead(FrameType type) {
  auto it = std::find_if(leads_.begin(), leads_.end(),
                         [&](const RingFrame& f) { return f.header.type == static_cast<uint16_t>(type); });
  if (it == leads_.end()) return;
  // A snapshot built before may point to its bytes, as to a dropped frame's.
  if (hold_dropped_) retired_.push_back(std::move(it->payload));
  leads_.erase(it);
  *CarriedCounter(type) = 0;
}

const RingFrame* FrameRing::lead(FrameType type) const {
  for (const RingFrame& f : leads_) {
    if (f.header.type == static_cast<uint16_t>(type)) return &f;
  }
  return nullptr;
}

FrameHeader Resequenced(const FrameHeader& header, uint32_t sequence) {
  FrameHeader h = header;
  h.sequence = sequence;
  h.header_crc = Crc32c(0, &h, offsetof(FrameHeader, header_crc));
  return h;
}

Trailer RingCaptureTrailer(const FrameRing& ring, Trailer trailer) {
  uint64_t offset = sizeof(FileHeader);
  uint32_t sequence = 0;
  std::vector<IndexEntry> index;
  index.reserve(ring.frames_held());
  ring.Visit([&](const RingFrame& f) {
    index.push_back(IndexEntry{offset, f.header.type, f.header.length, f.min_ts, f.max_ts});
    offset += f.bytes();
    ++sequence;
  });
  trailer.clean_shutdown = true;
  trailer.frames = sequence;
  trailer.activity_records = ring.held_records();
  trailer.records_per_kind.clear();
  for (auto [kind, count] : ring.held_per_kind()) trailer.records_per_kind.push_back({kind, count});
  RecorderStats& st = trailer.stats;
  st.frames_written = sequence;
  st.bytes_written = offset;
  const RingCounters& rc = ring.counters();
  st.extra.emplace_back("ring_frames_dropped", rc.frames_dropped);
  st.extra.emplace_back("ring_bytes_dropped", rc.bytes_dropped);
  st.extra.emplace_back("ring_records_dropped", rc.records_dropped);
  st.extra.emplace_back("ring_span_bytes", rc.span_bytes);
  st.extra.emplace_back("ring_span_bytes_high", rc.span_bytes_high);
  st.extra.emplace_back("ring_bound_bytes", ring.limits().max_span_bytes);
  st.extra.emplace_back("ring_definition_bytes", rc.definition_bytes);
  st.extra.emplace_back("ring_open_ranges_carried", rc.open_ranges_carried);
  st.extra.emplace_back("ring_open_marks_carried", rc.open_marks_carried);
  st.extra.emplace_back("ring_open_ranges_forgotten", rc.open_ranges_forgotten);
  st.extra.emplace_back("ring_open_marks_forgotten", rc.open_marks_forgotten);
  trailer.index = std::move(index);
  return trailer;
}

Status WriteRingCapture(const FrameRing& ring, Trailer trailer, int64_t created_realtime_ns, Sink* sink) {
  FileHeader file_header = MakeFileHeader(created_realtime_ns);
  ByteSpan head(reinterpret_cast<const uint8_t*>(&file_header), sizeof(file_header));
  Status s = sink->Append({&head, 1});
  uint32_t sequence = 0;
  ring.ForEach([&](const RingFrame& f) {
    if (!s.ok()) return;
    FrameHeader h = Resequenced(f.header, sequence++);
    std::array<ByteSpan, 2> pieces = {ByteSpan(reinterpret_cast<const uint8_t*>(&h), sizeof(h)),
                                      ByteSpan(f.payload.data(), f.payload.size())};
    s = sink->Append(pieces);
  });
  if (!s.ok()) return s;
  trailer = RingCaptureTrailer(ring, std::move(trailer));
  uint64_t offset = trailer.stats.bytes_written;
  capnp::MallocMessageBuilder builder;
  EncodeTrailer(trailer, builder.initRoot<schema::Trailer>());
  FlatMessage flat(builder);
  FrameHeader th = MakeFrameHeader(static_cast<uint16_t>(FrameType::kTrailer), 0, sequence, flat.pieces());
  std::vector<ByteSpan> all;
  all.emplace_back(reinterpret_cast<const uint8_t*>(&th), sizeof(th));
  all.insert(all.end(), flat.pieces().begin(), flat.pieces().end());
  s = sink->Append(all);
  if (!s.ok()) return s;
  Footer footer = MakeFooter(offset);
  ByteSpan foot(reinterpret_cast<const uint8_t*>(&footer), sizeof(footer));
  return sink->Append({&foot, 1});
}

}  // namespace gpucap::format
