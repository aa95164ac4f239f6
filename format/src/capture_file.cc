#include "gpucap/format/capture_file.h"

#include <capnp/serialize.h>
#include <fcntl.h>
#include <kj/exception.h>
#include <lz4.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "capture.capnp.h"
#include "crc32c.h"
#include "frame_codec.h"
#include "gpucap/format/output_file.h"
#include "message_codec.h"

namespace gpucap::format {
namespace {

std::string At(const std::string& path, uint64_t offset) {
  return path + ": offset " + std::to_string(offset);
}

std::string FrameName(uint16_t type) {
  return std::string(FrameTypeName(type)) + " frame (type " + std::to_string(type) + ")";
}

capnp::ReaderOptions MessageOptions(const ReadOptions& o, size_t bytes) {
  capnp::ReaderOptions r;
  r.traversalLimitInWords = (bytes / 8 + 64) * o.traversal_factor;
  r.nestingLimit = o.nesting_limit;
  return r;
}

// The Cap'n Proto message of a non-chunk frame, decompressed if needed.
// Holds the decompressed words as long as the reader lives.
class FrameMessage {
 public:
  Status Open(const CaptureFile& file, const FrameRef& frame) {
    const uint8_t* data = frame.payload;
    size_t size = frame.length;
    if (frame.flags & kFrameCompressed) {
      if (size < 8) return Corrupt(file, frame, "compressed payload shorter than its header");
      uint32_t raw_size, stored;
      std::memcpy(&raw_size, data, 4);
      std::memcpy(&stored, data + 4, 4);
      if (stored > size - 8) {
        return Corrupt(file, frame, "compressed size " + std::to_string(stored) +
                                        " exceeds the payload");
      }
      if (raw_size == 0 || raw_size % 8 != 0 || raw_size > file.options().max_frame_payload) {
        return Corrupt(file, frame, "declared message size " + std::to_string(raw_size) +
                                        " is not a plausible message size");
      }
      words_.resize(raw_size / 8);
      int n = LZ4_decompress_safe(reinterpret_cast<const char*>(data + 8),
                                  reinterpret_cast<char*>(words_.data()), static_cast<int>(stored),
                                  static_cast<int>(raw_size));
      if (n != static_cast<int>(raw_size)) {
        return Corrupt(file, frame, "compressed message does not decompress to its declared size");
      }
      data = reinterpret_cast<const uint8_t*>(words_.data());
      size = raw_size;
    }
    if (size % 8 != 0 || reinterpret_cast<uintptr_t>(data) % 8 != 0) {
      return Corrupt(file, frame, "message is not word-aligned");
    }
    try {
      reader_.emplace(kj::ArrayPtr<const capnp::word>(reinterpret_cast<const capnp::word*>(data),
                                                      size / 8),
                      MessageOptions(file.options(), size));
    } catch (const kj::Exception& e) {
      return Corrupt(file, frame, std::string("message does not decode: ") + e.getDescription().cStr());
    }
    return Status::Ok();
  }

  capnp::MessageReader* reader() { return &*reader_; }

  static Status Corrupt(const CaptureFile& file, const FrameRef& frame, const std::string& what) {
    return Status::Corrupt(At(file.path(), frame.offset) + ": " + FrameName(frame.type) + ": " + what);
  }

