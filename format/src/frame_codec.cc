#include "frame_codec.h"

#include <cstring>

#include "crc32c.h"

namespace gpucap::format {

FileHeader MakeFileHeader(int64_t created_realtime_ns) {
  FileHeader h{};
  std::memcpy(h.magic, kFileMagic, sizeof(h.magic));
  h.major = kFormatMajor;
  h.minor = kFormatMinor;
  h.header_size = sizeof(FileHeader);
  h.created_realtime_ns = created_realtime_ns;
  h.crc = Crc32c(0, &h, offsetof(FileHeader, crc));
  return h;
}

std::string CheckFileHeader(const FileHeader& h) {
  if (std::memcmp(h.magic, kFileMagic, sizeof(h.magic)) != 0) {
    return "not a gpucap capture (bad magic)";
  }
  if (Crc32c(0, &h, offsetof(FileHeader, crc)) != h.crc) {
    return "capture header damaged (checksum mismatch)";
  }
  if (h.header_size != sizeof(FileHeader)) {
    return "capture header has unexpected size " + std::to_string(h.header_size);
  }
  return {};
}

FrameHeader MakeFrameHeader(uint16_t type, uint16_t flags, uint32_t sequence,
                            std::span<const ByteSpan> pieces) {
  FrameHeader h{};
  h.magic = kFrameMagic;
  uint32_t crc = 0;
  size_t length = 0;
  for (const ByteSpan& p : pieces) {
    crc = Crc32c(crc, p.data(), p.size());
    length += p.size();
  }
  h.length = static_cast<uint32_t>(length);
  h.type = type;
  h.flags = flags;
  h.sequence = sequence;
  h.payload_crc = crc;
  h.header_crc = Crc32c(0, &h, offsetof(FrameHeader, header_crc));
  return h;
}

bool FrameHeaderIntact(const FrameHeader& h) {
  return h.magic == kFrameMagic && Crc32c(0, &h, offsetof(FrameHeader, header_crc)) == h.header_crc;
}

Footer MakeFooter(uint64_t trailer_offset) {
  Footer f{};
  f.trailer_offset = trailer_offset;
  std::memcpy(f.magic, kFooterMagic, sizeof(f.magic));
  return f;
}

FlatMessage::FlatMessage(capnp::MessageBuilder& builder) {
  auto segments = builder.getSegmentsForOutput();
  // Segment count - 1, each segment's size in words, padded to a whole word.
  size_t table_words = (segments.size() + 2) / 2;
  table_.assign(table_words * 2, 0);
  table_[0] = static_cast<uint32_t>(segments.size() - 1);
  for (size_t i = 0; i < segments.size(); ++i) {
    table_[i + 1] = static_cast<uint32_t>(segments[i].size());
  }
  pieces_.emplace_back(reinterpret_cast<const uint8_t*>(table_.data()),
                       table_.size() * sizeof(uint32_t));
  bytes_ = pieces_.back().size();
  for (auto seg : segments) {
    pieces_.emplace_back(reinterpret_cast<const uint8_t*>(seg.begin()),
                         seg.size() * sizeof(capnp::word));
    bytes_ += pieces_.back().size();
  }
}

}  // namespace gpucap::format
