// Translation between the plain model (model.h) and the Cap'n Proto schema
// (capture.capnp). Encoding cannot fail; decoding may throw kj::Exception on a
// malformed message, which the callers in this library turn into a Status.
#ifndef GPUCAP_FORMAT_MESSAGE_CODEC_H_
#define GPUCAP_FORMAT_MESSAGE_CODEC_H_

#include <capnp/message.h>

#include <cstdint>
#include <span>
#include <vector>

#include "capture.capnp.h"
#include "gpucap/format/frame.h"
#include "gpucap/format/model.h"

namespace gpucap::format {

// The frame type a small message is written under.
FrameType FrameTypeOf(const SmallMessage& message);

// Builds one frame's message from messages that all share `type`.
void EncodeBatch(FrameType type, const std::vector<SmallMessage>& batch,
                 capnp::MessageBuilder* builder);

// Appends the messages of a non-chunk frame of `type`.
void DecodeBatch(FrameType type, capnp::MessageReader* reader, std::vector<SmallMessage>* out);

void EncodeStats(const RecorderStats& stats, schema::Stats::Builder b);
RecorderStats DecodeStats(schema::Stats::Reader r);
void EncodeTrailer(const Trailer& trailer, schema::Trailer::Builder b);
Trailer DecodeTrailerMessage(schema::Trailer::Reader r);

// An activity chunk's message: the payload as stored (under `codec`), what
// it decodes to (raw_size bytes whose CRC32C is raw_checksum), and the
// chunk's summary. The writer and the test framer (which writes wrong sizes
// and checksums on purpose) both encode chunks with it.
struct ChunkMessage {
  schema::Codec codec;
  uint32_t raw_size;
  uint32_t raw_checksum;
  std::span<const uint8_t> payload;
  const ChunkInfo* info;
};
void EncodeChunk(const ChunkMessage& m, schema::ActivityChunk::Builder chunk);

// Bytes a message adds to a batch, roughly: used to size batches.
size_t ApproxEncodedSize(const SmallMessage& message);

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_MESSAGE_CODEC_H_
