#include "framed_capture.h"

#include <capnp/message.h>
#include <lz4.h>

#include <cstring>
#include <fstream>

#include "capture.capnp.h"
#include "crc32c.h"
#include "frame_codec.h"
#include "message_codec.h"

namespace gpucap::format::testing {
namespace {

std::string Lz4(std::string_view in) {
  std::string out(static_cast<size_t>(LZ4_compressBound(static_cast<int>(in.size()))), '\0');
  int n = LZ4_compress_default(in.data(), out.data(), static_cast<int>(in.size()),
                               static_cast<int>(out.size()));
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

}  // namespace

std::string Flatten(capnp::MessageBuilder& builder) {
  FlatMessage flat(builder);
  std::string out;
  for (ByteSpan p : flat.pieces()) out.append(reinterpret_cast<const char*>(p.data()), p.size());
  return out;
}

FramedCapture::FramedCapture() {
  FileHeader h = MakeFileHeader(1'764'000'000'000'000'000);
  bytes_.assign(reinterpret_cast<const char*>(&h), sizeof(h));
}

uint64_t FramedCapture::Frame(uint16_t type, std::string_view payload, uint16_t flags) {
  std::string padded(payload);
  padded.resize((padded.size() + 7) & ~size_t{7}, '\0');
  ByteSpan piece(reinterpret_cast<const uint8_t*>(padded.data()), padded.size());
  FrameHeader h = MakeFrameHeader(type, flags, sequence_++, {&piece, 1});
  uint64_t offset = bytes_.size();
  bytes_.append(reinterpret_cast<const char*>(&h), sizeof(h));
  bytes_.append(padded);
  index_.push_back(IndexEntry{offset, type, static_cast<uint32_t>(padded.size()), 0, 0});
  return offset;
}

std::string EncodeMessages(FrameType type, const std::vector<SmallMessage>& messages) {
  capnp::MallocMessageBuilder builder;
  EncodeBatch(type, messages, &builder);
  return Flatten(builder);
}

uint64_t FramedCapture::Messages(FrameType type, const std::vector<SmallMessage>& messages) {
  return Frame(static_cast<uint16_t>(type), EncodeMessages(type, messages));
}

uint64_t FramedCapture::CompressedMessages(FrameType type, const std::vector<SmallMessage>& messages,
                                           uint32_t declared_size) {
  std::string flat = EncodeMessages(type, messages);
  std::string packed = Lz4(flat);
  uint32_t raw = declared_size != 0 ? declared_size : static_cast<uint32_t>(flat.size());
  uint32_t stored = static_cast<uint32_t>(packed.size());
  std::string payload(8, '\0');
  std::memcpy(payload.data(), &raw, 4);
  std::memcpy(payload.data() + 4, &stored, 4);
  payload += packed;
  return Frame(static_cast<uint16_t>(type), payload, kFrameCompressed);
}

uint64_t FramedCapture::Chunk(const HostileChunk& c) {
  std::string stored = c.compress ? Lz4(c.raw) : c.raw;
  capnp::MallocMessageBuilder builder;
  uint32_t crc = Crc32c(0, c.raw.data(), c.raw.size());
  EncodeChunk({static_cast<schema::Codec>(c.codec),
               c.raw_size >= 0 ? static_cast<uint32_t>(c.raw_size) : static_cast<uint32_t>(c.raw.size()),
               c.good_raw_checksum ? crc : crc ^ 1,
               std::span(reinterpret_cast<const uint8_t*>(stored.data()), stored.size()), &c.info},
              builder.initRoot<schema::ActivityChunk>());
  return Frame(static_cast<uint16_t>(FrameType::kActivityChunk), Flatten(builder));
}

uint64_t FramedCapture::TrailerAndFooter(const Trailer& trailer) {
  capnp::MallocMessageBuilder builder;
  EncodeTrailer(trailer, builder.initRoot<schema::Trailer>());
  uint64_t offset = Frame(static_cast<uint16_t>(FrameType::kTrailer), Flatten(builder));
  Footer f = MakeFooter(offset);
  bytes_.append(reinterpret_cast<const char*>(&f), sizeof(f));
  return offset;
}

Status FramedCapture::Write(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
  out.close();
  if (!out) return Status::IoError(path + ": cannot write the test capture");
  return Status::Ok();
}

size_t Reseal(std::span<uint8_t> file) {
  if (file.size() < sizeof(FileHeader)) return 0;
  FileHeader fh;
  std::memcpy(&fh, file.data(), sizeof(fh));
  fh.crc = Crc32c(0, &fh, offsetof(FileHeader, crc));
  std::memcpy(file.data(), &fh, sizeof(fh));
  uint64_t limit = file.size();
  if (limit >= sizeof(FileHeader) + sizeof(Footer) &&
      std::memcmp(file.data() + limit - sizeof(kFooterMagic), kFooterMagic, sizeof(kFooterMagic)) == 0) {
    limit -= sizeof(Footer);
  }
  size_t frames = 0;
  uint64_t off = sizeof(FileHeader);
  while (off + sizeof(FrameHeader) <= limit) {
    FrameHeader h;
    std::memcpy(&h, file.data() + off, sizeof(h));
    if (h.magic != kFrameMagic) break;  // left as damage for the reader to skip
    uint64_t room = (limit - off - sizeof(FrameHeader)) & ~uint64_t{7};
    if (h.length % 8 != 0 || h.length > room) h.length = static_cast<uint32_t>(std::min<uint64_t>(room, h.length & ~7u));
    const uint8_t* payload = file.data() + off + sizeof(FrameHeader);
    h.payload_crc = Crc32c(0, payload, h.length);
    h.header_crc = Crc32c(0, &h, offsetof(FrameHeader, header_crc));
    std::memcpy(file.data() + off, &h, sizeof(h));
    off += sizeof(FrameHeader) + h.length;
    frames++;
  }
  return frames;
}

}  // namespace gpucap::format::testing
