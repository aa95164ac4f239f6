// Captures made byte by byte, with valid checksums around arbitrary
// contents: what a damaged disk, another machine or a future recorder could
// hand the reader. The frame layer's checks all pass, so every hostile byte
// reaches the decoder, the join and the renderers. Tests build regression
// cases with it; the fuzzer reseals mutated files with Reseal().
#ifndef GPUCAP_FORMAT_TESTING_FRAMED_CAPTURE_H_
#define GPUCAP_FORMAT_TESTING_FRAMED_CAPTURE_H_

#include <capnp/message.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpucap/format/frame.h"
#include "gpucap/format/model.h"
#include "gpucap/status.h"

namespace gpucap::format::testing {

// An activity chunk as written, every field under the test's control.
struct HostileChunk {
  ChunkInfo info;          // counts, sizes and times as they will be claimed
  std::string raw;         // the CUPTI bytes
  uint16_t codec = 0;      // 0 none, 1 LZ4; anything else is unknown to readers
  bool compress = false;   // store `raw` LZ4-compressed (codec should then be 1)
  int64_t raw_size = -1;   // declared raw size; -1: raw.size()
  bool good_raw_checksum = true;
};

class FramedCapture {
 public:
  FramedCapture();  // starts with a valid file header

  // One frame around `payload` (zero-padded to 8 bytes) with a correct header
  // and payload checksum; returns its offset. Sequence numbers count up.
  uint64_t Frame(uint16_t type, std::string_view payload, uint16_t flags = 0);
  // A frame of `type` holding `messages`, encoded as the writer encodes them.
  uint64_t Messages(FrameType type, const std::vector<SmallMessage>& messages);
  // The same frame LZ4-compressed, claiming `declared_size` decompressed bytes
  // (0: the true size).
  uint64_t CompressedMessages(FrameType type, const std::vector<SmallMessage>& messages,
                              uint32_t declared_size = 0);
  uint64_t Chunk(const HostileChunk& chunk);
  // A trailer frame and footer: the file ends here.
  uint64_t TrailerAndFooter(const Trailer& trailer);
  // An index entry for every frame written so far (for TrailerAndFooter).
  std::vector<IndexEntry> Index() const { return index_; }

  const std::string& bytes() const { return bytes_; }
  Status Write(const std::string& path) const;

 private:
  std::string bytes_;
  uint32_t sequence_ = 0;
  std::vector<IndexEntry> index_;
};

// The bytes of a Cap'n Proto stream message (segment table and segments) for
// `messages` of `type`, as Messages() frames them.
std::string EncodeMessages(FrameType type, const std::vector<SmallMessage>& messages);

// A message built by the test with the schema (capture.capnp.h), flattened
// into the stream encoding a frame payload holds.
std::string Flatten(capnp::MessageBuilder& builder);

// Recomputes the file header's and every frame header's checksums, and every
// payload's, walking frames by their lengths from the file header; a length
// that runs past the end is cut to what remains. Mutated bytes then pass the
// frame layer. Returns the number of frames resealed.
size_t Reseal(std::span<uint8_t> file);

}  // namespace gpucap::format::testing

#endif  // GPUCAP_FORMAT_TESTING_FRAMED_CAPTURE_H_