 private:
  std::vector<uint64_t> words_;  // capnp::word is not copyable: hold plain words
  std::optional<capnp::FlatArrayMessageReader> reader_;
};

// Standard input as a file that can be mapped: a copy of descriptor 0
// when it is a regular file (`< capture`), else (a pipe) an unlinked
// temporary file in $TMPDIR it is copied into, at most
// StandardInputLimit() bytes. Made once per process; every open of "-"
// gets its own descriptor of it.
std::mutex stdin_mu;
int stdin_fd = -1;

uint64_t StandardInputLimit() {
  const char* limit = std::getenv("GPUCAP_STDIN_LIMIT");
  if (limit != nullptr && *limit != '\0') {
    char* end = nullptr;
    unsigned long long v = std::strtoull(limit, &end, 10);
    if (end != nullptr && *end == '\0') return v;
  }
  return kStandardInputLimit;
}

Result<int> SpoolStandardInput() {
  struct stat st;
  if (fstat(0, &st) != 0) return Status::NotFound(std::string("standard input: ") + std::strerror(errno));
  if (S_ISREG(st.st_mode)) {
    int fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) return Status::IoError(std::string("standard input: ") + std::strerror(errno));
    return fd;
  }
  const char* dir = std::getenv("TMPDIR");
  std::string name = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/gpucap-stdin-XXXXXX";
  int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return Status::IoError(name + ": cannot create a copy of standard input: " + std::strerror(errno));
  unlink(name.c_str());  // gone from the folder at once: nothing to clean up
  uint64_t limit = StandardInputLimit(), copied = 0;
  std::unique_ptr<char[]> buf(new char[1 << 20]);
  for (;;) {
    ssize_t n = read(0, buf.get(), 1 << 20);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return Status::IoError(std::string("standard input: read failed: ") + std::strerror(err));
    }
    if (n == 0) break;
    copied += static_cast<uint64_t>(n);
    if (copied > limit) {
      close(fd);
      return Status::ResourceExhausted("standard input: more than " + std::to_string(limit) +
                                       " bytes; pass the capture by name, or raise GPUCAP_STDIN_LIMIT (bytes)");
    }
    for (ssize_t done = 0; done < n;) {
      ssize_t w = write(fd, buf.get() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        int err = w < 0 ? errno : ENOSPC;
        close(fd);
        return Status::IoError(name + ": copying standard input failed: " + std::strerror(err));
      }
      done += w;
    }
  }
  return fd;
}

}  // namespace

Result<int> OpenStandardInput() {
  std::lock_guard<std::mutex> lock(stdin_mu);
  if (stdin_fd < 0) {
    auto fd = SpoolStandardInput();
    if (!fd.ok()) return fd.status();
    stdin_fd = *fd;
  }
  int fd = fcntl(stdin_fd, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) return Status::IoError(std::string("standard input: ") + std::strerror(errno));
  return fd;
}

const char* DamageKindName(DamageKind kind) {
  switch (kind) {
    case DamageKind::kBadFrameHeader: return "bad frame header";
    case DamageKind::kBadPayload: return "payload checksum mismatch";
    case DamageKind::kUndecodable: return "undecodable message";
    case DamageKind::kTruncatedTail: return "file ends without a complete frame";
  }
  return "damage";
}

std::vector<std::string> ScanReport::Describe(const std::string& path) const {
  std::vector<std::string> lines;
  for (const Damage& d : damage) {
    std::string line = At(path, d.offset) + ": " + DamageKindName(d.kind);
    if (d.frame_type != 0) line += " in " + FrameName(d.frame_type);
    line += ", " + std::to_string(d.bytes) + " bytes skipped";
    if (!d.detail.empty()) line += " (" + d.detail + ")";
    lines.push_back(std::move(line));
  }
  if (!index_problem.empty()) {
    lines.push_back(path + ": the trailer's index cannot be trusted (" + index_problem +
                    "): every frame was read in file order instead");
  }
  if (sequence_gaps > 0) {
    lines.push_back(path + ": " + std::to_string(sequence_gaps) +
                    " frames missing from the sequence numbering");
  }
  for (auto [type, count] : unknown_types) {
    lines.push_back(path + ": skipped " + std::to_string(count) + " frames of unknown type " +
                    std::to_string(type) + " (written by a newer gpucap?)");
  }
  return lines;
}

