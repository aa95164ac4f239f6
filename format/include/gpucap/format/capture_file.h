// Reads a capture's frames from a memory mapping, without loading the file.
// A CaptureFile checks the file header and footer on Open; Scan walks the
// frames in file order, verifying each one, skipping and reporting damage and
// resynchronising after it; FrameAt reads one frame found through the
// trailer's index.
#ifndef GPUCAP_FORMAT_CAPTURE_FILE_H_
#define GPUCAP_FORMAT_CAPTURE_FILE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpucap/format/frame.h"
#include "gpucap/format/model.h"
#include "gpucap/status.h"

namespace gpucap::format {

struct ReadOptions {
  uint32_t max_frame_payload = kMaxFramePayload;
  uint32_t max_chunk_raw = kMaxRawChunk;
  // Cap'n Proto: words a reader may traverse per payload word (guards against
  // messages whose pointers alias to look far larger than they are).
  uint32_t traversal_factor = 8;
  int nesting_limit = 16;
  bool use_trailer = true;
};

// One intact frame. `payload` points into the mapping (or, for compressed
// frames, at the compressed bytes: see DecodeMessages).
struct FrameRef {
  uint64_t offset = 0;  // of the frame header
  uint16_t type = 0;
  uint16_t flags = 0;
  uint32_t sequence = 0;
  uint32_t length = 0;
  const uint8_t* payload = nullptr;
  bool verified = true;  // payload checksum checked
  uint64_t end() const { return offset + sizeof(FrameHeader) + length; }
};

enum class DamageKind {
  kBadFrameHeader,      // bytes that are not a valid frame header: skipped to the next one
  kBadPayload,          // header fine, payload checksum wrong: frame skipped
  kUndecodable,         // checksum fine, message does not decode: frame skipped
  kTruncatedTail,       // the file ends inside a frame: the tail is lost
};
const char* DamageKindName(DamageKind kind);

struct Damage {
  DamageKind kind = DamageKind::kBadFrameHeader;
  uint64_t offset = 0;      // where the damage starts
  uint64_t bytes = 0;       // bytes skipped
  uint16_t frame_type = 0;  // 0 when the header itself is bad
  std::string detail;
};

struct ScanReport {
  uint64_t file_bytes = 0;
  uint64_t frames = 0;                         // intact frames visited
  std::map<uint16_t, uint64_t> frames_by_type;
  std::map<uint16_t, uint64_t> unknown_types;  // intact frames of types this reader does not know
  std::vector<Damage> damage;
  uint64_t tail_bytes_lost = 0;  // bytes after the last intact frame that form none (also in damage)
  uint64_t sequence_gaps = 0;                  // frames missing from the sequence numbering
  bool has_trailer = false;
  // Why a trailer that decoded was not used (its index omits or misnames
  // frames): the file was scanned instead. Empty: no such trailer.
  std::string index_problem;

  bool clean() const { return damage.empty() && sequence_gaps == 0 && index_problem.empty(); }
  // Lines for a person: damage with offsets, lost bytes, unknown types.
  std::vector<std::string> Describe(const std::string& path) const;
};

// "-" as a capture's path: standard input. A regular file on it
// (`< capture`) is mapped as it is; anything else (a pipe) is first copied
// into an unlinked temporary file in $TMPDIR, once per process, of at most
// kStandardInputLimit bytes (GPUCAP_STDIN_LIMIT, in bytes, sets another).
inline constexpr const char* kStandardInput = "-";
inline constexpr uint64_t kStandardInputLimit = 64ull << 30;
// A descriptor of standard input's file (see above), the caller's to close.
Result<int> OpenStandardInput();

class CaptureFile {
 public:
  // Maps and checks the file: magic, header checksum, major version. A file
  // whose header is intact but whose major version is newer is refused.
  static Result<std::unique_ptr<CaptureFile>> Open(const std::string& path,
                                                   const ReadOptions& options = {});
  ~CaptureFile();

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  const FileHeader& header() const { return header_; }
  const ReadOptions& options() const { return options_; }
  std::span<const uint8_t> bytes() const { return {data_, static_cast<size_t>(size_)}; }

  // Visits every intact frame in file order, known types and unknown, until
  // `visit` returns false. Damaged frames are reported, never visited.
  ScanReport Scan(const std::function<bool(const FrameRef&)>& visit) const;

  // Reads the frame at `offset`, checking its header and, unless told not
  // to, its payload checksum.
  Result<FrameRef> FrameAt(uint64_t offset, bool verify_payload = true) const;

  // The trailer, when the file was closed cleanly and its footer and trailer
  // frame are intact.
  const Trailer* trailer() const { return trailer_ ? &*trailer_ : nullptr; }
  uint64_t trailer_offset() const { return trailer_offset_; }

 private:
  CaptureFile() = default;
  // Checks the header at `offset`; returns its payload length or an error.
  Status CheckHeader(uint64_t offset, FrameHeader* out) const;
  void LoadTrailer();

  std::string path_;
  ReadOptions options_;
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  FileHeader header_{};
  std::optional<Trailer> trailer_;
  uint64_t trailer_offset_ = 0;
  std::string index_problem_;  // see ScanReport::index_problem
};

// Decoding of intact frames. Errors name the file and the frame's offset.

// Any frame type except kActivityChunk: its messages, appended to `out`.
Status DecodeMessages(const CaptureFile& file, const FrameRef& frame,
                      std::vector<SmallMessage>* out);
Result<Trailer> DecodeTrailer(const CaptureFile& file, const FrameRef& frame);

// An activity chunk: its metadata, and its stored bytes inside the mapping.
struct ChunkView {
  uint64_t frame_offset = 0;
  uint32_t sequence = 0;
  ChunkInfo info;
  Codec codec = Codec::kNone;
  uint32_t raw_checksum = 0;
  std::span<const uint8_t> stored;
  bool verified = true;  // frame checksum already checked
};
Result<ChunkView> DecodeChunk(const CaptureFile& file, const FrameRef& frame);
// Restores the CUPTI bytes of a chunk into `raw` (resized to info.raw_size,
// 8-byte aligned storage): checks the frame checksum if that was not done
// yet, the sizes against the bounds before any work, the raw checksum after.
Status DecompressChunk(const CaptureFile& file, const ChunkView& chunk,
                       std::vector<uint64_t>* raw);

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_CAPTURE_FILE_H_
