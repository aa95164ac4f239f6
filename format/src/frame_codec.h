// Encoding and checking of the fixed-size parts of a capture (file header,
// frame header, footer) and the flattening of a Cap'n Proto message into the
// pieces of a frame payload.
#ifndef GPUCAP_FORMAT_FRAME_CODEC_H_
#define GPUCAP_FORMAT_FRAME_CODEC_H_

#include <capnp/message.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpucap/format/frame.h"
#include "gpucap/format/sink.h"

namespace gpucap::format {

FileHeader MakeFileHeader(int64_t created_realtime_ns);
// Empty when the header is fine, else what is wrong with it.
std::string CheckFileHeader(const FileHeader& header);

// A frame header for a payload made of `pieces` (whose total must be a
// multiple of 8).
FrameHeader MakeFrameHeader(uint16_t type, uint16_t flags, uint32_t sequence,
                            std::span<const ByteSpan> pieces);
// Magic and header checksum only; the caller checks the length against its
// bounds and the payload checksum.
bool FrameHeaderIntact(const FrameHeader& header);

Footer MakeFooter(uint64_t trailer_offset);

// A Cap'n Proto message laid out as the standard stream encoding (segment
// table, then segments) without copying the segments.
class FlatMessage {
 public:
  explicit FlatMessage(capnp::MessageBuilder& builder);
  std::span<const ByteSpan> pieces() const { return pieces_; }
  size_t bytes() const { return bytes_; }

 private:
  std::vector<uint32_t> table_;
  std::vector<ByteSpan> pieces_;
  size_t bytes_ = 0;
};

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_FRAME_CODEC_H_