Result<std::unique_ptr<CaptureFile>> CaptureFile::Open(const std::string& path,
                                                       const ReadOptions& options) {
  int fd = -1;
  if (path == kStandardInput) {
    auto in = OpenStandardInput();
    if (!in.ok()) return in.status();
    fd = *in;
  } else {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
    // below as not a regular file.
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  }
  if (fd < 0) return Status::NotFound(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return Status::IoError(path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return Status::InvalidArgument(path + ": not a regular file");
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    close(fd);
    return Status::Corrupt(path + ": offset 0: empty file, not a gpucap capture");
  }
  if (size < sizeof(FileHeader)) {
    close(fd);
    return Status::Corrupt(At(path, 0) + ": " + std::to_string(size) +
                           " bytes, too short for a capture header (" +
                           std::to_string(sizeof(FileHeader)) + " bytes)");
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) {
    int err = errno;
    close(fd);
    return Status::IoError(path + ": cannot map: " + std::strerror(err));
  }
  std::unique_ptr<CaptureFile> file(new CaptureFile());
  file->path_ = path;
  file->options_ = options;
  file->fd_ = fd;
  RegisterInput(fd);  // while open, no output of this process may replace it
  file->data_ = static_cast<const uint8_t*>(map);
  file->size_ = size;
  std::memcpy(&file->header_, file->data_, sizeof(FileHeader));
  std::string problem = CheckFileHeader(file->header_);
  if (!problem.empty()) return Status::Corrupt(At(path, 0) + ": " + problem);
  if (file->header_.major > kFormatMajor) {
    return Status::Unsupported(
        At(path, 8) + ": format version " + std::to_string(file->header_.major) + "." +
        std::to_string(file->header_.minor) + " is newer than this reader (" +
        std::to_string(kFormatMajor) + ".x); read it with a newer gpucap");
  }
  if (file->header_.major == 0) {
    return Status::Corrupt(At(path, 8) + ": format major version 0 does not exist");
  }
  madvise(map, size, MADV_SEQUENTIAL);
  if (options.use_trailer) file->LoadTrailer();
  return file;
}

CaptureFile::~CaptureFile() {
  if (data_) munmap(const_cast<uint8_t*>(data_), size_);
  if (fd_ >= 0) {
    UnregisterInput(fd_);
    close(fd_);
  }
}

Status CaptureFile::CheckHeader(uint64_t offset, FrameHeader* out) const {
  if (offset % 8 != 0) return Status::Corrupt(At(path_, offset) + ": frame offset not aligned");
  // Not offset + sizeof(FrameHeader): an offset near 2^64 (a trailer's
  // index entry) wraps it past the check.
  if (offset > size_ || size_ - offset < sizeof(FrameHeader)) {
    return Status::Corrupt(At(path_, offset) + ": frame header runs past the end of the file");
  }
  std::memcpy(out, data_ + offset, sizeof(FrameHeader));
  if (!FrameHeaderIntact(*out)) {
    return Status::Corrupt(At(path_, offset) + ": no intact frame header here");
  }
  if (out->length > options_.max_frame_payload) {
    return Status::Corrupt(At(path_, offset) + ": " + FrameName(out->type) + " claims " +
                           std::to_string(out->length) + " payload bytes, over the limit of " +
                           std::to_string(options_.max_frame_payload));
  }
  if (out->length % 8 != 0) {
    return Status::Corrupt(At(path_, offset) + ": frame length " + std::to_string(out->length) +
                           " is not a multiple of 8");
  }
  return Status::Ok();
}

Result<FrameRef> CaptureFile::FrameAt(uint64_t offset, bool verify_payload) const {
  FrameHeader h;
  GPUCAP_RETURN_IF_ERROR(CheckHeader(offset, &h));
  uint64_t end = offset + sizeof(FrameHeader) + h.length;
  if (end > size_) {
    return Status::Corrupt(At(path_, offset) + ": " + FrameName(h.type) + " of " +
                           std::to_string(h.length) + " bytes runs past the end of the file (" +
                           std::to_string(size_) + " bytes)");
  }
  const uint8_t* payload = data_ + offset + sizeof(FrameHeader);
  if (verify_payload && Crc32c(0, payload, h.length) != h.payload_crc) {
    return Status::Corrupt(At(path_, offset) + ": " + FrameName(h.type) +
                           ": payload checksum mismatch");
  }
  return FrameRef{offset, h.type, h.flags, h.sequence, h.length, payload, verify_payload};
}

void CaptureFile::LoadTrailer() {
  if (size_ < sizeof(FileHeader) + sizeof(FrameHeader) + sizeof(Footer)) return;
  Footer footer;
  std::memcpy(&footer, data_ + size_ - sizeof(Footer), sizeof(Footer));
  if (std::memcmp(footer.magic, kFooterMagic, sizeof(footer.magic)) != 0) return;
  if (footer.trailer_offset < sizeof(FileHeader) ||
      footer.trailer_offset > size_ - sizeof(Footer) - sizeof(FrameHeader)) {
    return;
  }
  auto frame = FrameAt(footer.trailer_offset);
  if (!frame.ok() || frame->type != static_cast<uint16_t>(FrameType::kTrailer) ||
      frame->end() != size_ - sizeof(Footer)) {
    return;
  }
  auto trailer = DecodeTrailer(*this, *frame);
  if (!trailer.ok()) return;
  // Index entries must describe the file's frames: in file order, each after
  // the one before (so no frame is named twice and read again per entry),
  // inside the file, and agreeing with the intact header found there. One
  // that does not means the trailer cannot be trusted: the reader scans.
  // The writer indexes every frame, back to back: a gap is frames the index
  // would hide, so the file is read frame by frame instead, and the report
  // says why.
  uint64_t next = sizeof(FileHeader);
  for (const IndexEntry& e : trailer->index) {
    FrameHeader h;
    if (e.offset < next || e.offset % 8 != 0 || e.offset > footer.trailer_offset ||
        footer.trailer_offset - e.offset < sizeof(FrameHeader) + uint64_t{e.length} ||
        !CheckHeader(e.offset, &h).ok() || h.type != e.type || h.length != e.length) {
      index_problem_ = "its entry for offset " + std::to_string(e.offset) +
                       " does not name the next intact frame of the file";
      return;
    }
    if (e.offset != next) {
      index_problem_ = "it omits the " + std::to_string(e.offset - next) + " bytes at offset " + std::to_string(next);
      return;
    }
    next = e.offset + sizeof(FrameHeader) + e.length;
  }
  if (next != footer.trailer_offset) {
    index_problem_ = "it omits the " + std::to_string(footer.trailer_offset - next) + " bytes at offset " +
                     std::to_string(next) + ", before the trailer";
    return;
  }
  trailer_ = std::move(trailer).value();
  trailer_offset_ = footer.trailer_offset;
}

ScanReport CaptureFile::Scan(const std::function<bool(const FrameRef&)>& visit) const {
  ScanReport report;
  report.file_bytes = size_;
  report.index_problem = index_problem_;
  report.has_trailer = trailer_.has_value();
  // A clean file ends with a footer; frames stop where it starts.
  uint64_t limit = size_;
  if (trailer_) limit = size_ - sizeof(Footer);
  uint64_t off = sizeof(FileHeader);
  uint32_t expected_seq = 0;
  auto find_next = [&](uint64_t from) -> uint64_t {
    FrameHeader h;
    for (uint64_t at = (from + 7) & ~uint64_t{7}; at + sizeof(FrameHeader) <= limit; at += 8) {
      uint32_t magic;
      std::memcpy(&magic, data_ + at, 4);
      if (magic == kFrameMagic && CheckHeader(at, &h).ok()) return at;
    }
    return limit;
  };
  auto lose_tail = [&](uint64_t at, std::string why) {
    report.tail_bytes_lost = limit - at;
    report.damage.push_back(
        Damage{DamageKind::kTruncatedTail, at, limit - at, 0, std::move(why)});
  };
  while (off < limit) {
    if (limit - off == sizeof(Footer) &&
        std::memcmp(data_ + off + offsetof(Footer, magic), kFooterMagic, sizeof(kFooterMagic)) == 0) {
      break;  // the footer of a cleanly closed file, read without its trailer
    }
    if (off + sizeof(FrameHeader) > limit) {
      lose_tail(off, "the file ends inside a frame header");
      break;
    }
    FrameHeader h;
    Status header_ok = CheckHeader(off, &h);
    if (!header_ok.ok()) {
      uint64_t next = find_next(off + 8);
      if (next >= limit) {
        // Nothing intact follows: the file was cut inside this frame's header,
        // or everything after here is damaged.
        lose_tail(off, header_ok.message());
        break;
      }
      report.damage.push_back(
          Damage{DamageKind::kBadFrameHeader, off, next - off, 0, header_ok.message()});
      off = next;
      continue;
    }
    uint64_t end = off + sizeof(FrameHeader) + h.length;
    if (end > limit) {
      // An intact header whose payload the file does not hold: a cut file.
      lose_tail(off, std::string(FrameTypeName(h.type)) + " frame of " +
                         std::to_string(h.length) + " payload bytes, file holds " +
                         std::to_string(limit - off - sizeof(FrameHeader)));
      break;
    }
    if (h.sequence != expected_seq) {
      if (h.sequence > expected_seq) report.sequence_gaps += h.sequence - expected_seq;
    }
    expected_seq = h.sequence + 1;
    const uint8_t* payload = data_ + off + sizeof(FrameHeader);
    if (Crc32c(0, payload, h.length) != h.payload_crc) {
      report.damage.push_back(Damage{DamageKind::kBadPayload, off, end - off, h.type,
                                     "sequence " + std::to_string(h.sequence)});
      off = end;
      continue;
    }
    FrameRef frame{off, h.type, h.flags, h.sequence, h.length, payload, true};
    off = end;
    if (!IsKnownFrameType(h.type)) {
      report.unknown_types[h.type]++;
      continue;
    }
    report.frames++;
    report.frames_by_type[h.type]++;
    if (!visit(frame)) break;
  }
  return report;
}

Status DecodeMessages(const CaptureFile& file, const FrameRef& frame,
                      std::vector<SmallMessage>* out) {
  auto type = static_cast<FrameType>(frame.type);
  if (!IsKnownFrameType(frame.type) || type == FrameType::kActivityChunk ||
      type == FrameType::kTrailer) {
    return Status::InvalidArgument(At(file.path(), frame.offset) + ": " + FrameName(frame.type) +
                                   " holds no small messages");
  }
  FrameMessage message;
  GPUCAP_RETURN_IF_ERROR(message.Open(file, frame));
  size_t before = out->size();
  try {
    DecodeBatch(type, message.reader(), out);
  } catch (const kj::Exception& e) {
    out->resize(before);
    return FrameMessage::Corrupt(file, frame,
                                 std::string("message does not decode: ") + e.getDescription().cStr());
  }
  return Status::Ok();
}

Result<Trailer> DecodeTrailer(const CaptureFile& file, const FrameRef& frame) {
  if (frame.type != static_cast<uint16_t>(FrameType::kTrailer)) {
    return Status::InvalidArgument(At(file.path(), frame.offset) + ": not a trailer frame");
  }
  FrameMessage message;
  GPUCAP_RETURN_IF_ERROR(message.Open(file, frame));
  try {
    return DecodeTrailerMessage(message.reader()->getRoot<schema::Trailer>());
  } catch (const kj::Exception& e) {
    return FrameMessage::Corrupt(file, frame,
                                 std::string("trailer does not decode: ") + e.getDescription().cStr());
  }
}

Result<ChunkView> DecodeChunk(const CaptureFile& file, const FrameRef& frame) {
  if (frame.type != static_cast<uint16_t>(FrameType::kActivityChunk) ||
      (frame.flags & kFrameCompressed)) {
    return Status::InvalidArgument(At(file.path(), frame.offset) + ": not an activity chunk frame");
  }
  FrameMessage message;
  GPUCAP_RETURN_IF_ERROR(message.Open(file, frame));
  try {
    auto r = message.reader()->getRoot<schema::ActivityChunk>();
    ChunkView v;
    v.frame_offset = frame.offset;
    v.sequence = frame.sequence;
    v.verified = frame.verified;
    auto codec = r.getCodec();
    if (codec != schema::Codec::NONE && codec != schema::Codec::LZ4_BLOCK) {
      return FrameMessage::Corrupt(file, frame,
                                   "unknown codec " + std::to_string(static_cast<int>(codec)));
    }
    v.codec = codec == schema::Codec::LZ4_BLOCK ? Codec::kLz4Block : Codec::kNone;
    v.raw_checksum = r.getRawChecksum();
    auto payload = r.getPayload();
    v.stored = std::span<const uint8_t>(payload.begin(), payload.size());
    v.info.raw_size = r.getRawSize();
    v.info.record_count = r.getRecordCount();
    for (auto k : r.getKindCounts()) v.info.kind_counts.push_back({k.getKind(), k.getCount()});
    v.info.min_start_ns = r.getMinStartNs();
    v.info.max_start_ns = r.getMaxStartNs();
    v.info.max_end_ns = r.getMaxEndNs();
    v.info.context_id = r.getContextId();
    v.info.stream_id = r.getStreamId();
    for (auto ks : r.getRecordSizes()) v.info.record_sizes.push_back({ks.getKind(), ks.getSize()});
    // The declared size must be one the stored bytes can restore to, before
    // anyone allocates it: equal for stored chunks, at most LZ4's 255x.
    uint64_t raw_size = v.info.raw_size, stored = v.stored.size();
    if (raw_size > file.options().max_chunk_raw ||
        (v.codec == Codec::kNone && raw_size != stored) ||
        (v.codec == Codec::kLz4Block && raw_size > stored * 255 + 16)) {
      return FrameMessage::Corrupt(file, frame, "declared raw size " + std::to_string(raw_size) +
                                                    " impossible for " + std::to_string(stored) +
                                                    " stored bytes");
    }
    // The payload bytes live in the mapping; check they do.
    auto bytes = file.bytes();
    if (v.stored.data() < bytes.data() || v.stored.data() + v.stored.size() > bytes.data() + bytes.size()) {
      return FrameMessage::Corrupt(file, frame, "payload outside the file");
    }
    return v;
  } catch (const kj::Exception& e) {
    return FrameMessage::Corrupt(file, frame,
                                 std::string("chunk does not decode: ") + e.getDescription().cStr());
  }
}

Status DecompressChunk(const CaptureFile& file, const ChunkView& chunk, std::vector<uint64_t>* raw) {
  auto fail = [&](const std::string& what) {
    return Status::Corrupt(At(file.path(), chunk.frame_offset) + ": activity chunk: " + what);
  };
  if (!chunk.verified) {
    auto frame = file.FrameAt(chunk.frame_offset, /*verify_payload=*/true);
    if (!frame.ok()) return frame.status();
  }
  uint32_t raw_size = chunk.info.raw_size;
  if (raw_size > file.options().max_chunk_raw) {
    return fail("declared size " + std::to_string(raw_size) + " over the limit of " +
                std::to_string(file.options().max_chunk_raw));
  }
  // Every byte up to raw_size is written below; only the last word's tail
  // needs zeroing. (assign() zeroed the whole buffer first: 3% of a build.)
  raw->resize((raw_size + 7) / 8);
  if (!raw->empty()) raw->back() = 0;
  auto* out = reinterpret_cast<char*>(raw->data());
  if (chunk.codec == Codec::kNone) {
    if (chunk.stored.size() != raw_size) return fail("stored size differs from declared size");
    std::memcpy(out, chunk.stored.data(), raw_size);
  } else {
    // LZ4 expands at most 255x: a larger claim is a lie, refused before work.
    if (static_cast<uint64_t>(raw_size) > static_cast<uint64_t>(chunk.stored.size()) * 255 + 16) {
      return fail("declared size " + std::to_string(raw_size) + " impossible for " +
                  std::to_string(chunk.stored.size()) + " compressed bytes");
    }
    int n = LZ4_decompress_safe(reinterpret_cast<const char*>(chunk.stored.data()), out,
                                static_cast<int>(chunk.stored.size()), static_cast<int>(raw_size));
    if (n != static_cast<int>(raw_size)) return fail("payload does not decompress to its declared size");
  }
  if (Crc32c(0, out, raw_size) != chunk.raw_checksum) return fail("raw checksum mismatch");
  return Status::Ok();
}

}  // namespace gpucap::format
