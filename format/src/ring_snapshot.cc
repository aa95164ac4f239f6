#include "gpucap/format/ring_snapshot.h"

#include <capnp/message.h>
#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "capture.capnp.h"
#include "crc32c.h"
#include "frame_codec.h"
#include "message_codec.h"

namespace gpucap::format {
namespace {

// Cap'n Proto's list pointer (encoding spec): bits 0-1 = 1, bits 2-31 the
// signed offset in words from the word after the pointer, bits 32-34 the
// element size (2: bytes), bits 35-63 the element count (a text's bytes and
// its NUL).
constexpr uint64_t kListPointer = 1, kByteElements = 2;

uint64_t ListPointerUpper(size_t count) { return (uint64_t{count} << 3) | kByteElements; }

// write(2) until all is written; false on an error (EINTR retried).
bool WriteAll(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

RingSnapshot::RingSnapshot() = default;
RingSnapshot::~RingSnapshot() = default;

std::unique_ptr<RingSnapshot> RingSnapshot::Build(const FrameRing& ring, Trailer trailer) {
  std::unique_ptr<RingSnapshot> s(new RingSnapshot);
  s->file_header_ = MakeFileHeader(0);
  s->frames_.reserve(ring.frames_held());
  uint64_t end = 0;
  ring.Visit([&](const RingFrame& f) {
    s->frames_.push_back({f.header, f.payload.data()});
    end = std::max(end, f.max_ts);
  });
  if (trailer.end_cupti_ns == 0) trailer.end_cupti_ns = end;

  // The trigger is set last in the trailer (EncodeTrailer), so its bytes
  // are the message's last; a placeholder of the most characters reserves
  // their words, and the handler changes the bytes and the count only.
  trailer.trigger.assign(kMaxTrigger, '?');
  trailer = RingCaptureTrailer(ring, std::move(trailer));
  // One segment, so that the trigger's pointer and bytes are found in it:
  // an index entry takes 4 words, a named count about 6, the rest a few
  // dozen. Sized close, as Cap'n Proto zeroes it; twice as much if short.
  size_t words = 256 + 4 * trailer.index.size() + 8 * trailer.stats.extra.size() +
                 2 * trailer.records_per_kind.size();
  for (int tries = 0; tries < 2; ++tries, words *= 2) {
    s->message_ = std::make_unique<capnp::MallocMessageBuilder>(static_cast<unsigned>(words),
                                                                 capnp::AllocationStrategy::FIXED_SIZE);
    EncodeTrailer(trailer, s->message_->initRoot<schema::Trailer>());
    if (s->message_->getSegmentsForOutput().size() == 1) break;
  }
  schema::Trailer::Builder root = s->message_->getRoot<schema::Trailer>();
  auto segments = s->message_->getSegmentsForOutput();
  if (segments.size() != 1) return nullptr;
  // The builder's own memory: the handler writes the trigger into it.
  s->segment_ = reinterpret_cast<uint8_t*>(const_cast<capnp::word*>(segments[0].begin()));
  s->segment_bytes_ = segments[0].size() * sizeof(capnp::word);
  size_t text_at = static_cast<size_t>(reinterpret_cast<const uint8_t*>(root.getTrigger().begin()) - s->segment_);
  if (text_at % 8 != 0) return nullptr;
  // The pointer to it: a built message points to each object once, and the
  // root struct, whose pointer section holds it, comes first.
  size_t pointer_at = SIZE_MAX;
  for (size_t i = 0; i < text_at / 8 && pointer_at == SIZE_MAX; ++i) {
    uint64_t w;
    std::memcpy(&w, s->segment_ + 8 * i, 8);
    if ((w & 3) != kListPointer || (w >> 32) != ListPointerUpper(kMaxTrigger + 1)) continue;
    int64_t offset = static_cast<int32_t>(static_cast<uint32_t>(w)) >> 2;
    if (static_cast<int64_t>(i) + 1 + offset == static_cast<int64_t>(text_at / 8)) pointer_at = 8 * i;
  }
  if (pointer_at == SIZE_MAX) return nullptr;
  s->trigger_text_ = text_at;
  s->trigger_pointer_ = pointer_at;
  // The stream encoding's table for one segment: its count less one, its size.
  s->segment_table_[0] = 0;
  s->segment_table_[1] = static_cast<uint32_t>(segments[0].size());
  s->trailer_header_ = MakeFrameHeader(static_cast<uint16_t>(FrameType::kTrailer), 0,
                                       static_cast<uint32_t>(s->frames_.size()), {});
  s->trailer_header_.length = static_cast<uint32_t>(sizeof(s->segment_table_) + s->segment_bytes_);
  s->footer_ = MakeFooter(trailer.stats.bytes_written);
  return s;
}

uint64_t RingSnapshot::bytes() const {
  uint64_t n = sizeof(FileHeader) + sizeof(FrameHeader) + trailer_header_.length + sizeof(Footer);
  for (const Frame& f : frames_) n += sizeof(FrameHeader) + f.header.length;
  return n;
}

void RingSnapshot::SetTrigger(const char* trigger) {
  size_t n = 0;
  while (trigger[n] != '\0' && n < kMaxTrigger) ++n;
  uint8_t* text = segment_ + trigger_text_;
  // The slot's words: the text, its NUL, zeros to the word's end.
  size_t slot = (kMaxTrigger + 1 + 7) & ~size_t{7};
  for (size_t i = 0; i < slot; ++i) text[i] = i < n ? static_cast<uint8_t>(trigger[i]) : 0;
  uint32_t upper = static_cast<uint32_t>(ListPointerUpper(n + 1));
  std::memcpy(segment_ + trigger_pointer_ + 4, &upper, 4);
  // The portable checksum: the hardware one's first call initializes a
  // static, which is no business of a signal handler.
  FrameHeader& h = trailer_header_;
  h.payload_crc = Crc32cPortable(Crc32cPortable(0, segment_table_, sizeof(segment_table_)), segment_, segment_bytes_);
  h.header_crc = Crc32cPortable(0, &h, offsetof(FrameHeader, header_crc));
}

bool RingSnapshot::WriteTo(int fd, const char* trigger, int64_t created_realtime_ns) {
  SetTrigger(trigger);
  file_header_.created_realtime_ns = created_realtime_ns;
  file_header_.crc = Crc32cPortable(0, &file_header_, offsetof(FileHeader, crc));
  if (!WriteAll(fd, &file_header_, sizeof(file_header_))) return false;
  uint32_t sequence = 0;
  for (const Frame& f : frames_) {
    FrameHeader h = f.header;  // numbered afresh; the payload and its checksum are as made
    h.sequence = sequence++;
    h.header_crc = Crc32cPortable(0, &h, offsetof(FrameHeader, header_crc));
    if (!WriteAll(fd, &h, sizeof(h)) || !WriteAll(fd, f.payload, f.header.length)) return false;
  }
  return WriteAll(fd, &trailer_header_, sizeof(trailer_header_)) &&
         WriteAll(fd, segment_table_, sizeof(segment_table_)) && WriteAll(fd, segment_, segment_bytes_) &&
         WriteAll(fd, &footer_, sizeof(footer_));
}

}  // namespace gpucap::format
