#include "gpucap/format/ring_snapshot.h"

#include <capnp/message.h>
#include <errno.h>
#include <unistd.h>

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

std::unique_ptr<RingSnapshot> RingSnapshot::Build(const FrameRing& ring, Trailer trailer) {
  std::unique_ptr<RingSnapshot> s(new RingSnapshot);
  s->file_header_ = MakeFileHeader(0);
  const RingCounters& rc = ring.counters();
  s->frames_.reserve(rc.definition_frames + rc.span_frames);
  uint32_t sequence = 0;
  ring.ForEach([&](const RingFrame& f) { s->frames_.push_back({Resequenced(f.header, sequence++), f.payload.data()}); });

  // The trigger is set last in the trailer (EncodeTrailer), so its bytes
  // are the message's last; a placeholder of the most characters reserves
  // their words, and the handler changes the bytes and the count only.
  trailer.trigger.assign(kMaxTrigger, '?');
  trailer = RingCaptureTrailer(ring, std::move(trailer));
  // One segment, so that the trigger's pointer and bytes are found in it.
  size_t words = 4096 + 8 * trailer.index.size() + 8 * trailer.stats.extra.size();
  capnp::MallocMessageBuilder builder(static_cast<unsigned>(words));
  schema::Trailer::Builder root = builder.initRoot<schema::Trailer>();
  EncodeTrailer(trailer, root);
  auto segments = builder.getSegmentsForOutput();
  if (segments.size() != 1) return nullptr;
  const auto* seg = reinterpret_cast<const uint8_t*>(segments[0].begin());
  size_t seg_words = segments[0].size();
  size_t text_at = static_cast<size_t>(reinterpret_cast<const uint8_t*>(root.getTrigger().begin()) - seg);
  if (text_at % 8 != 0) return nullptr;
  size_t pointer_at = SIZE_MAX;
  for (size_t i = 0; i < seg_words; ++i) {
    uint64_t w;
    std::memcpy(&w, seg + 8 * i, 8);
    if ((w & 3) != kListPointer || (w >> 32) != ListPointerUpper(kMaxTrigger + 1)) continue;
    int64_t offset = static_cast<int32_t>(static_cast<uint32_t>(w)) >> 2;
    if (static_cast<int64_t>(i) + 1 + offset != static_cast<int64_t>(text_at / 8)) continue;
    if (pointer_at != SIZE_MAX) return nullptr;  // not one pointer: do not guess
    pointer_at = 8 * i;
  }
  if (pointer_at == SIZE_MAX) return nullptr;

  FlatMessage flat(builder);
  size_t seg_in_payload = flat.bytes() - 8 * seg_words;  // after the segment table
  FrameHeader th = MakeFrameHeader(static_cast<uint16_t>(FrameType::kTrailer), 0, sequence, flat.pieces());
  s->trailer_.resize(sizeof(th) + flat.bytes());
  std::memcpy(s->trailer_.data(), &th, sizeof(th));
  size_t at = sizeof(th);
  for (ByteSpan p : flat.pieces()) {
    std::memcpy(s->trailer_.data() + at, p.data(), p.size());
    at += p.size();
  }
  s->trigger_text_ = sizeof(th) + seg_in_payload + text_at;
  s->trigger_pointer_ = sizeof(th) + seg_in_payload + pointer_at;
  s->footer_ = MakeFooter(trailer.stats.bytes_written);
  return s;
}

uint64_t RingSnapshot::bytes() const {
  uint64_t n = sizeof(FileHeader) + trailer_.size() + sizeof(Footer);
  for (const Frame& f : frames_) n += sizeof(FrameHeader) + f.header.length;
  return n;
}

void RingSnapshot::SetTrigger(const char* trigger) {
  size_t n = 0;
  while (trigger[n] != '\0' && n < kMaxTrigger) ++n;
  uint8_t* text = trailer_.data() + trigger_text_;
  // The slot's words: the text, its NUL, zeros to the word's end.
  size_t slot = (kMaxTrigger + 1 + 7) & ~size_t{7};
  for (size_t i = 0; i < slot; ++i) text[i] = i < n ? static_cast<uint8_t>(trigger[i]) : 0;
  uint32_t upper = static_cast<uint32_t>(ListPointerUpper(n + 1));
  std::memcpy(trailer_.data() + trigger_pointer_ + 4, &upper, 4);
  FrameHeader h;
  std::memcpy(&h, trailer_.data(), sizeof(h));
  // The portable checksum: the hardware one's first call initializes a
  // static, which is no business of a signal handler.
  h.payload_crc = Crc32cPortable(0, trailer_.data() + sizeof(h), h.length);
  h.header_crc = Crc32cPortable(0, &h, offsetof(FrameHeader, header_crc));
  std::memcpy(trailer_.data(), &h, sizeof(h));
}

bool RingSnapshot::WriteTo(int fd, const char* trigger, int64_t created_realtime_ns) {
  SetTrigger(trigger);
  file_header_.created_realtime_ns = created_realtime_ns;
  file_header_.crc = Crc32cPortable(0, &file_header_, offsetof(FileHeader, crc));
  if (!WriteAll(fd, &file_header_, sizeof(file_header_))) return false;
  for (const Frame& f : frames_) {
    if (!WriteAll(fd, &f.header, sizeof(f.header)) || !WriteAll(fd, f.payload, f.header.length)) return false;
  }
  return WriteAll(fd, trailer_.data(), trailer_.size()) && WriteAll(fd, &footer_, sizeof(footer_));
}

}  // namespace gpucap::format
